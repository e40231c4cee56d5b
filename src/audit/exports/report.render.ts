import { csvRecord } from "./export-formats";
import type { Cell, Report, ReportTable } from "./report.templates";

/** The report as JSON: the same content its checksum was computed over, plus the checksum. */
export function reportJson(report: Report): string {
  return JSON.stringify(report, null, 2) + "\n";
}

/**
 * The report as one RFC 4180 table of uniform width: `section, kind, …values`. Kind `meta` rows carry
 * the header (period, filters, generator, checksum), `header` rows a table's column names, `row` rows
 * its data, `note` rows what a table left out. A spreadsheet filters by section and kind.
 */
export function reportCsv(report: Report): string {
  const width = Math.max(2, ...report.tables.map((table) => table.columns.length));
  const pad = (values: Cell[]) => [...values, ...Array<Cell>(Math.max(0, width - values.length)).fill(null)];
  const lines = [csvRecord(["section", "kind", ...Array.from({ length: width }, (_, i) => `c${i + 1}`)])];
  const meta = (key: string, value: Cell) => lines.push(csvRecord(["report", "meta", ...pad([key, value])]));
  for (const [key, value] of headerLines(report)) meta(key, value);
  meta("events per day", report.eventsPerDay.map((day) => `${day.day}=${day.count}`).join(" "));
  for (const table of report.tables) {
    lines.push(csvRecord([table.title, "header", ...pad(table.columns)]));
    for (const row of table.rows) lines.push(csvRecord([table.title, "row", ...pad(row)]));
    if (table.note) lines.push(csvRecord([table.title, "note", ...pad([table.note])]));
  }
  return lines.join("");
}

/** The header every format shows: period, filters, generator and checksum. */
function headerLines(report: Report): Array<[string, string]> {
  const filters = report.filters;
  const lines: Array<[string, string]> = [
    ["title", report.title],
    ["period", `${report.period.from} to ${report.period.to} (UTC, inclusive; all times are UTC)`],
    ["users", filters.userIds.length ? filters.userIds.join(", ") : "all"],
    ["providers", filters.providers.length ? filters.providers.join(", ") : "all"],
  ];
  if (report.template === "custom") {
    lines.push(["event types", filters.eventTypes.length ? filters.eventTypes.join(", ") : "all"]);
    lines.push(["grouped by", filters.groupBy ?? ""], ["columns", filters.columns.join(", ")]);
  }
  lines.push(
    [
      "controls",
      report.controls.length ? report.controls.map((control) => `${control.framework} ${control.id}`).join("; ") : "none (custom)",
    ],
    ["generated", `${report.generatedAt} by ${report.generatedBy}`],
    ["events in scope", String(report.totalEvents)],
    ["checksum", `SHA-256 ${report.checksum}`],
  );
  return lines;
}

const MARGIN = 50;
const FONT = "Helvetica";
const BOLD = "Helvetica-Bold";

/**
 * The report as a PDF (pdfkit's built-in Helvetica, so nothing is loaded at run time): a header with
 * period, filters, generator and checksum, the controls it serves, a bar chart of events per day,
 * one table per section, and "Page n of m" on every page.
 */
export async function reportPdf(report: Report): Promise<Buffer> {
  // Loaded on the first PDF, not at start: pdfkit and its font engine are some 15 MB of every
  // process's memory (an API, a worker, an import), and only a PDF report uses them.
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({
    size: "A4",
    margins: { top: MARGIN, bottom: MARGIN + 10, left: MARGIN, right: MARGIN },
    bufferPages: true,
    info: { Title: report.title, Author: report.generatedBy, Subject: `${report.period.from} to ${report.period.to}` },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });

  doc.font(BOLD).fontSize(18).text(printable(report.title));
  doc.moveDown(0.5);
  for (const [key, value] of headerLines(report).slice(1)) {
    doc
      .font(BOLD)
      .fontSize(9)
      .text(`${capitalise(key)}: `, { continued: true })
      .font(FONT)
      .text(printable(value));
  }
  if (report.controls.length) {
    doc.moveDown(0.7).font(BOLD).fontSize(11).text("Controls served");
    for (const control of report.controls) {
      doc
        .font(FONT)
        .fontSize(9)
        .text(printable(`${control.framework} ${control.id}: ${control.title}`));
    }
  }
  doc.moveDown(0.7).font(BOLD).fontSize(11).text("Events per day");
  drawChart(doc, everyDay(report));
  for (const table of report.tables) drawTable(doc, table);

  const pages = doc.bufferedPageRange();
  for (let index = 0; index < pages.count; index++) {
    doc.switchToPage(pages.start + index);
    // Written inside the bottom margin: lift it so pdfkit does not start a new page for the footer.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc
      .font(FONT)
      .fontSize(8)
      .fillColor("#555555")
      .text(`Page ${index + 1} of ${pages.count}`, MARGIN, doc.page.height - MARGIN + 5, {
        width: doc.page.width - 2 * MARGIN,
        align: "right",
        lineBreak: false,
      });
    doc.text(printable(`${report.title}, ${report.period.from} to ${report.period.to}`), MARGIN, doc.page.height - MARGIN + 5, {
      lineBreak: false,
    });
    doc.page.margins.bottom = bottom;
  }
  doc.end();
  return done;
}

