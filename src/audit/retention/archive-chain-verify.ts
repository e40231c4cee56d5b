import { checkLink, type ChainBreak, type ChainReport } from "../log";
import type { AuditRepository, VerifyRow } from "../log";
import { ArchiveTamperedError } from "./archive-errors";
import type { ArchiveRow, CheckpointRow, MonthRow, RetentionRepository } from "./retention.repository";
import { monthEnd, monthLabel, partitionOf } from "./retention-tiers";
import { openNote, parseCheckpointText, type NoteVerifier } from "./signed-note";

export type ArchivedChainReport = ChainReport & { archives: number; checkpoints: number; removedByRetention: number };

type Source = AsyncIterator<VerifyRow>;
type Deps = {
  audit: AuditRepository;
  retention: RetentionRepository;
  /** The lines of a stored archive, checked whole first (an ArchiveTamperedError when it is not what was archived). */
  lines: (archive: ArchiveRow) => AsyncGenerator<string>;
  /** Loaded only when there is a checkpoint to check (a fresh instance has no key yet). */
  verifier: () => Promise<NoteVerifier>;
};

const BATCH = 5000;

class Broken extends Error {
  constructor(readonly report: ChainBreak) {
    super(report.message);
  }
}

/**
 * Verifies the chain as one line across archives and the database: links of archived months come from
 * their archive files (each checked against its manifest, each hash recomputed by the database's
 * audit_event_hash), months on their way out from their detached tables, the rest from audit_chain; all
 * merged in sequence order. Events whose archive retention deleted (its tier's time was up) leave gaps
 * that the deleted archives' manifests account for. Every signed checkpoint in the database, and
 * `external` (a checkpoint kept elsewhere), must carry a valid signature and match the chain.
 */
