import type { Sequelize, Transaction } from "sequelize";
import { ConflictError, NotFoundError } from "../../platform/common/errors";
import { isLockTimeout } from "../../platform/common/sql";
import type { Requester } from "../../platform/security/actor";
import type { AuditService } from "../log";
import { ArchiveTamperedError, type TamperFinding } from "./archive-errors";
import type { ArchiveReader } from "./archive-reader";
import type { ArchiveRow, RetentionRepository } from "./retention.repository";
import type { RestoreRepository } from "./restore.repository";
import { monthEnd, monthLabel, parseMonth, partitionOf } from "./retention-tiers";
import { openNote, parseCheckpointText, verifierOf, type NoteSigner } from "./signed-note";

/** Archive lines per restore statement. */
const RESTORE_BATCH = 2000;

const BUSY = "a retention run, restore or release is in progress; try again shortly";

/**
 * Restore and release of an archived month. Restore checks every archive of the month whole before it
 * writes anything, loads events and their chain links back (so restored events carry seq, prevHash and
 * hash), checks each event's hash, the links' order, and the month's last link against its signed
 * checkpoint, all in the transaction that loads them: a tampered archive loads nothing and answers an
 * ArchiveTamperedError naming it. Release removes the events and their links again.
 */
export class MonthRestorer {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: RetentionRepository,
    private readonly restoreRepository: RestoreRepository,
    private readonly audit: AuditService,
    private readonly reader: ArchiveReader,
    private readonly signer: () => Promise<NoteSigner>,
  ) {}

  async restore(monthText: string, requester: Requester | null): Promise<{ month: string; rows: number }> {
    const month = parseMonth(monthText);
    const label = monthLabel(month);
    const range = { from: month, before: monthEnd(month) };
    const result = await this.repository.exclusively(async () => {
      const state = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.state;
      if (state !== "dropped")
        throw new ConflictError(state ? `month ${label} is ${state}, not archived` : `month ${label} was never archived`);
      const archives = (await this.repository.archives()).filter(
        (archive) => monthLabel(archive.month) === label && archive.state === "stored",
      );
      if (archives.length === 0) throw new NotFoundError(`month ${label} has no stored archive left`);
      for (const archive of archives) await this.reader.check(archive);
      const checkpoint = await this.checkpoint(month);
      return this.sequelize.transaction(async (transaction) => {
        await this.repository.createPartition(month, transaction);
        let rows = 0;
        for (const archive of archives) rows += await this.load(archive, transaction);
        const links = await this.restoreRepository.checkLinks(range, transaction);
        if (links.broken) {
          const holder = archiveHolding(archives, links.broken.seq);
          throw tampered(holder, {
            kind: "altered",
            message: `the archives of ${label} do not form one chain: event ${links.broken.id} (sequence ${links.broken.seq}) does not follow the event before it`,
            seq: links.broken.seq,
            eventId: links.broken.id,
          });
        }
        if (checkpoint && (!links.last || links.last.seq !== checkpoint.treeSize || !links.last.hash.equals(checkpoint.rootHash)))
          throw tampered(
            null,
            {
              kind: "checkpoint",
              message: `the archives of ${label} end at sequence ${links.last?.seq ?? "none"}, not at the chain its signed checkpoint records (sequence ${checkpoint.treeSize})`,
              seq: checkpoint.treeSize,
            },
            label,
          );
        await this.repository.setState(month, "restored", transaction, rows);
        await this.audit.record(transaction, {
          type: "audit.archive.restored",
          actor: requester,
          action: "restore",
          resource: { type: "audit-month", id: label },
          changes: { rows: { old: null, new: rows }, tiers: { old: null, new: archives.map((archive) => archive.tier) } },
        });
        return { month: label, rows };
      });
    });
    if (!result) throw new ConflictError(BUSY);
    return result;
  }

  /** Removes a restored month (its events and their links) from the database again; its archives stay. */
  async release(monthText: string, requester: Requester | null): Promise<{ month: string; rows: number }> {
    const month = parseMonth(monthText);
    const label = monthLabel(month);
    const result = await this.repository.exclusively(async () => {
      const row = (await this.repository.months()).find((candidate) => monthLabel(candidate.month) === label);
      if (row?.state !== "restored") throw new ConflictError(`month ${label} is not restored`);
      // The events the restore loaded (it recorded how many); a release reads neither partition.
      const rows = Number(row.rows);
      try {
        return await this.sequelize.transaction(async (transaction) => {
          await this.restoreRepository.release(partitionOf(month), { from: month, before: monthEnd(month) }, transaction);
          await this.repository.setState(month, "dropped", transaction);
          await this.audit.record(transaction, {
            type: "audit.archive.released",
            actor: requester,
            action: "release",
            resource: { type: "audit-month", id: label },
            changes: { rows: { old: rows, new: null } },
          });
          return { month: label, rows };
        });
      } catch (error) {
        if (isLockTimeout(error)) throw new ConflictError("long reads keep the audit log busy; try again shortly");
        throw error;
      }
    });
    if (!result) throw new ConflictError(BUSY);
    return result;
  }

  /** One archive's lines back into the database, each line's hash recomputed by the database first. */
  private async load(archive: ArchiveRow, transaction: Transaction): Promise<number> {
    let rows = 0;
    let batch: string[] = [];
    const flush = async () => {
      const matches = await this.repository.hashesMatch(batch);
      for (const [offset, text] of batch.entries()) {
        const line = JSON.parse(text) as { id: string; seq: string };
        if (matches.get(line.seq) !== true)
          throw tampered(archive, {
            kind: "altered",
            message: `the archive of ${monthLabel(archive.month)} ${archive.tier} (${archive.storageKey}) holds event ${line.id} (sequence ${line.seq}), which no longer matches its hash`,
            seq: line.seq,
            eventId: line.id,
            line: rows + offset + 1,
          });
      }
      await this.restoreRepository.insertLines(batch, transaction);
      rows += batch.length;
      batch = [];
    };
    for await (const line of this.reader.lines(archive)) {
      batch.push(line);
      if (batch.length === RESTORE_BATCH) await flush();
    }
    if (batch.length) await flush();
    return rows;
  }

  /** The month's signed checkpoint, its signature checked with the instance's key; null for a month without events. */
  private async checkpoint(month: Date): Promise<{ treeSize: string; rootHash: Buffer } | null> {
    const label = monthLabel(month);
    const row = (await this.repository.checkpoints()).find((candidate) => monthLabel(candidate.month) === label);
    if (!row) return null;
    try {
      const checkpoint = parseCheckpointText(openNote(row.note, verifierOf(await this.signer())));
      if (checkpoint.treeSize !== BigInt(row.treeSize) || !checkpoint.rootHash.equals(row.rootHash))
        throw new Error("its signed text differs from the recorded size and hash");
      return { treeSize: row.treeSize, rootHash: checkpoint.rootHash };
    } catch (error) {
      throw tampered(
        null,
        {
          kind: "checkpoint",
          message: `the signed checkpoint of ${label} is rejected: ${(error as Error).message}`,
          seq: row.treeSize,
        },
        label,
      );
    }
  }
}

function archiveHolding(archives: ArchiveRow[], seq: string): ArchiveRow {
  const at = BigInt(seq);
  return (
    archives.find(
      (archive) => archive.manifest.firstSeq && BigInt(archive.manifest.firstSeq) <= at && BigInt(archive.manifest.lastSeq!) >= at,
    ) ?? archives[0]
  );
}

function tampered(
  archive: ArchiveRow | null,
  finding: Partial<TamperFinding> & Pick<TamperFinding, "kind" | "message">,
  month?: string,
): ArchiveTamperedError {
  return new ArchiveTamperedError(
    archive
      ? { id: archive.id, month: monthLabel(archive.month), tier: archive.tier, storageKey: archive.storageKey }
      : { id: null, month: month ?? "", tier: null, storageKey: null },
    { seq: null, eventId: null, line: null, bytes: null, ...finding },
  );
}
