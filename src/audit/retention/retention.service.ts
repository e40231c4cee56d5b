import type { Sequelize } from "sequelize";
import { manifestPathOf } from "../../platform/files/archive-writer";
import { newId } from "../../platform/common/ids";
import { isLockTimeout } from "../../platform/common/sql";
import type { Logger } from "../../platform/common/logger";
import type { RetentionConfig } from "../../platform/config/config";
import { requesterOf, type Actor, type Requester } from "../../platform/security/actor";
import type { AuditFilterInput, AuditRepository, AuditService } from "../log";
import { verifyAcrossArchives, type ArchivedChainReport } from "./archive-chain-verify";
import { ReadBudget, UNLIMITED } from "./archive-errors";
import { ArchiveReader } from "./archive-reader";
import { archiveBytes, searchArchives, type ArchiveSearchPage } from "./archive-search";
import type { ArchiveStore } from "./archive-store";
import { MonthArchiver, type MovedMonth } from "./month-archiver";
import { MonthRestorer } from "./month-restorer";
import { RestoreRepository } from "./restore.repository";
import type { ArchiveRow, MonthRow, RetentionRepository, RunRow } from "./retention.repository";
import {
  monthEnd,
  monthLabel,
  parseSettings,
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

export class RetentionService {
  private readonly archiver: MonthArchiver;
  private readonly reader: ArchiveReader;
  private readonly restorer: MonthRestorer;
  private readonly budgets = new WeakMap<object, ReadBudget>();

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
    this.reader = new ArchiveReader(store, { maxLineBytes: config.maxLineBytes }, (lines) => repository.hashesMatch(lines));
    this.restorer = new MonthRestorer(sequelize, repository, new RestoreRepository(sequelize), audit, this.reader, signer);
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

  async updateSettings(
    input: { databaseDays: number; defaultTier: string; categoryTiers: { pattern: string; tier: string }[] },
    actor: Actor | null = null,
  ) {
    const next = parseSettings(input);
    const before = await this.settings();
    await this.sequelize.transaction(async (transaction) => {
      await this.repository.updateSettings(next, transaction);
      await this.audit.record(transaction, {
        type: "audit.retention.updated",
        actor,
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
  async run(now: Date = new Date(), actor: Actor | null = null): Promise<RunOutcome | null> {
    const requester = actor ? requesterOf(actor) : null;
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
            outcome.moved.push(await this.advance(row.month, row.tableName, settings, requester));
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
          if (counts.events === 0) {
            // An empty month (a partition made ahead, a quiet month before the first boot) has nothing to archive.
            outcome.kept.push({ month: label, reason: "holds no events: nothing to archive", until: null });
            continue;
          }
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
          outcome.moved.push(await this.advance(month, tableName, settings, requester));
        }
        outcome.deleted = await this.deleteExpired(now, states, requester);
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
  private async advance(month: Date, tableName: string, settings: RetentionSettings, requester: Requester | null): Promise<MovedMonth> {
    const label = monthLabel(month);
    let state = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.state;
    let moved: MovedMonth = { month: label, rows: 0, archives: [] };
    if (state === "detached") {
      moved = await this.archiver.archive(month, tableName, settings, requester);
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
  private async deleteExpired(now: Date, states: Map<string, MonthRow>, requester: Requester | null): Promise<DeletedArchive[]> {
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
          actor: requester,
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
  async verify(externalCheckpoint: string | null = null, budget: ReadBudget = UNLIMITED()): Promise<ArchivedChainReport> {
    const bytes = await this.verificationBytes();
    budget.charge(bytes, "verifying the chain across archives");
    await this.audit.chainCommitted();
    return verifyAcrossArchives(
      {
        audit: this.auditRepository,
        retention: this.repository,
        lines: (archive) => this.reader.lines(archive),
        verifier: async () => verifierOf(await this.signer()),
      },
      externalCheckpoint,
    );
  }

  /** The checkpoint verifier key (public), for publishing beside checkpoints. */
  async verifierKey(): Promise<string> {
    return (await this.signer()).verifierKey;
  }

  /**
   * Searches chosen archives with the filters of live search (archive-search.ts): an id given twice
   * counts once; the bytes the page may read are charged to `budget` first.
   */
  search(
    archiveIds: string[],
    filter: AuditFilterInput | null | undefined,
    options: { first?: number | null; after?: string | null },
    actor: Actor | null = null,
    budget: ReadBudget = this.requestBudget(),
  ): Promise<ArchiveSearchPage> {
    return searchArchives(
      { sequelize: this.sequelize, repository: this.repository, audit: this.audit, reader: this.reader },
      { archiveIds, filter, ...options, requester: actor ? requesterOf(actor) : null, budget },
    );
  }

  /** Loads an archived month back into the database with its chain links (month-restorer.ts); audited. */
  restore(monthText: string, actor: Actor | null = null): Promise<{ month: string; rows: number }> {
    return this.restorer.restore(monthText, actor ? requesterOf(actor) : null);
  }

  /** Removes a restored month from the database again (its archives stay); answers how many events left; audited. */
  release(monthText: string, actor: Actor | null = null): Promise<{ month: string; rows: number }> {
    return this.restorer.release(monthText, actor ? requesterOf(actor) : null);
  }

  /** A fresh budget of archive bytes for one request (AUDIT_ARCHIVE_REQUEST_BYTES). */
  requestBudget(): ReadBudget {
    return new ReadBudget(this.config.requestBytes);
  }

  /** The budget of the request `key` (a request context): every field of one request draws on the same one. */
  budgetOf(key: object): ReadBudget {
    let budget = this.budgets.get(key);
    if (!budget) this.budgets.set(key, (budget = this.requestBudget()));
    return budget;
  }

  /** The bytes verifying the whole chain reads from archives (their manifests' sizes): what its cost counts. */
  async verificationBytes(): Promise<number> {
    return (await this.repository.archives()).filter((archive) => archive.state === "stored").reduce((sum, a) => sum + archiveBytes(a), 0);
  }

  /** The bytes a search of `archiveIds` reads at most (each id once), from the manifests. */
  async searchBytes(archiveIds: string[]): Promise<number> {
    const ids = new Set(archiveIds);
    return (await this.repository.archives()).filter((archive) => ids.has(archive.id)).reduce((sum, a) => sum + archiveBytes(a), 0);
  }

  static tiers() {
    return TIER_NAMES.map((name) => ({ name, retentionDays: TIERS[name].retentionDays, meaning: TIERS[name].meaning }));
  }
}
