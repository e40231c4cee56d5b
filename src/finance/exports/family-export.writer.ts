import { createHash, type Hash } from "node:crypto";
import fs from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ZipFile } from "yazl";
import { FRAMINGS, LineFramer } from "../../audit/exports";
import { CopyBinaryDecoder } from "../../platform/db/copy-binary";

/** What the manifest says of each file in the zip: what restore checks before it reads a line. */
export type ManifestFile = { name: string; sha256: string; bytes: number; rows: number };

export type FamilyExportManifest = {
  kind: "family-export";
  version: 1;
  id: string;
  familyId: string;
  generatedAt: string;
  files: ManifestFile[];
};

/** The input an entry may hold before `write` waits: the zip's deflate always has the next chunk, memory stays flat. */
const QUEUED_INPUT = 1024 * 1024;

/**
 * A zip written entry after entry, each entry streamed in and summed (SHA-256, bytes, rows) on its way
 * to the compressor, the manifest of those sums added as the last entry. Memory stays constant: `write`
 * waits while the compressor is behind. The file is written under a temporary name and renamed at the
 * end, so a crash never leaves a half-written export under its final name.
 */
export class ZipEntriesWriter {
  private readonly zip = new ZipFile();
  private readonly done: Promise<void>;
  private readonly fileHash: Hash = createHash("sha256");
  private fileBytes = 0;
  private failed: Error | null = null;
  private entry: { name: string; input: PassThrough; hash: Hash; bytes: number; rows: number } | null = null;
  readonly files: ManifestFile[] = [];

  private constructor(
    private readonly file: string,
    private readonly temporary: string,
  ) {
    const output = this.zip.outputStream as Readable;
    output.on("data", (chunk: Buffer) => {
      this.fileHash.update(chunk);
      this.fileBytes += chunk.length;
    });
    this.done = pipeline(output, fs.createWriteStream(temporary, { mode: 0o600 }));
    this.done.catch((error: Error) => (this.failed = error));
  }

  static async create(file: string): Promise<ZipEntriesWriter> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    return new ZipEntriesWriter(file, `${file}.partial`);
  }

  /** Starts the next entry (ending the one before). */
  begin(name: string): void {
    this.end();
    const input = new PassThrough({ highWaterMark: QUEUED_INPUT });
    this.zip.addReadStream(input, name, { compressionLevel: 6 });
    this.entry = { name, input, hash: createHash("sha256"), bytes: 0, rows: 0 };
  }

  /** Appends bytes holding `rows` rows to the current entry; resolves once the compressor can take more. */
  async write(data: string | Buffer, rows = 0): Promise<void> {
    if (this.failed) throw this.failed;
    const entry = this.entry!;
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    entry.hash.update(bytes);
    entry.bytes += bytes.length;
    entry.rows += rows;
    if (!entry.input.write(bytes)) await Promise.race([once(entry.input, "drain"), this.done]);
  }

  private end(): void {
    if (!this.entry) return;
    this.entry.input.end();
    this.files.push({ name: this.entry.name, sha256: this.entry.hash.digest("hex"), bytes: this.entry.bytes, rows: this.entry.rows });
    this.entry = null;
  }

  /** Ends the last entry, adds `manifest(files)` as manifest.json, closes and names the file. */
  async finish<M extends object>(manifest: (files: ManifestFile[]) => M): Promise<{ manifest: M; fileSha256: string; fileBytes: number }> {
    this.end();
    const content = manifest(this.files);
    this.zip.addBuffer(Buffer.from(JSON.stringify(content, null, 2) + "\n", "utf8"), "manifest.json");
    this.zip.end();
    await this.done;
    await fs.promises.rename(this.temporary, this.file);
    return { manifest: content, fileSha256: this.fileHash.digest("hex"), fileBytes: this.fileBytes };
  }

  async abort(): Promise<void> {
    this.entry?.input.destroy();
    (this.zip.outputStream as Readable).destroy();
    await this.done.catch(() => undefined);
    await fs.promises.rm(this.temporary, { force: true });
  }
}

/**
 * Counts the records of CSV as COPY writes it (RFC 4180), chunk by chunk: a line end inside a quoted
 * field (a name with a newline) is not a record's end. A doubled quote toggles the state twice, so
 * counting quotes is enough.
 */
export class CsvRecordCounter {
  private quoted = false;

  count(chunk: Buffer): number {
    let records = 0;
    let quoted = this.quoted;
    for (let at = 0; at < chunk.length; at++) {
      const byte = chunk[at];
      if (byte === 34) quoted = !quoted;
      else if (byte === 10 && !quoted) records += 1;
    }
    this.quoted = quoted;
    return records;
  }
}

/** Frames binary COPY rows of one text column (a JSON line each) into NDJSON pieces. */
export async function writeNdjson(writer: ZipEntriesWriter, copy: AsyncGenerator<Buffer>): Promise<void> {
  const decoder = new CopyBinaryDecoder(1);
  const framer = new LineFramer(FRAMINGS.jsonl, 0);
  for await (const chunk of copy) {
    const tuples = decoder.decode(chunk);
    if (tuples.rows === 0) continue;
    const piece = framer.add(tuples);
    if (piece) await writer.write(piece.bytes, piece.rows);
  }
  decoder.finish();
  const piece = framer.take();
  if (piece.rows > 0) await writer.write(piece.bytes, piece.rows);
}
