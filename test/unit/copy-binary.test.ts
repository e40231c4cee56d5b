import { CopyBinaryDecoder, fieldText, type CopyTuples } from "../../src/platform/db/copy-binary";

/** A binary COPY stream as PostgreSQL writes it, for rows of text fields (null: NULL). */
function copyStream(rows: (string | null)[][], extension = Buffer.alloc(0)): Buffer {
  const parts = [Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), int32(0), int32(extension.length), extension];
  for (const row of rows) {
    parts.push(int16(row.length));
    for (const field of row) {
      if (field === null) parts.push(int32(-1));
      else {
        const bytes = Buffer.from(field, "utf8");
        parts.push(int32(bytes.length), bytes);
      }
    }
  }
  parts.push(int16(-1));
  return Buffer.concat(parts);
}
const int16 = (value: number) => Buffer.from([(value >> 8) & 0xff, value & 0xff]);
function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
}

function fieldsOf(tuples: CopyTuples): (string | null)[][] {
  return Array.from({ length: tuples.rows }, (_, row) =>
    Array.from({ length: tuples.width }, (_, field) =>
      tuples.starts[row * tuples.width + field] < 0 ? null : fieldText(tuples, row, field),
    ),
  );
}

const ROWS = [
  ["2024-01-01T00:00:00.000001Z", "a", '{"x":"日本 🎉"}'],
  ["2024-01-02T00:00:00.000000Z", "", null],
  ["2024-01-03T00:00:00.000000Z", "c", 'line\r\nbreak,"quoted"'],
];

describe("binary COPY decoding", () => {
  test("the rows come back whole, however the stream is cut into chunks", () => {
    const stream = copyStream(ROWS, Buffer.from("ext"));
    for (const size of [1, 2, 3, 7, 19, 64, stream.length]) {
      const decoder = new CopyBinaryDecoder(3);
      const rows: (string | null)[][] = [];
      for (let at = 0; at < stream.length; at += size) rows.push(...fieldsOf(decoder.decode(stream.subarray(at, at + size))));
      decoder.finish();
      expect(rows).toEqual(ROWS);
    }
  });

  test("a stream cut short, of another width or not binary COPY at all is an error, not fewer rows", () => {
    const stream = copyStream(ROWS);
    const short = new CopyBinaryDecoder(3);
    short.decode(stream.subarray(0, stream.length - 5));
    expect(() => short.finish()).toThrow(/ended early/);
    expect(() => new CopyBinaryDecoder(2).decode(stream)).toThrow(/3 fields, not 2/);
    expect(() => new CopyBinaryDecoder(3).decode(Buffer.from("id,name\r\n1,x\r\n1234567890"))).toThrow(/Not a binary COPY/);
  });
});
