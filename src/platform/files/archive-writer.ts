import { createHash, type Hash } from "node:crypto";
import fs from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { PassThrough, Transform, type Readable, type TransformOptions, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip, constants as zlibConstants, type ZlibOptions } from "node:zlib";
import { ZipFile } from "yazl";

/**
 * A streamed, checksummed archive file: rows go in as encoded bytes, out compressed on disk, while the
 * SHA-256 of the uncompressed data, the row count and the byte counts are kept on the way. Memory
 * stays constant whatever the number of rows: `write` waits whenever the compressor's buffer is full.
 * Audit exports use it; retention archives (compressed JSONL of a detached month) use it the same way.
 *
 * The file is written under a temporary name and renamed on `finish`, so a crash never leaves a
 * half-written file under the final name.
 */
export type ArchiveSummary = {
  /** Rows the caller counted with `write(bytes, rows)`. */
  rows: number;
  /** Hex SHA-256 of the uncompressed data, as a reader gets it back (gunzip, or the zip's data entry). */
  dataSha256: string;
  /** Hex SHA-256 of the file on disk (what `sha256sum` prints for the downloaded file). */
  fileSha256: string;
  dataBytes: number;
  fileBytes: number;
};

export type DataSummary = Pick<ArchiveSummary, "rows" | "dataSha256" | "dataBytes">;

export type ArchiveOptions = {
  /**
   * gzip (the default); zip, whose one data entry is `entryName` and which can end with a small
   * trailer entry (a manifest) written by `finish`; or none for data already compressed (a PDF).
   */
  compression?: "gzip" | "zip" | "none";
  /** The data's name inside a zip. */
  entryName?: string;
  /** gzip level 1–9; 6 is zlib's and the gzip command's default. */
  level?: number;
  /**
   * gzip only: unpack the compressed output again while it is written (on zlib's thread, beside the
   * compressor) and sum what comes out, so `finish` answers `inflated` and a caller can check the file
   * unpacks to exactly its data without reading it back whole afterwards (readBackFile then suffices).
   */
  checkInflated?: boolean;
};

/** What the compressed output of a writer with `checkInflated` unpacks to. */
export type InflatedSummary = { sha256: string; bytes: number; lines: number };

/**
 * Input the compressor may hold before `write` waits: enough that it always has the next chunk while the
 * caller reads more from the database (with zlib's 16 KB default the two took turns instead of working
 * side by side), small enough to be no memory worth counting.
 */
const QUEUED_INPUT = 1024 * 1024;
/** The compressor's output pieces (zlib's default is 16 KB): fewer, larger pieces to hash and write. */
const OUTPUT_CHUNK = 64 * 1024;

/** zlib's options, and the stream option its typings leave out (zlib streams pass it on to Transform). */
function gzipOptions(level: number): ZlibOptions & Pick<TransformOptions, "writableHighWaterMark"> {
  return { level, chunkSize: OUTPUT_CHUNK, writableHighWaterMark: QUEUED_INPUT };
}

/** A last entry of a zip, made once the data's figures are known: `{ name, content }`. */
export type Trailer = (data: DataSummary) => { name: string; content: string };

export class ArchiveWriter {
  private readonly dataHash: Hash = createHash("sha256");
  private readonly fileHash: Hash = createHash("sha256");
  /** Where data is written, and what comes out of the compressor (the same stream but for zip). */
  private readonly input: Writable;
  private readonly zip: ZipFile | null = null;
  private readonly done: Promise<void>;
  private readonly temporary: string;
  private rows = 0;
  private dataBytes = 0;
  private fileBytes = 0;
  private failed: Error | null = null;
  private readonly inflated: { hash: Hash; bytes: number; lines: number; done: Promise<void> } | null = null;

