import type { CopyTuples } from "../../platform/db/copy-binary";

/**
 * How exported audit events are written: JSON (one array), JSONL (one object a line) and CSV
 * (RFC 4180). Each event arrives from the repository already rendered by PostgreSQL, as the JSON text
 * of the canonical event (the same shape as GraphQL's AuditEvent) or as its CSV record (csvField's
 * rules, which the repository's SQL repeats and a test holds equal), so Node only frames, hashes and
 * compresses.
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

/**
 * How rows are framed into a file: the header, what comes before each row's line (the first and the
 * others), what ends each line, and the footer. The lines themselves are rendered by PostgreSQL
 * (AuditRepository.exportBatch), as JSON text or as a CSV record.
 */
export type Framing = {
  header: string;
  before: { first: string; rest: string };
  lineEnd: string;
  footer: (rows: number) => string;
  line: "json" | "csv";
  mimeType: string;
  extension: string;
};

export const FRAMINGS: Record<ExportFormat, Framing> = {
  jsonl: {
    header: "",
    before: { first: "", rest: "" },
    lineEnd: "\n",
    footer: () => "",
    line: "json",
    mimeType: "application/x-ndjson",
    extension: "jsonl",
  },
  json: {
    header: "[",
    before: { first: "\n", rest: ",\n" },
    lineEnd: "",
    footer: (rows) => (rows === 0 ? "]\n" : "\n]\n"),
    line: "json",
    mimeType: "application/json",
    extension: "json",
  },
  csv: {
    header: csvRecord(CSV_COLUMNS),
    before: { first: "", rest: "" },
    lineEnd: CRLF,
    footer: () => "",
    line: "csv",
    mimeType: "text/csv",
    extension: "csv",
  },
};

/** A piece of the file ready to write: its bytes and how many rows it holds. */
export type FramedPiece = { bytes: Buffer; rows: number };

/** Pieces are handed over at about this size: few enough writes and allocations, little memory. */
const PIECE_BYTES = 1024 * 1024;

/**
 * Frames decoded COPY rows into the file's bytes: each row's line (field `lineField`) with its separator
 * before it and its line end after, gathered into pieces of about PIECE_BYTES. A piece is a fresh
 * buffer (the compressor reads it after `add` returns), so the framer never overwrites one in use.
 */
export class LineFramer {
  private readonly first: Buffer;
  private readonly rest: Buffer;
  private readonly lineEnd: Buffer;
  private buffer = Buffer.alloc(0);
  private used = 0;
  private rows = 0;
  /** Rows framed so far in the whole file (JSON's first row has no comma before it). */
  private index = 0;

  constructor(
    framing: Framing,
    private readonly lineField: number,
  ) {
    this.first = Buffer.from(framing.before.first, "utf8");
    this.rest = Buffer.from(framing.before.rest, "utf8");
    this.lineEnd = Buffer.from(framing.lineEnd, "utf8");
  }

  /** Adds the rows of a decoded chunk; answers the piece that filled up, if one did. */
  add(tuples: CopyTuples): FramedPiece | null {
    const { data, rows, width, starts, ends } = tuples;
    const around = Math.max(this.first.length, this.rest.length) + this.lineEnd.length;
    let size = 0;
    for (let row = 0, at = this.lineField; row < rows; row++, at += width) {
      if (starts[at] < 0) throw new Error("An exported row has no line");
      size += ends[at] - starts[at] + around;
    }
    let full: FramedPiece | null = null;
    if (this.used + size > this.buffer.length) {
      if (this.rows > 0) full = this.take();
      this.buffer = Buffer.allocUnsafe(Math.max(PIECE_BYTES, size));
    }
    let position = this.used;
    for (let row = 0, at = this.lineField; row < rows; row++, at += width) {
      position = put(this.buffer, position, this.index++ === 0 ? this.first : this.rest);
      position += data.copy(this.buffer, position, starts[at], ends[at]);
      position = put(this.buffer, position, this.lineEnd);
    }
    this.used = position;
    this.rows += rows;
    return full;
  }

  /** The piece gathered so far (possibly empty); the next rows start a new one. */
  take(): FramedPiece {
    const piece = { bytes: this.buffer.subarray(0, this.used), rows: this.rows };
    this.buffer = this.buffer.subarray(this.used);
    [this.used, this.rows] = [0, 0];
    return piece;
  }
}

/** Copies a separator of a few bytes: a loop here costs less than a native copy per row. */
function put(out: Buffer, position: number, bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) out[position++] = bytes[i];
  return position;
}
