import type { Sequelize } from "sequelize";
import { manifestPathOf } from "../../platform/files/archive-writer";
import { BadRequestError, ConflictError, NotFoundError } from "../../platform/common/errors";
import { newId } from "../../platform/common/ids";
import { isLockTimeout } from "../../platform/common/sql";
import type { Logger } from "../../platform/common/logger";
import type { RetentionConfig } from "../../platform/config/config";
import { clampLimit, matchesFilter, parseFilter, type AuditFilterInput } from "../log";
import type { AuditEvent, AuditService } from "../log";
import type { AuditRepository } from "../log";
import { verifyAcrossArchives, type ArchivedChainReport } from "./archive-chain-verify";
import type { ArchiveStore } from "./archive-store";
import { eventOfLine, readArchiveLines, type ArchiveLine } from "./archive-lines";
import { MonthArchiver, type MovedMonth } from "./month-archiver";
import type { ArchiveRow, MonthRow, RetentionRepository, RunRow } from "./retention.repository";
import {
  monthEnd,
  monthLabel,
  parseMonth,
  parseSettings,
  partitionOf,
  pastDatabaseWindow,
  TIER_NAMES,
  TIERS,
  type RetentionSettings,
  type Tier,
} from "./retention-tiers";
import { verifierOf, type NoteSigner } from "./signed-note";

/** Detaching a month is tried this many times in a run, this far apart, before the run leaves it for the next. */
const DETACH_ATTEMPTS = 3;
const DETACH_PAUSE_MS = 1000;

export type RetentionStep = "detached" | "written" | "archived" | "dropped";
/** Where a retention run may be interrupted on purpose (tests): after each committed or stored step. */
export type RetentionHooks = { afterStep?: (step: RetentionStep, month: string) => void | Promise<void> };

export type RunOutcome = { moved: MovedMonth[]; kept: KeptMonth[]; deleted: DeletedArchive[]; error: string | null };
export type KeptMonth = { month: string; reason: string; until: string | null };
export type DeletedArchive = { month: string; tier: Tier; rows: number };

/** Archive lines per restore statement. */
const RESTORE_BATCH = 2000;

