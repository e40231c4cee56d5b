import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { manifestPathOf } from "../../platform/files/archive-writer";
import { ArchiveTamperedError, type TamperFinding } from "./archive-errors";
import type { ArchiveStore } from "./archive-store";
import type { ArchiveManifest, ArchiveRow } from "./retention.repository";
import { monthEnd, monthLabel } from "./retention-tiers";

/** What one archive line may be at most (AUDIT_ARCHIVE_MAX_LINE_BYTES), and what a manifest file may be. */
export type ArchiveLimits = { maxLineBytes: number };
const MAX_MANIFEST_BYTES = 64 * 1024;
/** Lines whose hashes the database recomputes per round trip while looking for the first altered event. */
const DIAGNOSE_BATCH = 2000;

type Line = { text: string; line: number; compressedAt: number };
type Fault = Partial<Omit<TamperFinding, "message">> & { what: string };

/**
 * Reads stored archives without trusting them. Before a line is handed out the archive is checked
 * whole: its data file is there, its manifest file is the manifest recorded when the month was
 * archived, and the file's size and SHA-256 are the manifest's (hashing the compressed bytes, so a
 * decompression bomb or a file from elsewhere is refused before it is unpacked). When the check fails,
 * the file is walked once more, within the same bounds, to name the first bad event or byte range.
 * Lines are split by hand, never longer than `maxLineBytes`, never more data than the manifest says:
 * no input can make the reader hold more than one line's worth of memory.
 */
export class ArchiveReader {
  constructor(
    private readonly store: ArchiveStore,
    private readonly limits: ArchiveLimits,
    /** For each line (by seq): whether the database recomputes its hash from its content. */
    private readonly hashesMatch: (lines: string[]) => Promise<Map<string, boolean>>,
  ) {}

  /** The lines of a stored archive, in order, once the archive has passed `check`. */
  async *lines(archive: ArchiveRow): AsyncGenerator<string> {
    await this.check(archive);
    const { manifest } = archive;
    const hash = createHash("sha256");
    let count = 0;
    let previousSeq = 0n;
    for await (const { text, line, compressedAt } of this.split(archive, await this.open(archive))) {
      hash.update(`${text}\n`, "utf8");
      count = line;
      const event = this.lineEvent(archive, text, line, previousSeq);
      previousSeq = event.seq;
      if (count > manifest.rows)
        throw this.tampered(archive, { what: `has more than its ${manifest.rows} lines`, line, bytes: `${compressedAt}-${compressedAt}` });
      yield text;
    }
    if (count !== manifest.rows || hash.digest("hex") !== manifest.sha256)
      throw this.tampered(archive, { what: `does not match its manifest (${count} lines of ${manifest.rows})`, line: count + 1 });
  }

