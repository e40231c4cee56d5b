import type { AuditRepository, VerifyRow } from "./audit.repository";

export type ChainBreak = {
  kind: "altered" | "deleted" | "inserted" | "relinked";
  /** Null for an inserted event that no link names. */
  seq: string | null;
  eventId: string | null;
  timestamp: Date | null;
  message: string;
  /** The archive (its storage key) the break lies in, when it lies in one. */
  archive?: string | null;
  /** The archive file's bytes (`from-to`) that are wrong, when a fault of its bytes (a corrupt or cut gzip) is all that can be named. */
  byteRange?: string | null;
};

export type ChainReport = { ok: boolean; checked: number; firstBroken: ChainBreak | null };

const VERIFY_BATCH = 5000;

/**
 * Walks the chain in order and reports the first link that does not hold: a link whose event no
 * longer matches its hash (altered), a missing sequence number or a link whose event is gone
 * (deleted), a repeated sequence number, links past the recorded head or an event no link names
 * (inserted), or a link whose predecessor's hash changed (relinked). The caller links every event
 * committed so far first, so an event without a link can only have been written behind the application.
 */
export async function verifyChain(repository: AuditRepository, range: { from: Date | null; before: Date | null }): Promise<ChainReport> {
  // The walk stops at the head as it is now; events linked meanwhile are the next run's business.
  const head = await repository.chainHead();
  const headSeq = BigInt(head.seq);
  let previous: VerifyRow | null = null;
  let checked = 0;
  let cursor = 0n;
  for (;;) {
    const rows = await repository.verifyBatch(cursor, headSeq, VERIFY_BATCH, range);
    for (const row of rows) {
      const seq = BigInt(row.seq);
      if (previous === null && seq > 1n) previous = await repository.bySeq(seq - 1n);
      const broken = checkLink(previous, row, seq);
      if (broken) return { ok: false, checked, firstBroken: broken };
      previous = row;
      checked += 1;
    }
    if (rows.length < VERIFY_BATCH) break;
    cursor = BigInt(rows[rows.length - 1].seq);
  }
  const broken = (kind: ChainBreak["kind"], seq: bigint | null, message: string, at?: { id: string; timestamp: Date }): ChainReport => ({
    ok: false,
    checked,
    firstBroken: { kind, seq: seq?.toString() ?? null, eventId: at?.id ?? null, timestamp: at?.timestamp ?? null, message },
  });
  if (!range.before) {
    const lastSeq = previous ? BigInt(previous.seq) : 0n;
    if (lastSeq < headSeq)
      return broken("deleted", lastSeq + 1n, `events ${lastSeq + 1n} to ${headSeq} are missing from the end of the chain`);
    if (previous && head.hash && !previous.hash.equals(head.hash)) {
      return broken("relinked", lastSeq, `the last event (sequence ${lastSeq}) is not the one the chain head recorded`);
    }
    const beyond = await repository.firstBeyondHead();
    if (beyond) return broken("inserted", BigInt(beyond.seq), `event ${beyond.id} lies past the end of the chain`, beyond);
  }
  const stray = await repository.firstStray(range);
  if (stray) {
    const at = stray.timestamp.toISOString();
    return broken("inserted", null, `event ${stray.id} (${at}) is in the log but in no link of the chain`, stray);
  }
  return { ok: true, checked, firstBroken: null };
}

/** The first way link `row` (sequence `seq`) fails to follow `previous`, or null when it holds. Pure. */
export function checkLink(previous: VerifyRow | null, row: VerifyRow, seq: bigint): ChainBreak | null {
  const at = (kind: ChainBreak["kind"], message: string): ChainBreak => ({
    kind,
    seq: row.seq,
    eventId: row.id,
    timestamp: row.timestamp,
    message,
  });
  const expected = previous ? BigInt(previous.seq) + 1n : 1n;
  if (previous && seq === BigInt(previous.seq)) return at("inserted", `event ${row.id} repeats sequence number ${row.seq}`);
  if (seq > expected) {
    return {
      ...at("deleted", `events ${expected} to ${seq - 1n} are missing before event ${row.id}`),
      seq: expected.toString(),
    };
  }
  if (!row.eventExists)
    return at("deleted", `events ${row.seq} to ${row.seq} are missing: link ${row.seq} names event ${row.id}, which is gone`);
  if (!row.hashMatches) return at("altered", `event ${row.id} (sequence ${row.seq}) no longer matches its hash`);
  const expectedPrev = previous?.hash ?? null;
  const linked = expectedPrev === null ? row.prevHash === null : row.prevHash !== null && row.prevHash.equals(expectedPrev);
  if (!linked) return at("relinked", `event ${row.id} (sequence ${row.seq}) does not follow the event before it`);
  return null;
}