/** Days of the period with their counts, days without events included, so the chart's axis is the calendar. */
function everyDay(report: Report): Array<{ day: string; count: number }> {
  const counts = new Map(report.eventsPerDay.map((day) => [day.day, day.count]));
  const first = Date.parse(`${report.period.from.slice(0, 10)}T00:00:00Z`);
  const last = Date.parse(`${report.period.to.slice(0, 10)}T00:00:00Z`);
  const days: Array<{ day: string; count: number }> = [];
  // A period of more than ten years is drawn from its days with events only: bars would be thinner than a line.
  if (Number.isNaN(first) || Number.isNaN(last) || last - first > 3660 * 86_400_000) return report.eventsPerDay;
  for (let at = first; at <= last; at += 86_400_000) {
    const day = new Date(at).toISOString().slice(0, 10);
    days.push({ day, count: counts.get(day) ?? 0 });
  }
  return days;
}

function drawChart(doc: PDFKit.PDFDocument, days: Array<{ day: string; count: number }>): void {
  const width = doc.page.width - 2 * MARGIN;
  const height = 120;
  if (doc.y + height + 40 > doc.page.height - doc.page.margins.bottom) doc.addPage();
  const top = doc.y + 5;
  const left = MARGIN + 30;
  const plotWidth = width - 30;
  const max = Math.max(1, ...days.map((day) => day.count));
  doc.save().strokeColor("#888888").lineWidth(0.5);
  doc
    .moveTo(left, top)
    .lineTo(left, top + height)
    .lineTo(left + plotWidth, top + height)
    .stroke();
  doc.restore();
  doc.font(FONT).fontSize(7).fillColor("#000000");
  doc.text(String(max), MARGIN, top - 3, { width: 26, align: "right" });
  doc.text("0", MARGIN, top + height - 4, { width: 26, align: "right" });
  if (days.length === 0) {
    doc.text("No events in this period.", left + 10, top + height / 2);
  } else {
    const slot = plotWidth / days.length;
    const barWidth = Math.max(0.5, slot * 0.8);
    days.forEach((day, index) => {
      const barHeight = (day.count / max) * height;
      doc.rect(left + index * slot + (slot - barWidth) / 2, top + height - barHeight, barWidth, barHeight).fill("#3b6ea5");
    });
    doc.fillColor("#000000");
    // First and last day under the axis, and every label that fits between them without touching the last.
    const labelWidth = 40;
    const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(1, Math.floor(plotWidth / 60))));
    const centre = (index: number) => left + index * slot + slot / 2;
    const lastCentre = centre(days.length - 1);
    days.forEach((day, index) => {
      const last = index === days.length - 1;
      if (!last && (index % labelEvery !== 0 || lastCentre - centre(index) < labelWidth + 4)) return;
      // Kept inside the page's margins: the last day's label would otherwise stick out on the right.
      const x = Math.min(centre(index) - labelWidth / 2, MARGIN + width - labelWidth);
      doc.text(day.day, x, top + height + 3, { width: labelWidth, align: "center", lineBreak: false });
    });
  }
  doc.x = MARGIN;
  doc.y = top + height + 18;
}

