import path from "node:path";
import { ArchiveWriter, writeManifest, type DataSummary } from "../../platform/files/archive-writer";
import type { AuditRepository } from "../log";
import { EXPORT_BATCH_FIELDS, type ExportKey } from "../log";
import { parseFilter, type AuditFilterInput } from "../log";
import type { ExportConfig } from "../../platform/config/config";
import { CopyBinaryDecoder, fieldText } from "../../platform/db/copy-binary";
import { FRAMINGS, LineFramer, type ExportFormat } from "./export-formats";
import type { ExportRecord, ExportRepository } from "./export.repository";
import type { ReportRepository } from "./report.repository";
import { reportCsv, reportJson, reportPdf } from "./report.render";
import { buildReport, type ReportParams } from "./report.templates";

/** Progress is written at most this often while an export runs. */
const PROGRESS_INTERVAL_MS = 500;

export const REPORT_FORMATS = ["pdf", "csv", "json"] as const;
export const EXPORT_COMPRESSIONS = ["gzip", "zip"] as const;
export type ExportCompression = (typeof EXPORT_COMPRESSIONS)[number];
export type ReportFormat = (typeof REPORT_FORMATS)[number];

type Manifest = Record<string, unknown> & { dataSha256: string };
type Written = { rowsWritten: number; fileName: string; fileBytes: number; manifest: Manifest };

/**
 * The worker's part of an export or report: the file, written streamed and checksummed, with its
 * manifest beside it (and inside a zip). What the request was and how it ended is the service's.
 */
export class ExportWriter {
  constructor(
    private readonly exports: ExportRepository,
    private readonly auditEvents: AuditRepository,
    private readonly reports: ReportRepository,
    private readonly settings: ExportConfig,
  ) {}

  async writeEvents(record: ExportRecord): Promise<Written> {
    const { filter, compression = "gzip" } = record.params as { filter: AuditFilterInput; compression?: ExportCompression };
    const query = parseFilter(filter);
    const format = record.format as ExportFormat;
    const framing = FRAMINGS[format];
    const dataName = `audit-export-${record.id}.${framing.extension}`;
    const fileName = compression === "zip" ? `${dataName}.zip` : `${dataName}.gz`;
    const writer = await ArchiveWriter.create(path.join(this.settings.dir, fileName), { compression, entryName: dataName });
    const batchRows = this.settings.batchRows;
    const framer = new LineFramer(framing, EXPORT_BATCH_FIELDS.line);
    let rows = 0;
    let first: string | null = null;
    let after: ExportKey | null = null;
    // The first batch reports at once, so progress shows from the start; then at most every PROGRESS_INTERVAL_MS.
    let reported = 0;
    try {
      await writer.write(framing.header);
      // One statement per batch (a keyset on time and id) keeps each one short: no snapshot held for the
      // whole export, nothing for retention's partition changes to wait behind, within any statement_timeout.
      for (let more = true; more;) {
        const decoder = new CopyBinaryDecoder(EXPORT_BATCH_FIELDS.width);
        let batch = 0;
        for await (const chunk of this.auditEvents.exportBatch(query, after, batchRows, framing.line)) {
          const tuples = decoder.decode(chunk);
          if (tuples.rows === 0) continue;
          // Read before anything is awaited: the decoder's buffers hold these rows until its next chunk.
          first ??= fieldText(tuples, 0, EXPORT_BATCH_FIELDS.at);
          after = {
            at: fieldText(tuples, tuples.rows - 1, EXPORT_BATCH_FIELDS.at),
            id: fieldText(tuples, tuples.rows - 1, EXPORT_BATCH_FIELDS.id),
          };
          rows += tuples.rows;
          batch += tuples.rows;
          const piece = framer.add(tuples);
          if (piece) await writer.write(piece.bytes, piece.rows);
          if (Date.now() - reported >= PROGRESS_INTERVAL_MS) {
            reported = Date.now();
            const start = query.from?.getTime() ?? Date.parse(first);
            const end = query.before?.getTime() ?? Date.now();
            await this.exports.reportProgress(record.id, rows, end > start ? (Date.parse(after.at) - start) / (end - start) : 0);
          }
        }
        decoder.finish();
        more = batch === batchRows;
      }
      const piece = framer.take();
      await writer.write(piece.bytes, piece.rows);
      await writer.write(framing.footer(rows));
    } catch (error) {
      await writer.abort();
      throw error;
    }
    const last = after?.at ?? null;
    const details = {
      format,
      compression,
      range: { from: query.from?.toISOString() ?? null, before: query.before?.toISOString() ?? null, firstEvent: first, lastEvent: last },
      filters: filter,
    };
    const generatedAt = new Date();
    // A zip carries its manifest as its last entry too (without the file's own checksum, which cannot be inside it).
    const summary = await writer.finish((data) => ({
      name: "manifest.json",
      content: JSON.stringify(this.manifestOf(record, dataName, data, details, generatedAt), null, 2) + "\n",
    }));
    const manifest = {
      ...this.manifestOf(record, fileName, summary, details, generatedAt),
      fileSha256: summary.fileSha256,
      fileBytes: summary.fileBytes,
    };
    await writeManifest(path.join(this.settings.dir, fileName), manifest);
    return { rowsWritten: summary.rows, fileName, fileBytes: summary.fileBytes, manifest };
  }

  async writeReport(record: ExportRecord): Promise<Written> {
    const params = (record.params as { report: ReportParams }).report;
    const report = await buildReport(this.reports, params, {
      generatedBy: record.requestedByEmail,
      generatedAt: new Date(),
      maxRows: this.settings.reportMaxRows,
    });
    const format = record.format as ReportFormat;
    const content = format === "pdf" ? await reportPdf(report) : format === "csv" ? reportCsv(report) : reportJson(report);
    const fileName = `audit-report-${params.template.replace(/_/g, "-")}-${record.id}.${format}`;
    const writer = await ArchiveWriter.create(path.join(this.settings.dir, fileName), { compression: "none" });
    await writer.write(content, report.totalEvents);
    const summary = await writer.finish();
    const details = {
      format,
      compression: "none",
      template: params.template,
      range: { from: params.from, to: params.to },
      filters: report.filters,
      reportChecksum: report.checksum,
    };
    const manifest = {
      ...this.manifestOf(record, fileName, summary, details),
      fileSha256: summary.fileSha256,
      fileBytes: summary.fileBytes,
    };
    await writeManifest(path.join(this.settings.dir, fileName), manifest);
    return { rowsWritten: report.totalEvents, fileName, fileBytes: summary.fileBytes, manifest };
  }

  /** The manifest of a file, but for the file's own checksum and size (which a zip's inner manifest cannot know). */
  private manifestOf(
    record: ExportRecord,
    fileName: string,
    data: DataSummary,
    details: Record<string, unknown>,
    generatedAt = new Date(),
  ): Manifest {
    return {
      kind: record.kind === "events" ? "audit-events-export" : "audit-report",
      id: record.id,
      file: fileName,
      ...details,
      rows: data.rows,
      dataSha256: data.dataSha256,
      dataBytes: data.dataBytes,
      generatedBy: { id: record.requestedBy, email: record.requestedByEmail },
      generatedAt: generatedAt.toISOString(),
    };
  }
}
