import { randomBytes, randomUUID } from "node:crypto";

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_PATTERN.test(value);
}

export const newId = randomUUID;

/**
 * A time-ordered UUID (version 7, RFC 9562, with its 12-bit counter, "method 1"): the time in
 * milliseconds, then a counter that orders the ids made in the same millisecond by this process, then
 * random bits. Where rows are listed by their time and then their id, two made in the same
 * millisecond are listed in the order they were made, not at random. Ids stay unique across processes
 * by their 62 random bits; across processes the same-millisecond order is arbitrary.
 */
export function newOrderedId(): string {
  const now = Date.now();
  if (now > ordered.ms) {
    ordered.ms = now;
    ordered.counter = randomBytes(2).readUInt16BE(0) & 0x3ff; // a random start, with room to count up
  } else if (++ordered.counter > 0xfff) {
    // 4,096 ids in one millisecond: borrow the next millisecond rather than repeat an order.
    ordered.ms += 1;
    ordered.counter = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ordered.ms, 0, 6);
  bytes[6] = 0x70 | (ordered.counter >> 8);
  bytes[7] = ordered.counter & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const ordered = { ms: 0, counter: 0 };