function drawTable(doc: PDFKit.PDFDocument, table: ReportTable): void {
  const width = doc.page.width - 2 * MARGIN;
  const bottom = () => doc.page.height - doc.page.margins.bottom;
  if (doc.y + 60 > bottom()) doc.addPage();
  doc.x = MARGIN;
  doc
    .moveDown(0.8)
    .font(BOLD)
    .fontSize(11)
    .fillColor("#000000")
    .text(printable(`${table.title} (${table.total})`));
  doc.moveDown(0.2);
  const widths = columnWidths(doc, table, width);
  const lefts = widths.map((_, index) => MARGIN + widths.slice(0, index).reduce((sum, w) => sum + w, 0));
  // Counts read down a column by their last digits: a column of numbers (and its name) is right-aligned.
  const aligns = table.columns.map((_, index) =>
    table.rows.length > 0 && table.rows.every((row) => typeof row[index] === "number") ? ("right" as const) : ("left" as const),
  );
  const rowHeight = (cells: Cell[], font: string) => {
    doc.font(font).fontSize(8);
    return Math.max(...cells.map((cell, index) => doc.heightOfString(printable(cell), { width: (widths[index] ?? width) - 4 }))) + 4;
  };
  const drawRow = (cells: Cell[], font: string) => {
    const height = rowHeight(cells, font);
    if (doc.y + height > bottom()) {
      doc.addPage();
      // A table that goes on over pages repeats its column names, so every page reads on its own.
      if (cells !== table.columns) drawRow(table.columns, BOLD);
    }
    const y = doc.y;
    cells.forEach((cell, index) => {
      doc
        .font(font)
        .fontSize(8)
        .text(printable(cell), (lefts[index] ?? MARGIN) + 2, y + 2, {
          width: (widths[index] ?? width) - 4,
          align: aligns[index] ?? "left",
        });
    });
    doc
      .save()
      .strokeColor("#dddddd")
      .lineWidth(0.5)
      .moveTo(MARGIN, y + height)
      .lineTo(MARGIN + width, y + height)
      .stroke()
      .restore();
    doc.x = MARGIN;
    doc.y = y + height;
  };
  drawRow(table.columns, BOLD);
  if (table.rows.length === 0) drawRow(["None in this period."], FONT);
  for (const row of table.rows) drawRow(row.map(shortTime), FONT);
  if (table.note) {
    doc.moveDown(0.3).font(FONT).fontSize(8).text(printable(table.note), MARGIN);
  }
}

/** Rows measured for the column widths: enough to see what a column holds, without measuring thousands. */
const MEASURED_ROWS = 200;

/**
 * Each column as wide as its longest line (header and the first rows), so short columns (times, counts)
 * do not wrap; when they do not all fit, the narrow ones keep their width and the wide ones share the rest.
 */
function columnWidths(doc: PDFKit.PDFDocument, table: ReportTable, width: number): number[] {
  const count = Math.max(1, table.columns.length);
  const natural = table.columns.map((column, index) => {
    doc.font(BOLD).fontSize(8);
    let widest = doc.widthOfString(printable(column));
    doc.font(FONT).fontSize(8);
    for (const row of table.rows.slice(0, MEASURED_ROWS)) {
      for (const line of printable(shortTime(row[index] ?? null)).split("\n")) widest = Math.max(widest, doc.widthOfString(line));
    }
    return widest + 8;
  });
  if (natural.length === 0) return [width];
  const total = natural.reduce((sum, w) => sum + w, 0);
  if (total <= width) return natural.map((w) => (w / total) * width);
  const widths = new Array<number>(count).fill(0);
  let open = natural.map((_, index) => index);
  let left = width;
  // Columns narrower than an equal share of what is left keep their width, until none is.
  for (;;) {
    const share = left / open.length;
    const narrow = open.filter((index) => natural[index] <= share);
    if (narrow.length === 0) break;
    for (const index of narrow) {
      widths[index] = natural[index];
      left -= natural[index];
    }
    open = open.filter((index) => natural[index] > share);
    if (open.length === 0) return widths;
  }
  const wide = open.reduce((sum, index) => sum + natural[index], 0);
  for (const index of open) widths[index] = (natural[index] / wide) * left;
  return widths;
}

/** A table's ISO 8601 times without the T, milliseconds and Z (the header says times are UTC), so they fit a column. */
function shortTime(cell: Cell): Cell {
  return typeof cell === "string" ? cell.replace(/^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?Z$/, "$1 $2") : cell;
}

/** The built-in fonts cover Windows-1252 only: other characters print as "?" rather than as garbage. */
function printable(value: Cell): string {
  if (value === null || value === undefined) return "";
  return String(value).replace(/[^\x20-\x7e\u00a0-\u00ff\n]/g, "?");
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