export class RetentionService {
  private readonly archiver: MonthArchiver;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: RetentionRepository,
    private readonly audit: AuditService,
    private readonly auditRepository: AuditRepository,
    private readonly store: ArchiveStore,
    private readonly signer: () => Promise<NoteSigner>,
    private readonly config: RetentionConfig,
    private readonly logger?: Logger,
    private readonly hooks: RetentionHooks = {},
  ) {
    this.archiver = new MonthArchiver(sequelize, repository, audit, store, signer, config, (step, month) => hooks.afterStep?.(step, month));
  }

  get storeLocation(): string {
    return this.store.where;
  }

  /** The tiers in force: as an administrator last set them, else as configured, else Standard with the default window. */
  async settings(): Promise<RetentionSettings & { changedAt: Date | null }> {
    const row = await this.repository.settings();
    if (row.updatedAt) return { ...row, changedAt: row.updatedAt };
    const [defaultTier, ...rules] = (this.config.tiers ?? row.defaultTier).split(",").map((part) => part.trim());
    const configured = parseSettings({
      databaseDays: this.config.databaseDays ?? row.databaseDays,
      defaultTier,
      categoryTiers: rules.map((rule) => {
        const [pattern, tier] = rule.split("=");
        return { pattern: pattern ?? "", tier: tier ?? "" };
      }),
    });
    return { ...configured, changedAt: null };
  }

  async updateSettings(input: { databaseDays: number; defaultTier: string; categoryTiers: { pattern: string; tier: string }[] }) {
    const next = parseSettings(input);
    const before = await this.settings();
    await this.sequelize.transaction(async (transaction) => {
      await this.repository.updateSettings(next, transaction);
      await this.audit.record(transaction, {
        type: "audit.retention.updated",
        action: "update",
        resource: { type: "retention", id: "settings" },
        changes: {
          databaseDays: { old: before.databaseDays, new: next.databaseDays },
          defaultTier: { old: before.defaultTier, new: next.defaultTier },
          categoryTiers: { old: before.categoryTiers, new: next.categoryTiers },
        },
      });
    });
    return this.settings();
  }

  lastRun(): Promise<RunRow | null> {
    return this.repository.lastRun();
  }

  months(): Promise<MonthRow[]> {
    return this.repository.months();
  }

  archives(): Promise<ArchiveRow[]> {
    return this.repository.archives();
  }

  checkpoints() {
    return this.repository.checkpoints();
  }

  /**
   * One retention run (the scheduled job): months past the database window leave the database into
   * verified archives, months interrupted in a previous run are finished first, and archives past their
   * tier's time are deleted. Null when another run, restore or release holds the lock.
   */
  async run(now: Date = new Date()): Promise<RunOutcome | null> {
    return this.repository.exclusively(async () => {
      const runId = newId();
      await this.repository.startRun(runId, now);
      const outcome: RunOutcome = { moved: [], kept: [], deleted: [], error: null };
      try {
        await this.audit.chainCommitted();
        const settings = await this.settings();
        const states = new Map((await this.repository.months()).map((row) => [monthLabel(row.month), row]));
        for (const row of states.values())
          if (row.state === "detached" || row.state === "archived")
            outcome.moved.push(await this.advance(row.month, row.tableName, settings));
        const current = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
        for (const { month, tableName } of await this.repository.attachedMonths()) {
          if (month >= current) continue;
          const label = monthLabel(month);
          if (states.get(label)?.state === "restored") {
            outcome.kept.push({ month: label, reason: "restored from its archive", until: null });
            continue;
          }
          if (!pastDatabaseWindow(month, settings.databaseDays, now)) {
            const until = new Date(monthEnd(month).getTime() + settings.databaseDays * 86_400_000).toISOString();
            outcome.kept.push({ month: label, reason: `within the ${settings.databaseDays}-day database window`, until });
            continue;
          }
          const counts = await this.repository.monthCounts(tableName, { from: month, before: monthEnd(month) });
          if (counts.events !== counts.links) {
            outcome.kept.push({
              month: label,
              reason: `${counts.events - counts.links} of its events are not on the hash chain; run audit verify`,
              until: null,
            });
            // Months leave oldest first, so the chain's archived part always ends before its live part.
            break;
          }
          if (!(await this.detach(month, tableName, counts.events))) {
            outcome.kept.push({ month: label, reason: "long reads kept the audit log busy; the next run tries again", until: null });
            break;
          }
          await this.hooks.afterStep?.("detached", label);
          outcome.moved.push(await this.advance(month, tableName, settings));
        }
        outcome.deleted = await this.deleteExpired(now, states);
      } catch (error) {
        outcome.error = (error as Error).message;
        this.logger?.error({ err: error }, "audit retention run failed");
      }
      await this.repository.finishRun(runId, outcome);
      if (outcome.error) throw new Error(outcome.error);
      return outcome;
    });
  }

  /**
   * Step 1, tried DETACH_ATTEMPTS times: each attempt waits at most PARTITION_LOCK_WAIT_MS for the audit
   * log's lock, so audit writes never queue behind it for longer. False when every attempt found the
   * log busy (a long export or report holding it).
   */
  private async detach(month: Date, tableName: string, rows: number): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.sequelize.transaction((transaction) => this.repository.detach(month, tableName, rows, transaction));
        return true;
      } catch (error) {
        if (!isLockTimeout(error)) throw error;
        this.logger?.warn({ month: monthLabel(month), attempt }, "audit retention: the audit log is busy, detaching later");
        if (attempt === DETACH_ATTEMPTS) return false;
        await new Promise((resolve) => setTimeout(resolve, DETACH_PAUSE_MS));
      }
    }
  }

  /** Takes a detached (or archived) month the rest of the way: archives written and verified, then the table dropped. */
  private async advance(month: Date, tableName: string, settings: RetentionSettings): Promise<MovedMonth> {
    const label = monthLabel(month);
    let state = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.state;
    let moved: MovedMonth = { month: label, rows: 0, archives: [] };
    if (state === "detached") {
      moved = await this.archiver.archive(month, tableName, settings);
      state = "archived";
    } else {
      const archives = (await this.repository.archives()).filter((archive) => monthLabel(archive.month) === label);
      moved.archives = archives.map((archive) => ({ tier: archive.tier, rows: archive.manifest.rows, sha256: archive.manifest.sha256 }));
      moved.rows = archives.reduce((sum, archive) => sum + archive.manifest.rows, 0);
    }
    if (state === "archived") {
      const range = { from: month, before: monthEnd(month) };
      await this.sequelize.transaction((transaction) => this.repository.drop(month, tableName, range, transaction));
      await this.hooks.afterStep?.("dropped", label);
    }
    return moved;
  }

  /** Archives whose tier's time is up are deleted from the store, then marked deleted with an audit event (a restored month's stay). */
  private async deleteExpired(now: Date, states: Map<string, MonthRow>): Promise<DeletedArchive[]> {
    const deleted: DeletedArchive[] = [];
    for (const archive of await this.repository.archives()) {
      if (archive.state !== "stored" || archive.keepUntil > now) continue;
      const label = monthLabel(archive.month);
      if (states.get(label)?.state === "restored") continue;
      await this.store.remove(archive.storageKey);
      await this.store.remove(manifestPathOf(archive.storageKey));
      await this.sequelize.transaction(async (transaction) => {
        await this.repository.markDeleted(archive.id, transaction);
        await this.audit.record(transaction, {
          type: "audit.archive.deleted",
          action: "delete",
          resource: { type: "audit-archive", id: archive.id, label: `${label} ${archive.tier}` },
          changes: { manifest: { old: archive.manifest, new: null } },
        });
      });
      deleted.push({ month: label, tier: archive.tier, rows: archive.manifest.rows });
    }
    return deleted;
  }

  /**
   * `audit verify` over archives and the database as one chain, with every signed checkpoint, and
   * `externalCheckpoint` (a note kept elsewhere) when given. Links everything committed first.
   */
  async verify(externalCheckpoint: string | null = null): Promise<ArchivedChainReport> {
    await this.audit.chainCommitted();
    return verifyAcrossArchives(
      {
        audit: this.auditRepository,
        retention: this.repository,
        lines: (archive) => this.lines(archive),
        verifier: async () => verifierOf(await this.signer()),
      },
      externalCheckpoint,
    );
  }

  /** The checkpoint verifier key (public), for publishing beside checkpoints. */
  async verifierKey(): Promise<string> {
    return (await this.signer()).verifierKey;
  }

  /** The lines of one stored archive, checked against its manifest as they are read. */
  async *lines(archive: ArchiveRow): AsyncGenerator<string> {
    yield* readArchiveLines(await this.store.open(archive.storageKey), archive.manifest);
  }

  /**
   * Searches chosen archives with the filters of live search, streaming each file: archives in the order
   * given, events in chain order within each. A page ends after `first` matches; the cursor is the
   * position reached, so the next page reads on from there.
   */
  async search(
    archiveIds: string[],
    filter: AuditFilterInput | null | undefined,
    options: { first?: number | null; after?: string | null },
  ): Promise<{ events: AuditEvent[]; hasMore: boolean; nextCursor: string | null; scanned: number }> {
    if (archiveIds.length === 0 || archiveIds.length > 100) throw new BadRequestError("choose 1 to 100 archives");
    const match = matchesFilter(parseFilter(filter));
    const limit = clampLimit(options.first);
    const all = new Map((await this.repository.archives()).map((archive) => [archive.id, archive]));
    const chosen = archiveIds.map((id) => {
      const archive = all.get(id);
      if (!archive || archive.state !== "stored") throw new NotFoundError(`archive ${id} is not stored`);
      return archive;
    });
    const start = options.after ? decodeArchiveCursor(options.after, chosen.length) : { archive: 0, line: 0 };
    if (!options.after)
      await this.sequelize.transaction((transaction) =>
        this.audit.record(transaction, {
          type: "audit.archive.searched",
          action: "search",
          resource: {
            type: "audit-archive",
            id: chosen
              .map((archive) => archive.id)
              .join(",")
              .slice(0, 500),
          },
          changes: { filter: { old: null, new: (filter ?? {}) as Record<string, unknown> } },
        }),
      );
    const events: AuditEvent[] = [];
    let scanned = 0;
    for (let index = start.archive; index < chosen.length; index += 1) {
      let line = 0;
      for await (const text of this.lines(chosen[index])) {
        line += 1;
        if (index === start.archive && line <= start.line) continue;
        scanned += 1;
        const event = eventOfLine(JSON.parse(text) as ArchiveLine);
        if (!match(event)) continue;
        if (events.length === limit) return { events, hasMore: true, nextCursor: encodeArchiveCursor(index, line - 1), scanned };
        events.push(event);
      }
    }
    return { events, hasMore: false, nextCursor: null, scanned };
  }

  /** Loads an archived month back into the database (its partition again), searchable like any other; audited. */
  async restore(monthText: string): Promise<{ month: string; rows: number }> {
    const month = parseMonth(monthText);
    const label = monthLabel(month);
    const result = await this.repository.exclusively(async () => {
      const state = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.state;
      if (state !== "dropped")
        throw new ConflictError(state ? `month ${label} is ${state}, not archived` : `month ${label} was never archived`);
      const archives = (await this.repository.archives()).filter(
        (archive) => monthLabel(archive.month) === label && archive.state === "stored",
      );
      if (archives.length === 0) throw new NotFoundError(`month ${label} has no stored archive left`);
      return this.sequelize.transaction(async (transaction) => {
        await this.repository.createPartition(month, transaction);
        let rows = 0;
        for (const archive of archives) {
          let batch: string[] = [];
          for await (const line of this.lines(archive)) {
            batch.push(line);
            if (batch.length === RESTORE_BATCH) {
              await this.repository.insertLines(batch, transaction);
              rows += batch.length;
              batch = [];
            }
          }
          if (batch.length) await this.repository.insertLines(batch, transaction);
          rows += batch.length;
        }
        await this.repository.setState(month, "restored", transaction);
        await this.audit.record(transaction, {
          type: "audit.archive.restored",
          action: "restore",
          resource: { type: "audit-month", id: label },
          changes: { rows: { old: null, new: rows }, tiers: { old: null, new: archives.map((archive) => archive.tier) } },
        });
        return { month: label, rows };
      });
    });
    if (!result) throw new ConflictError("a retention run, restore or release is in progress; try again shortly");
    return result;
  }

  /** Removes a restored month from the database again (its archives stay); audited. */
  async release(monthText: string): Promise<{ month: string }> {
    const month = parseMonth(monthText);
    const label = monthLabel(month);
    const result = await this.repository.exclusively(async () => {
      const state = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.state;
      if (state !== "restored") throw new ConflictError(`month ${label} is not restored`);
      try {
        await this.sequelize.transaction(async (transaction) => {
          await this.repository.dropPartition(partitionOf(month), transaction);
          await this.repository.setState(month, "dropped", transaction);
          await this.audit.record(transaction, {
            type: "audit.archive.released",
            action: "release",
            resource: { type: "audit-month", id: label },
          });
        });
      } catch (error) {
        if (isLockTimeout(error)) throw new ConflictError("long reads keep the audit log busy; try again shortly");
        throw error;
      }
      return { month: label };
    });
    if (!result) throw new ConflictError("a retention run, restore or release is in progress; try again shortly");
    return result;
  }

  static tiers() {
    return TIER_NAMES.map((name) => ({ name, retentionDays: TIERS[name].retentionDays, meaning: TIERS[name].meaning }));
  }
}

function encodeArchiveCursor(archive: number, line: number): string {
  return Buffer.from(`${archive}:${line}`).toString("base64url");
}

function decodeArchiveCursor(cursor: string, archives: number): { archive: number; line: number } {
  const match = /^(\d{1,3}):(\d{1,12})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || Number(match[1]) >= archives) throw new BadRequestError("cursor is invalid");
  return { archive: Number(match[1]), line: Number(match[2]) };
}
