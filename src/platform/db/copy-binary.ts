/**
 * A decoder of PostgreSQL's binary COPY format (`COPY … TO STDOUT (FORMAT binary)`): a signature,
 * flags and a header extension, then tuples (an int16 field count, then per field an int32 length,
 * -1 for NULL, and that many bytes), then the int16 -1 trailer. A text column's bytes are its UTF-8
 * text exactly, with no escaping, which is why exports read binary COPY rather than text or CSV COPY.
 *
 * It makes no object per row, and reuses its buffers from chunk to chunk: each chunk decodes to the
 * offsets of its fields in one buffer, so a caller copies bytes straight from what arrived on the socket.
 */
const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
/** Signature, int32 flags, int32 length of the header extension. */
const HEADER_BYTES = SIGNATURE.length + 8;
const NULL_FIELD = -1;

/** The complete tuples of one decoded chunk: field f of row r spans `data[starts[i]..ends[i])`, i = r × width + f; NULL starts at -1. */
export type CopyTuples = { data: Buffer; rows: number; width: number; starts: Int32Array; ends: Int32Array };

export class CopyBinaryDecoder {
  /** Where the last chunk's incomplete tuple and the next chunk are joined; reused, like the offsets. */
  private scratch = Buffer.alloc(0);
  /** The incomplete tuple at the end of the last chunk. */
  private tail: Buffer | null = null;
  private starts = new Int32Array(0);
  private ends = new Int32Array(0);
  private headerDone = false;
  private trailerSeen = false;

  constructor(private readonly width: number) {}

  /**
   * Decodes what `chunk` completes; an incomplete tuple at its end waits for the next chunk. The answer
   * is valid until the next call (its buffers are reused: a run allocates nothing per chunk).
   */
  decode(chunk: Buffer): CopyTuples {
    const data = this.join(chunk);
    let at = 0;
    if (!this.headerDone) {
      if (data.length < HEADER_BYTES) return this.keep(data, at);
      if (!data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error("Not a binary COPY stream");
      const extension = data.readInt32BE(SIGNATURE.length + 4);
      if (data.length < HEADER_BYTES + extension) return this.keep(data, at);
      at = HEADER_BYTES + extension;
      this.headerDone = true;
    }
    // At most one tuple per 2 + 4 × width bytes.
    const capacity = Math.floor((data.length - at) / (2 + 4 * this.width)) * this.width;
    if (this.starts.length < capacity) [this.starts, this.ends] = [new Int32Array(capacity * 2), new Int32Array(capacity * 2)];
    const { starts, ends } = this;
    let rows = 0;
    while (!this.trailerSeen && data.length - at >= 2) {
      const count = data.readInt16BE(at);
      if (count === -1) {
        this.trailerSeen = true;
        at += 2;
        break;
      }
      if (count !== this.width) throw new Error(`A COPY tuple has ${count} fields, not ${this.width}`);
      let cursor = at + 2;
      let complete = true;
      for (let field = 0; field < this.width; field++) {
        if (data.length - cursor < 4) {
          complete = false;
          break;
        }
        const length = data.readInt32BE(cursor);
        cursor += 4;
        const index = rows * this.width + field;
        if (length === NULL_FIELD) {
          starts[index] = -1;
          ends[index] = -1;
          continue;
        }
        if (data.length - cursor < length) {
          complete = false;
          break;
        }
        starts[index] = cursor;
        ends[index] = cursor + length;
        cursor += length;
      }
      if (!complete) break;
      at = cursor;
      rows += 1;
    }
    this.keep(data, this.trailerSeen ? data.length : at);
    return { data, rows, width: this.width, starts, ends };
  }

  /** Throws unless the stream ended exactly after its trailer. */
  finish(): void {
    if (!this.trailerSeen || this.tail) throw new Error("The binary COPY stream ended early");
  }

  /** The carried bytes followed by `chunk` (the chunk itself when nothing is carried), in the scratch buffer. */
  private join(chunk: Buffer): Buffer {
    const tail = this.tail;
    if (!tail || tail.length === 0) return chunk;
    this.tail = null;
    const size = tail.length + chunk.length;
    if (this.scratch.length < size) {
      const grown = Buffer.allocUnsafe(Math.max(size * 2, 64 * 1024));
      tail.copy(grown, 0);
      this.scratch = grown;
    } else {
      // The tail may lie inside the scratch buffer itself: Buffer#copy moves overlapping bytes correctly.
      tail.copy(this.scratch, 0);
    }
    chunk.copy(this.scratch, tail.length);
    return this.scratch.subarray(0, size);
  }

  /** Keeps data[at..] for the next chunk (moved only then: the caller is still reading `data`). */
  private keep(data: Buffer, at: number): CopyTuples {
    this.tail = at < data.length ? data.subarray(at) : null;
    return { data, rows: 0, width: this.width, starts: this.starts, ends: this.ends };
  }
}

/** Field `field` of row `row` as text (UTF-8); a NULL there is an error. */
export function fieldText(tuples: CopyTuples, row: number, field: number): string {
  const index = row * tuples.width + field;
  if (tuples.starts[index] < 0) throw new Error(`Field ${field} of a COPY row is NULL`);
  return tuples.data.toString("utf8", tuples.starts[index], tuples.ends[index]);
}