  /** Throws ArchiveTamperedError when the archive is not exactly what was archived. */
  async check(archive: ArchiveRow): Promise<void> {
    const { manifest } = archive;
    const stream = await this.open(archive);
    const hash = createHash("sha256");
    let size = 0;
    try {
      await this.checkManifestFile(archive);
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        size += chunk.length;
        // A longer file is not the archive: stop reading at once (a bomb may be gigabytes).
        if (size > manifest.fileBytes) break;
        hash.update(chunk);
      }
    } finally {
      stream.destroy();
    }
    if (size === manifest.fileBytes && hash.digest("hex") === manifest.fileSha256) return;
    throw await this.diagnose(archive, size);
  }

  private async open(archive: ArchiveRow): Promise<Readable> {
    try {
      return await this.store.open(archive.storageKey);
    } catch (error) {
      if (!isMissing(error)) throw error;
      throw this.tampered(archive, {
        kind: "missing",
        what: `(${archive.manifest.rows} events, sequences ${archive.manifest.firstSeq ?? "-"} to ${archive.manifest.lastSeq ?? "-"}) is missing from storage`,
        seq: archive.manifest.firstSeq,
      });
    }
  }

  private async checkManifestFile(archive: ArchiveRow): Promise<void> {
    const key = manifestPathOf(archive.storageKey);
    let text: string;
    try {
      const stream = await this.store.open(key);
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > MAX_MANIFEST_BYTES) break;
          chunks.push(chunk);
        }
      } finally {
        stream.destroy();
      }
      if (size > MAX_MANIFEST_BYTES)
        throw this.tampered(archive, { kind: "manifest", what: `has a manifest file over ${MAX_MANIFEST_BYTES} bytes (${key})` });
      text = Buffer.concat(chunks).toString("utf8");
    } catch (error) {
      if (error instanceof ArchiveTamperedError) throw error;
      if (!isMissing(error)) throw error;
      throw this.tampered(archive, { kind: "manifest", what: `has no manifest file (${key} is missing)` });
    }
    let stored: Record<string, unknown>;
    try {
      stored = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw this.tampered(archive, { kind: "manifest", what: `has a manifest file that is not JSON (${key})` });
    }
    const recorded = archive.manifest as unknown as Record<string, unknown>;
    const fields = [...new Set([...Object.keys(recorded), ...Object.keys(stored ?? {})])].filter(
      (field) => JSON.stringify(recorded[field]) !== JSON.stringify(stored?.[field]),
    );
    if (fields.length)
      throw this.tampered(archive, {
        kind: "manifest",
        what: `has a manifest file that differs from the manifest recorded when it was archived (${fields.join(", ")})`,
      });
  }

  /**
   * The first thing wrong with an archive whose bytes differ from its manifest: a line that is not an
   * event, an event from outside the archive's month or sequence range, an event whose content no
   * longer gives its hash, a gzip fault at a byte range, or the data ending early or running long.
   */
  private async diagnose(archive: ArchiveRow, fileSize: number): Promise<ArchiveTamperedError> {
    const { manifest } = archive;
    let previousSeq = 0n;
    let batch: { text: string; seq: string; id: string; line: number }[] = [];
    let last: Line | null = null;
    const flush = async (): Promise<ArchiveTamperedError | null> => {
      const matches = await this.hashesMatch(batch.map((entry) => entry.text)).catch(() => new Map<string, boolean>());
      const bad = batch.find((entry) => matches.get(entry.seq) !== true);
      batch = [];
      return bad
        ? this.tampered(archive, {
            what: `holds event ${bad.id} (sequence ${bad.seq}, line ${bad.line}), which no longer matches its hash`,
            seq: bad.seq,
            eventId: bad.id,
            line: bad.line,
          })
        : null;
    };
    try {
      for await (const entry of this.split(archive, await this.open(archive))) {
        last = entry;
        const { seq, id } = this.lineEvent(archive, entry.text, entry.line, previousSeq);
        previousSeq = seq;
        batch.push({ text: entry.text, seq: seq.toString(), id, line: entry.line });
        if (batch.length === DIAGNOSE_BATCH) {
          const found = await flush();
          if (found) return found;
        }
      }
      const found = batch.length ? await flush() : null;
      if (found) return found;
    } catch (error) {
      if (error instanceof ArchiveTamperedError) return error;
      throw error;
    }
    const lines = last?.line ?? 0;
    if (lines < manifest.rows)
      return this.tampered(archive, {
        what: `ends after line ${lines} of ${manifest.rows}: ${manifest.rows - lines} events are missing`,
        line: lines + 1,
        bytes: `${last?.compressedAt ?? 0}-${fileSize}`,
      });
    const start = fileSize === manifest.fileBytes ? 0 : Math.min(fileSize, manifest.fileBytes);
    return this.tampered(archive, {
      what: `is not the file that was archived (${fileSize} bytes of ${manifest.fileBytes}, its SHA-256 differs from the manifest's)`,
      bytes: `${start}-${Math.max(fileSize, manifest.fileBytes)}`,
    });
  }

  /**
   * An archive line as the event it must be: JSON with an id, a sequence number inside the archive's
   * range and after the line before, and a time inside its month; otherwise the archive is tampered.
   */
  private lineEvent(archive: ArchiveRow, text: string, line: number, previousSeq: bigint): { seq: bigint; id: string } {
    const { manifest } = archive;
    let event: { id?: unknown; seq?: unknown; occurredAt?: unknown } | null;
    try {
      event = JSON.parse(text) as typeof event;
    } catch {
      event = null;
    }
    const seq = typeof event?.seq === "string" && /^\d{1,19}$/.test(event.seq) ? BigInt(event.seq) : null;
    const at = typeof event?.occurredAt === "string" ? Date.parse(event.occurredAt) : NaN;
    const id = typeof event?.id === "string" && /^[0-9a-f-]{36}$/i.test(event.id) ? event.id : null;
    if (seq === null || id === null || Number.isNaN(at))
      throw this.tampered(archive, { what: `line ${line} is not an archived event`, line });
    const [firstSeq, lastSeq] = [BigInt(manifest.firstSeq ?? "0"), BigInt(manifest.lastSeq ?? "0")];
    if (seq < firstSeq || seq > lastSeq || seq <= previousSeq || at < archive.month.getTime() || at >= monthEnd(archive.month).getTime())
      throw this.tampered(archive, {
        what: `holds event ${id} (sequence ${seq}, ${new Date(at).toISOString()}, line ${line}), which is not one of its own (sequences ${manifest.firstSeq} to ${manifest.lastSeq} of ${monthLabel(archive.month)})`,
        seq: seq.toString(),
        eventId: id,
        line,
      });
    return { seq, id };
  }

  /** Lines of the gzip data, each with its 1-based number and how far into the compressed file it ended; bounded. */
  private async *split(archive: ArchiveRow, stream: Readable): AsyncGenerator<Line> {
    const { manifest } = archive;
    const gunzip = createGunzip();
    let compressed = 0;
    stream.on("data", (chunk: Buffer) => (compressed += chunk.length));
    stream.on("error", (error) => gunzip.destroy(error));
    stream.pipe(gunzip);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let data = 0;
    let line = 0;
    let lastEnd = 0;
    const fault = (what: string, extra: Partial<Fault> = {}) =>
      this.tampered(archive, { what, line: line + 1, bytes: `${lastEnd}-${compressed}`, ...extra });
    try {
      try {
        for await (const chunk of gunzip as AsyncIterable<Buffer>) {
          data += chunk.length;
          if (data > manifest.dataBytes)
            throw fault(`unpacks to more than the ${manifest.dataBytes} bytes of its manifest (line ${line + 1} onward)`);
          let start = 0;
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
            const piece = chunk.subarray(start, at);
            if (pendingBytes + piece.length > this.limits.maxLineBytes)
              throw fault(`has a line ${line + 1} longer than ${this.limits.maxLineBytes} bytes`);
            const text = (pending.length ? Buffer.concat([...pending, piece]) : piece).toString("utf8");
            pending = [];
            pendingBytes = 0;
            line += 1;
            lastEnd = compressed;
            yield { text, line, compressedAt: compressed };
            start = at + 1;
          }
          const rest = chunk.subarray(start);
          if (pendingBytes + rest.length > this.limits.maxLineBytes)
            throw fault(`has a line ${line + 1} longer than ${this.limits.maxLineBytes} bytes`);
          if (rest.length) {
            pending.push(rest);
            pendingBytes += rest.length;
          }
        }
      } catch (error) {
        if (error instanceof ArchiveTamperedError || isMissing(error)) throw error;
        // zlib: a corrupt block, a bad check value, a file cut short.
        throw fault(`is not readable gzip after line ${line} (${(error as Error).message})`);
      }
      if (pendingBytes) throw fault(`ends in the middle of line ${line + 1}`);
    } finally {
      stream.unpipe(gunzip);
      stream.destroy();
      gunzip.destroy();
    }
  }

  private tampered(archive: ArchiveRow, fault: Fault): ArchiveTamperedError {
    const month = monthLabel(archive.month);
    const label = `${month} ${archive.tier}`;
    return new ArchiveTamperedError(
      { id: archive.id, month, tier: archive.tier, storageKey: archive.storageKey },
      {
        kind: fault.kind ?? "altered",
        message: `the archive of ${label} (${archive.storageKey}) ${fault.what}${fault.bytes ? ` (file bytes ${fault.bytes})` : ""}`,
        seq: fault.seq ?? null,
        eventId: fault.eventId ?? null,
        line: fault.line ?? null,
        bytes: fault.bytes ?? null,
      },
    );
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code ?? (error as { name?: string }).name;
  return code === "ENOENT" || code === "NoSuchKey" || code === "NotFound";
}

export type { ArchiveManifest };
