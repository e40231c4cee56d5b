/**
 * How exported audit events are written: JSON (one array), JSONL (one object a line) and CSV
 * (RFC 4180). Each event arrives from the repository already rendered by PostgreSQL, as the JSON text
 * of the canonical event (the same shape as GraphQL's AuditEvent) and as the text of each CSV column,
 * so Node only frames, hashes and compresses.
 */
export const EXPORT_FORMATS = ["json", "jsonl", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The CSV columns, in order; nested fields are flattened (user.email → userEmail), `changes` is its JSON text. */
export const CSV_COLUMNS = [
  "id",
  "seq",
  "timestamp",
  "eventType",
  "severity",
  "userId",
  "userEmail",
  "provider",
  "action",
  "resourceType",
  "resourceId",
  "resourceLabel",
  "ipAddress",
  "userAgent",
  "sessionId",
  "requestId",
  "changes",
  "error",
  "prevHash",
  "hash",
] as const;

const CRLF = "\r\n";
/** A spreadsheet reads a cell starting with one of these as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One RFC 4180 field: quoted when it holds a comma, quote, CR or LF (quotes doubled). A value a
 * spreadsheet would run as a formula gets a leading apostrophe, which spreadsheets show as text; the
 * apostrophe is the only change, so a reader strips it to get the value back.
 */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRecord(values: readonly (string | number | null | undefined)[]): string {
  return values.map(csvField).join(",") + CRLF;
}

/** Frames a stream of encoded rows: what comes before the first, between rows, and after the last. */
export type Framing = {
  header: string;
  /** The text of one row, from the repository's rendering. */
  row: (row: { json: string; columns: (string | null)[] }, index: number) => string;
  footer: (rows: number) => string;
  mimeType: string;
  extension: string;
};

export const FRAMINGS: Record<ExportFormat, Framing> = {
  jsonl: {
    header: "",
    row: (row) => row.json + "\n",
    footer: () => "",
    mimeType: "application/x-ndjson",
    extension: "jsonl",
  },
  json: {
    header: "[",
    row: (row, index) => (index === 0 ? "\n" : ",\n") + row.json,
    footer: (rows) => (rows === 0 ? "]\n" : "\n]\n"),
    mimeType: "application/json",
    extension: "json",
  },
  csv: {
    header: csvRecord(CSV_COLUMNS),
    row: (row) => csvRecord(row.columns),
    footer: () => "",
    mimeType: "text/csv",
    extension: "csv",
  },
};