export async function verifyAcrossArchives(deps: Deps, external: string | null = null): Promise<ArchivedChainReport> {
  const months = await deps.retention.months();
  const archives = await deps.retention.archives();
  const checkpoints: { treeSize: bigint; rootHash: Buffer; label: string; seen: boolean }[] = [];
  let checked = 0;
  const fail = (firstBroken: ChainBreak): ArchivedChainReport => ({
    ok: false,
    checked,
    firstBroken,
    archives: archives.length,
    checkpoints: checkpoints.length,
    removedByRetention: 0,
  });
  const broken = (kind: ChainBreak["kind"], message: string, seq: string | null = null): ChainBreak => ({
    kind,
    seq,
    eventId: null,
    timestamp: null,
    message,
  });
  const notes = await deps.retention.checkpoints();
  const verifier = notes.length || external ? await deps.verifier() : null;
  try {
    for (const row of notes) checkpoints.push(openCheckpoint(row.note, verifier!, row, `month ${monthLabel(row.month)}`));
    if (external) checkpoints.push(openCheckpoint(external, verifier!, null, "the given checkpoint"));
  } catch (error) {
    if (error instanceof Broken) return fail(error.report);
    throw error;
  }
  const head = await deps.audit.chainHead();
  const headSeq = BigInt(head.seq);
  const sources: Source[] = [];
  const removed: { first: bigint; last: bigint }[] = [];
  let removedRows = 0n;
  let liveFrom: Date | null = null;
  const restored: MonthRow[] = [];
  for (const month of months) {
    liveFrom = monthEnd(month.month);
    if (month.state === "detached" || month.state === "archived") {
      sources.push(tableRows(deps, month.tableName, { from: month.month, before: monthEnd(month.month) }));
      continue;
    }
    const own = archives.filter((candidate) => monthLabel(candidate.month) === monthLabel(month.month));
    if (month.state === "restored") {
      restored.push(month);
      sources.push(
        restoredRows(
          deps,
          month,
          own.filter((archive) => archive.state === "stored"),
        ),
      );
      continue;
    }
    for (const archive of own) {
      if (archive.state === "deleted") {
        if (archive.manifest.firstSeq && archive.manifest.lastSeq)
          removed.push({ first: BigInt(archive.manifest.firstSeq), last: BigInt(archive.manifest.lastSeq) });
        removedRows += BigInt(archive.manifest.rows);
      } else sources.push(archiveRows(deps, archive));
    }
  }
  sources.push(liveRows(deps.audit, headSeq, liveFrom));
  const merged = mergeBySeq(sources);
  let previous: VerifyRow | null = null;
  let gapped = 0n;
  try {
    for (;;) {
      const next = await merged.next();
      if (next.done) break;
      const row = next.value;
      const seq = BigInt(row.seq);
      const expected = previous ? BigInt(previous.seq) + 1n : 1n;
      if (seq > expected) {
        const missing = seq - expected;
        const covered = removed.some((range) => range.first <= seq - 1n && range.last >= expected) && gapped + missing <= removedRows;
        if (covered) {
          // Removed by retention: this link's own hash is still checked; its predecessor is gone.
          gapped += missing;
          previous = { ...row, seq: (seq - 1n).toString(), hash: row.prevHash ?? Buffer.alloc(0) };
        }
      }
      const link = checkLink(previous, row, seq);
      if (link) return fail(link);
      for (const checkpoint of checkpoints) {
        if (checkpoint.treeSize === seq && !row.hash.equals(checkpoint.rootHash))
          return fail(broken("altered", `${checkpoint.label}: the chain at ${seq} is not the one its signed checkpoint records`, row.seq));
        if (checkpoint.treeSize === seq - 1n && !checkpoint.seen && row.prevHash && !row.prevHash.equals(checkpoint.rootHash))
          return fail(
            broken("altered", `${checkpoint.label}: the chain at ${seq - 1n} is not the one its signed checkpoint records`, row.seq),
          );
        if (checkpoint.treeSize === seq || checkpoint.treeSize === seq - 1n) checkpoint.seen = true;
      }
      previous = row;
      checked += 1;
    }
  } catch (error) {
    if (error instanceof Broken) return fail(error.report);
    if (error instanceof ArchiveTamperedError) return fail(breakOf(error));
    throw error;
  } finally {
    for (const source of sources) void source.return?.(undefined)?.catch(() => undefined);
  }
  const lastSeq = previous ? BigInt(previous.seq) : 0n;
  if (lastSeq < headSeq)
    return fail(broken("deleted", `events ${lastSeq + 1n} to ${headSeq} are missing from the end of the chain`, (lastSeq + 1n).toString()));
  if (previous && head.hash && !previous.hash.equals(head.hash))
    return fail(broken("relinked", `the last event (sequence ${lastSeq}) is not the one the chain head recorded`, lastSeq.toString()));
  const unseen = checkpoints.find(
    (checkpoint) => !checkpoint.seen && !removed.some((range) => range.first <= checkpoint.treeSize && range.last >= checkpoint.treeSize),
  );
  if (unseen)
    return fail(
      broken(
        "deleted",
        `${unseen.label}: the chain has no event ${unseen.treeSize} its signed checkpoint records`,
        unseen.treeSize.toString(),
      ),
    );
  const beyond = await deps.audit.firstBeyondHead();
  if (beyond)
    return fail({
      kind: "inserted",
      seq: beyond.seq,
      eventId: beyond.id,
      timestamp: beyond.timestamp,
      message: `event ${beyond.id} lies past the end of the chain`,
    });
  for (const month of restored) {
    const strayed = await deps.audit.firstStray({ from: month.month, before: monthEnd(month.month) });
    if (strayed)
      return fail({
        kind: "inserted",
        seq: null,
        eventId: strayed.id,
        timestamp: strayed.timestamp,
        message: `event ${strayed.id} (${strayed.timestamp.toISOString()}) is in restored month ${monthLabel(month.month)} but in none of its archives`,
      });
  }
  const stray = await deps.audit.firstStray({ from: liveFrom, before: null });
  if (stray)
    return fail({
      kind: "inserted",
      seq: null,
      eventId: stray.id,
      timestamp: stray.timestamp,
      message: `event ${stray.id} (${stray.timestamp.toISOString()}) is in the log but in no link of the chain`,
    });
  return {
    ok: true,
    checked,
    firstBroken: null,
    archives: archives.length,
    checkpoints: checkpoints.length,
    removedByRetention: Number(gapped),
  };
}

function openCheckpoint(note: string, verifier: NoteVerifier, row: CheckpointRow | null, label: string) {
  try {
    const checkpoint = parseCheckpointText(openNote(note, verifier));
    if (row && (checkpoint.treeSize !== BigInt(row.treeSize) || !checkpoint.rootHash.equals(row.rootHash)))
      throw new Error("its signed text differs from the recorded size and hash");
    return { treeSize: checkpoint.treeSize, rootHash: checkpoint.rootHash, label, seen: false };
  } catch (error) {
    throw new Broken({
      kind: "altered",
      seq: row?.treeSize ?? null,
      eventId: null,
      timestamp: null,
      message: `${label}: checkpoint rejected: ${(error as Error).message}`,
    });
  }
}