  private constructor(
    private readonly file: string,
    options: ArchiveOptions,
  ) {
    this.temporary = `${file}.partial`;
    let output: Readable;
    if (options.compression === "zip") {
      const data = new PassThrough({ highWaterMark: QUEUED_INPUT });
      this.zip = new ZipFile();
      this.zip.addReadStream(data, options.entryName ?? "data", { compressionLevel: options.level ?? 6 });
      this.input = data;
      output = this.zip.outputStream as Readable;
    } else {
      const encoder =
        options.compression === "none" ? new PassThrough() : createGzip(gzipOptions(options.level ?? zlibConstants.Z_DEFAULT_COMPRESSION));
      this.input = encoder;
      output = encoder;
    }
    let inflate: Writable | null = null;
    if (options.checkInflated && (options.compression ?? "gzip") === "gzip") {
      const gunzip = createGunzip({ chunkSize: OUTPUT_CHUNK });
      const inflated = { hash: createHash("sha256"), bytes: 0, lines: 0, done: Promise.resolve() };
      gunzip.on("data", (chunk: Buffer) => {
        inflated.hash.update(chunk);
        inflated.bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) inflated.lines += 1;
      });
      inflated.done = once(gunzip, "end").then(() => undefined);
      inflated.done.catch(() => undefined);
      this.inflated = inflated;
      inflate = gunzip;
    }
    output.on("data", (chunk: Buffer) => {
      this.fileHash.update(chunk);
      this.fileBytes += chunk.length;
    });
    const target = fs.createWriteStream(this.temporary, { mode: 0o600 });
    if (inflate) {
      const unpacker = inflate;
      // Each compressed piece goes on to the file once the unpacker has taken it (its buffer bounded like any stream's).
      const tee = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          if (unpacker.write(chunk)) done(null, chunk);
          else unpacker.once("drain", () => done(null, chunk));
        },
        flush(done) {
          unpacker.end();
          done();
        },
      });
      this.done = pipeline(output, tee, target);
      this.done.catch(() => unpacker.destroy());
    } else {
      this.done = pipeline(output, target);
    }
    this.done.catch((error: Error) => (this.failed = error));
  }

  /** Opens `file` (its folder is created) for writing. */
  static async create(file: string, options: ArchiveOptions = {}): Promise<ArchiveWriter> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    return new ArchiveWriter(file, options);
  }

  /** Appends encoded data holding `rows` rows; resolves once the compressor can take more. */
  async write(data: string | Buffer, rows = 0): Promise<void> {
    if (this.failed) throw this.failed;
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    this.dataHash.update(bytes);
    this.dataBytes += bytes.length;
    this.rows += rows;
    if (!this.input.write(bytes)) await Promise.race([once(this.input, "drain"), this.done]);
  }

  /** Flushes and closes the file (a zip ends with `trailer`'s entry), moves it to its final name, and sums it up. */
  async finish(trailer?: Trailer): Promise<ArchiveSummary & { inflated?: InflatedSummary }> {
    this.input.end();
    const data: DataSummary = { rows: this.rows, dataSha256: this.dataHash.digest("hex"), dataBytes: this.dataBytes };
    if (this.zip) {
      if (trailer) {
        const { name, content } = trailer(data);
        this.zip.addBuffer(Buffer.from(content, "utf8"), name);
      }
      this.zip.end();
    }
    await this.done;
    await fs.promises.rename(this.temporary, this.file);
    const summary = { ...data, fileSha256: this.fileHash.digest("hex"), fileBytes: this.fileBytes };
    if (!this.inflated) return summary;
    await this.inflated.done;
    return { ...summary, inflated: { sha256: this.inflated.hash.digest("hex"), bytes: this.inflated.bytes, lines: this.inflated.lines } };
  }

  /** Gives up: closes and removes the partial file. */
  async abort(): Promise<void> {
    this.input.destroy();
    if (this.zip) (this.zip.outputStream as Readable).destroy();
    await this.done.catch(() => undefined);
    await fs.promises.rm(this.temporary, { force: true });
  }
}

/**
 * Reads an archive back and recomputes its checksums and line count, in constant memory: what a
 * manifest's figures are checked against before anything relies on the archive.
 */
export async function readBackArchive(
  source: string | Readable,
): Promise<{ dataSha256: string; fileSha256: string; lines: number; dataBytes: number }> {
  const dataHash = createHash("sha256");
  const fileHash = createHash("sha256");
  let lines = 0;
  let dataBytes = 0;
  // A path, or the stream of a stored archive (retention's object storage).
  const input = typeof source === "string" ? fs.createReadStream(source) : source;
  input.on("data", (chunk: Buffer) => fileHash.update(chunk));
  const gunzip = createGunzip();
  gunzip.on("data", (chunk: Buffer) => {
    dataHash.update(chunk);
    dataBytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
  });
  await pipeline(input, gunzip);
  return { dataSha256: dataHash.digest("hex"), fileSha256: fileHash.digest("hex"), lines, dataBytes };
}

/**
 * Reads a stored file back as bytes only: its SHA-256 and size, to check the store holds exactly what a
 * writer with `checkInflated` wrote (whose unpacked content was checked while it was written).
 */
export async function readBackFile(source: Readable): Promise<{ fileSha256: string; fileBytes: number }> {
  const hash = createHash("sha256");
  let fileBytes = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    hash.update(chunk);
    fileBytes += chunk.length;
  }
  return { fileSha256: hash.digest("hex"), fileBytes };
}

/** Writes a manifest beside its archive (`<archive>.manifest.json`), atomically like the archive. */
export async function writeManifest(archiveFile: string, manifest: object): Promise<string> {
  const file = manifestPathOf(archiveFile);
  await fs.promises.writeFile(`${file}.partial`, JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
  await fs.promises.rename(`${file}.partial`, file);
  return file;
}

export function manifestPathOf(archiveFile: string): string {
  return `${archiveFile}.manifest.json`;
}
