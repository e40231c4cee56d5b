/**
 * The PDF's layout, read back by poppler (pdftotext -bbox gives every word's box): nothing is printed
 * outside the page's margins (the chart's last day label once stuck out), a table that goes on over
 * pages repeats its column names on each, and short columns are not squeezed into wrapping.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { reportPdf } from "../../src/audit/exports/report.render";
import type { Report } from "../../src/audit/exports/report.templates";

const MARGIN = 50;
const COLUMNS = ["Time", "Event", "User", "IP address", "User agent"];

function synthetic(rows: number, days: number): Report {
  const eventsPerDay = Array.from({ length: days }, (_, index) => ({
    day: new Date(Date.UTC(2026, 9, 1 + index)).toISOString().slice(0, 10),
    count: 1 + (index % 5),
  }));
  return {
    title: "Per-user activity report",
    template: "user_activity",
    controls: [{ framework: "HIPAA", id: "§164.312(b)", title: "Audit controls" }],
    period: { from: eventsPerDay[0].day, to: eventsPerDay[days - 1].day },
    filters: { userIds: [], providers: [], eventTypes: [], groupBy: null, columns: [] },
    generatedAt: "2026-11-01T00:00:00.000Z",
    generatedBy: "auditor@example.com",
    totalEvents: rows,
    eventsPerDay,
    tables: [
      {
        title: "Everything they did",
        columns: COLUMNS,
        rows: Array.from({ length: rows }, (_, i) => [
          `2026-10-${String(1 + (i % 28)).padStart(2, "0")}T10:00:00.000Z`,
          "auth.login.success",
          `person${i}@example.com`,
          `198.51.100.${i % 250}`,
          "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
        ]),
        total: rows,
        note: null,
      },
    ],
    checksum: "ab".repeat(32),
  };
}

type Word = { page: number; xMin: number; xMax: number; text: string };

/** Every word of the PDF with its page and horizontal extent, as poppler lays them out. */
function wordsOf(pdf: Buffer): { words: Word[]; pageWidth: number; pages: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-pdf-layout-"));
  try {
    const file = path.join(dir, "report.pdf");
    fs.writeFileSync(file, pdf);
    const html = execFileSync("pdftotext", ["-bbox", file, "-"], { encoding: "utf8" });
    const words: Word[] = [];
    let page = 0;
    let pageWidth = 0;
    for (const line of html.split("\n")) {
      const opened = /<page width="([\d.]+)"/.exec(line);
      if (opened) {
        page += 1;
        pageWidth = Number(opened[1]);
      }
      const word = /<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">(.*)<\/word>/.exec(line);
      if (word) words.push({ page, xMin: Number(word[1]), xMax: Number(word[2]), text: word[3] });
    }
    return { words, pageWidth, pages: page };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("every word stays inside the margins, for periods whose day labels fall in every position", async () => {
  for (const days of [28, 29, 30, 31, 33, 45, 90]) {
    const { words, pageWidth } = wordsOf(await reportPdf(synthetic(3, days)));
    const outside = words.filter((word) => word.xMin < MARGIN - 1 || word.xMax > pageWidth - MARGIN + 1);
    expect({ days, outside }).toEqual({ days, outside: [] });
  }
});

test("a table over several pages repeats its column names on each; times and addresses do not wrap", async () => {
  const { words, pages } = wordsOf(await reportPdf(synthetic(150, 31)));
  expect(pages).toBeGreaterThan(2);
  for (let page = 2; page <= pages; page++) {
    const texts = words.filter((word) => word.page === page).map((word) => word.text);
    expect({ page, header: ["Time", "Event", "User", "IP", "address", "agent"].every((name) => texts.includes(name)) }).toEqual({
      page,
      header: true,
    });
  }
  // Each time is one line: its clock to the right of its date, not under it.
  const sideBySide = words.filter(
    (word, index) => /^2026-10-\d\d$/.test(word.text) && words[index + 1]?.text === "10:00:00" && words[index + 1].xMin > word.xMax,
  );
  expect(sideBySide).toHaveLength(150);
});

test("a column of counts is right-aligned under its name; a column of text stays left-aligned", async () => {
  const report = synthetic(0, 7);
  report.tables = [
    {
      title: "Sign-ins by provider",
      columns: ["Provider", "Successful"],
      rows: [
        ["okta", 7],
        ["google", 93346],
        ["(local)", 311011],
      ],
      total: 3,
      note: null,
    },
  ];
  const { words } = wordsOf(await reportPdf(report));
  const at = (text: string) => words.find((word) => word.text === text)!;
  const rightEdges = ["Successful", "7", "93346", "311011"].map((text) => at(text).xMax);
  expect(Math.max(...rightEdges) - Math.min(...rightEdges)).toBeLessThan(1);
  const leftEdges = ["Provider", "okta", "google", "(local)"].map((text) => at(text).xMin);
  expect(Math.max(...leftEdges) - Math.min(...leftEdges)).toBeLessThan(1);
});