/** Archive or detached-table lines as verify rows, hashes recomputed by the database in batches. */
async function* checkedLines(deps: Deps, lines: AsyncIterable<string>): AsyncGenerator<VerifyRow> {
  let batch: string[] = [];
  const flush = async function* (): AsyncGenerator<VerifyRow> {
    const matches = await deps.retention.hashesMatch(batch);
    for (const text of batch) {
      const line = JSON.parse(text) as { id: string; seq: string; occurredAt: string; prevHash: string | null; hash: string };
      yield {
        id: line.id,
        seq: line.seq,
        timestamp: new Date(line.occurredAt),
        prevHash: line.prevHash === null ? null : Buffer.from(line.prevHash, "hex"),
        hash: Buffer.from(line.hash, "hex"),
        eventExists: true,
        hashMatches: matches.get(line.seq) === true,
      };
    }
    batch = [];
  };
  for await (const line of lines) {
    batch.push(line);
    if (batch.length === BATCH) yield* flush();
  }
  if (batch.length) yield* flush();
}

function archiveRows(deps: Deps, archive: ArchiveRow): AsyncGenerator<VerifyRow> {
  return checkedLines(deps, deps.lines(archive));
}

/** A tampered archive as the chain's first broken link: the archive named, the first bad event or byte range. */
function breakOf(error: ArchiveTamperedError): ChainBreak {
  return {
    kind: error.finding.kind === "missing" ? "deleted" : "altered",
    seq: error.finding.seq,
    eventId: error.finding.eventId,
    timestamp: null,
    message: error.message,
    archive: error.archive.storageKey,
    byteRange: error.finding.bytes,
  };
}

/**
 * A restored month: its events and links in the database, each checked against the same event of its
 * archives (same sequence, event, hash and predecessor) as well as on its own.
 */
async function* restoredRows(deps: Deps, month: MonthRow, archives: ArchiveRow[]): AsyncGenerator<VerifyRow> {
  const label = monthLabel(month.month);
  const fromArchives = mergeBySeq(archives.map((archive) => archiveRows(deps, archive)));
  const fromDatabase = tableRows(deps, partitionOf(month.month), { from: month.month, before: monthEnd(month.month) });
  const at = (row: VerifyRow, kind: ChainBreak["kind"], message: string): Broken =>
    new Broken({ kind, seq: row.seq, eventId: row.id, timestamp: row.timestamp, message: `restored month ${label}: ${message}` });
  try {
    for (;;) {
      const [archived, restoredRow] = await Promise.all([fromArchives.next(), fromDatabase.next()]);
      if (archived.done && restoredRow.done) return;
      if (restoredRow.done)
        throw at(
          archived.value!,
          "deleted",
          `event ${archived.value!.id} (sequence ${archived.value!.seq}) of its archives is not in the database`,
        );
      const row = restoredRow.value;
      if (archived.done) throw at(row, "inserted", `event ${row.id} (sequence ${row.seq}) is in the database but in none of its archives`);
      const copy = archived.value;
      const samePrev = copy.prevHash === null ? row.prevHash === null : row.prevHash !== null && row.prevHash.equals(copy.prevHash);
      if (copy.seq !== row.seq || copy.id !== row.id || !copy.hash.equals(row.hash) || !samePrev)
        throw at(row, "altered", `event ${row.id} (sequence ${row.seq}) is not the one its archive holds at that place`);
      yield row;
    }
  } finally {
    void fromArchives.return(undefined).catch(() => undefined);
    void fromDatabase.return(undefined).catch(() => undefined);
  }
}

async function* tableRows(deps: Deps, tableName: string, range: { from: Date; before: Date }): AsyncGenerator<VerifyRow> {
  async function* lines(): AsyncGenerator<string> {
    for (let after = "0"; ;) {
      const rows = await deps.retention.monthLines(tableName, range, after, BATCH);
      for (const row of rows) yield row.line;
      if (rows.length < BATCH) return;
      after = rows[rows.length - 1].seq;
    }
  }
  yield* checkedLines(deps, lines());
}

async function* liveRows(audit: AuditRepository, headSeq: bigint, from: Date | null): AsyncGenerator<VerifyRow> {
  for (let cursor = 0n; ;) {
    const rows = await audit.verifyBatch(cursor, headSeq, BATCH, { from, before: null });
    yield* rows;
    if (rows.length < BATCH) return;
    cursor = BigInt(rows[rows.length - 1].seq);
  }
}

/** Merges sources each in sequence order into one sequence-ordered stream. */
async function* mergeBySeq(sources: Source[]): AsyncGenerator<VerifyRow> {
  const heads = await Promise.all(sources.map((source) => source.next()));
  for (;;) {
    let best = -1;
    for (let index = 0; index < heads.length; index += 1) {
      const head = heads[index];
      if (head.done) continue;
      if (best < 0 || BigInt(head.value.seq) < BigInt((heads[best] as IteratorYieldResult<VerifyRow>).value.seq)) best = index;
    }
    if (best < 0) return;
    yield (heads[best] as IteratorYieldResult<VerifyRow>).value;
    heads[best] = await sources[best].next();
  }
}
