import { Readable } from "node:stream";
import { CsvError, parse } from "csv-parse";
import { PayloadTooLargeError, ValidationError } from "../../platform/common/errors";
import { detectColumnSeparator } from "./import.formats";

export type CsvLimits = { maxBytes: number; maxRows: number };
export type CsvOptions = { columnSeparator?: string | null; rowsToSkip?: number };

/** A header wider than this is no bank export: refused before any row is read. */
export const MAX_COLUMNS = 200;
/** A record (one row, all its fields) longer than this many characters is refused. */
export const MAX_RECORD_CHARS = 64 * 1024;
/** How much of the file is looked at to tell its column separator. */
const SNIFF_CHARS = 64 * 1024;

export type CsvFile = {
  columnSeparator: string;
  headers: string[];
  /** The data rows in file order, each as a list of fields; consumed once. */
  records: AsyncGenerator<string[]>;
  /** Bytes read so far (the whole file once `records` is done). */
  bytesRead: () => number;
};

/**
 * Reads a CSV file as it arrives, never holding more of it than one chunk and one record: bytes are
 * counted against IMPORT_MAX_BYTES (413 beyond it), decoded as UTF-8 strictly (invalid bytes are a 422
 * naming the offset), a byte order mark is dropped, line endings may be mixed (\r\n, \n, \r), quoted
 * fields may hold separators and newlines. Data rows beyond IMPORT_MAX_ROWS, a header wider than
 * MAX_COLUMNS, a record over MAX_RECORD_CHARS and broken quoting are each a 422 saying which.
 */
export async function readCsv(
  source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
  options: CsvOptions,
  limits: CsvLimits,
): Promise<CsvFile> {
  let bytes = 0;
  async function* text(): AsyncGenerator<string> {
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
    for await (const chunk of source) {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      bytes += buffer.length;
      if (bytes > limits.maxBytes) throw new PayloadTooLargeError(`The file is larger than IMPORT_MAX_BYTES (${limits.maxBytes} bytes)`);
      try {
        yield decoder.decode(buffer, { stream: true });
      } catch {
        throw invalidFile(`The file is not valid UTF-8 (near byte ${bytes - buffer.length}); save it as UTF-8 and upload it again`);
      }
    }
    try {
      yield decoder.decode();
    } catch {
      throw invalidFile("The file is not valid UTF-8 (it ends inside a character)");
    }
  }

  const chunks = text();
  let head = "";
  while (head.length < SNIFF_CHARS && !/[\r\n]/.test(skipLines(head, options.rowsToSkip ?? 0))) {
    const next = await chunks.next();
    if (next.done) break;
    head += next.value;
  }
  const sniffed = skipLines(head, options.rowsToSkip ?? 0);
  const columnSeparator = options.columnSeparator || detectColumnSeparator(sniffed.split(/\r\n|\n|\r/, 1)[0] ?? "");
  async function* rest(): AsyncGenerator<string> {
    yield head;
    for await (const chunk of { [Symbol.asyncIterator]: () => chunks }) yield chunk;
  }
  const parser = parse({
    delimiter: columnSeparator,
    bom: true,
    record_delimiter: ["\r\n", "\n", "\r"],
    relax_column_count: true,
    // A quote inside an unquoted field (`5" screen`, a formula) is text, as spreadsheets write it.
    relax_quotes: true,
    skip_empty_lines: true,
    from_line: (options.rowsToSkip ?? 0) + 1,
    max_record_size: MAX_RECORD_CHARS,
  });
  const input = Readable.from(rest());
  input.on("error", (error) => parser.destroy(error));
  input.pipe(parser);
  const iterator = parser[Symbol.asyncIterator]() as AsyncIterator<string[]>;

  const first = await nextRecord(iterator);
  if (!first) throw invalidFile("The file has no header row");
  const headers = first.map((header) => header.trim());
  if (headers.length > MAX_COLUMNS) throw invalidFile(`The file has ${headers.length} columns; an import takes at most ${MAX_COLUMNS}`);

  async function* records(): AsyncGenerator<string[]> {
    let rows = 0;
    for (;;) {
      const record = await nextRecord(iterator);
      if (!record) return;
      rows += 1;
      if (rows > limits.maxRows) {
        parser.destroy();
        throw invalidFile(`The file has more than IMPORT_MAX_ROWS (${limits.maxRows}) data rows`);
      }
      yield record;
    }
  }
  return { columnSeparator, headers, records: records(), bytesRead: () => bytes };
}

async function nextRecord(iterator: AsyncIterator<string[]>): Promise<string[] | null> {
  try {
    const next = await iterator.next();
    return next.done ? null : next.value;
  } catch (error) {
    if (error instanceof CsvError) throw invalidFile(describeCsvError(error));
    throw error;
  }
}

function describeCsvError(error: CsvError): string {
  const line = (error as CsvError & { lines?: number }).lines;
  const where = line ? ` (line ${line})` : "";
  if (error.code === "CSV_MAX_RECORD_SIZE") return `A row is longer than ${MAX_RECORD_CHARS} characters${where}`;
  if (error.code === "CSV_QUOTE_NOT_CLOSED") return `A quoted field is never closed${where}`;
  return `The file is not valid CSV${where}: ${error.message.split(":")[0]}`;
}

function skipLines(text: string, count: number): string {
  let rest = text;
  for (let i = 0; i < count; i += 1) {
    const match = /\r\n|\n|\r/.exec(rest);
    if (!match) return "";
    rest = rest.slice(match.index + match[0].length);
  }
  return rest;
}

function invalidFile(message: string): ValidationError {
  return new ValidationError([message]);
}
