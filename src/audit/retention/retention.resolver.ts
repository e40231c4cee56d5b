import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { AuditEventFilterInput } from "../log";
import type { Actor } from "../../platform/security/actor";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { RunRow } from "./retention.repository";
import { RetentionService, type RunOutcome } from "./retention.service";
import { monthLabel } from "./retention-tiers";
import {
  AuditArchiveMonthResultType,
  AuditArchiveSearchResultType,
  AuditArchiveType,
  AuditCheckpointType,
  AuditRetentionType,
  RetentionRunType,
  RetentionSettingsInput,
} from "./retention.type";

function runOf(row: RunRow | (RunOutcome & { startedAt: Date; finishedAt: Date })): RetentionRunType {
  const moved = row.moved as RunOutcome["moved"];
  return {
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    moved: moved.map((month) => ({ ...month, archives: month.archives.map((a) => `${a.tier} ${a.rows} ${a.sha256}`) })),
    kept: row.kept as RunOutcome["kept"],
    deleted: row.deleted as RunOutcome["deleted"],
    error: row.error,
  };
}

@Resolver()
export class RetentionResolver {
  @Authorized()
  @Query(() => AuditRetentionType, {
    description: "Retention tiers in force, the months in retention and the latest run. Administrators and auditors.",
  })
  async auditRetention(@Ctx() { services }: RequestContext): Promise<AuditRetentionType> {
    const retention = services.retention;
    const [settings, lastRun, months, checkpointKey] = await Promise.all([
      retention.settings(),
      retention.lastRun(),
      retention.months(),
      retention.verifierKey(),
    ]);
    return {
      ...settings,
      tiers: RetentionService.tiers(),
      lastRun: lastRun ? runOf(lastRun) : null,
      months: months.map((row) => ({ month: monthLabel(row.month), state: row.state })),
      storage: retention.storeLocation,
      checkpointKey,
    };
  }

  @Authorized()
  @Mutation(() => AuditRetentionType, { description: "Changes the database window and tiers (audited). Administrators." })
  async updateAuditRetention(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => RetentionSettingsInput) input: RetentionSettingsInput,
  ) {
    await context.services.retention.updateSettings(input, actor);
    return this.auditRetention(context);
  }

  @Authorized()
  @Mutation(() => RetentionRunType, { description: "Runs the retention job now (it also runs hourly). Administrators." })
  async runAuditRetention(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor): Promise<RetentionRunType> {
    const startedAt = new Date();
    const outcome = await services.retention.run(new Date(), actor);
    if (!outcome) return { startedAt, finishedAt: null, moved: [], kept: [], deleted: [], error: "another retention run is in progress" };
    return runOf({ ...outcome, startedAt, finishedAt: new Date() });
  }

  @Authorized()
  @Query(() => [AuditArchiveType], { description: "Every archive with its manifest, newest month first (deleted ones keep theirs)." })
  async auditArchives(@Ctx() { services }: RequestContext): Promise<AuditArchiveType[]> {
    const [archives, months] = await Promise.all([services.retention.archives(), services.retention.months()]);
    const restored = new Set(months.filter((row) => row.state === "restored").map((row) => monthLabel(row.month)));
    return archives.map((archive) => ({
      ...archive,
      month: monthLabel(archive.month),
      manifest: archive.manifest,
      restored: restored.has(monthLabel(archive.month)),
    }));
  }

  @Authorized()
  @Query(() => AuditArchiveSearchResultType, {
    description:
      "Searches inside chosen archives with live search's filters, streamed and paged (audited on the first page). An id given twice " +
      "counts once; the archives' sizes count against the request's archive budget (AUDIT_ARCHIVE_REQUEST_BYTES), and a tampered " +
      "archive answers CONFLICT (`archive_tampered`) naming it and the first bad event or byte range.",
  })
  async auditArchiveSearch(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("archiveIds", () => [ID]) archiveIds: string[],
    @Arg("filter", () => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null,
    @Arg("first", () => Int, { nullable: true, description: "Page size: default 50, at most 100." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<AuditArchiveSearchResultType> {
    const retention = context.services.retention;
    const page = await retention.search(archiveIds, filter, { first, after }, actor, retention.budgetOf(context));
    return { nodes: page.events, hasNextPage: page.hasMore, endCursor: page.nextCursor, scanned: page.scanned };
  }

  @Authorized()
  @Query(() => [AuditCheckpointType], { description: "The signed checkpoint of each archived month." })
  async auditCheckpoints(@Ctx() { services }: RequestContext): Promise<AuditCheckpointType[]> {
    return (await services.retention.checkpoints()).map((row) => ({
      month: monthLabel(row.month),
      treeSize: row.treeSize,
      note: row.note,
    }));
  }

  @Authorized()
  @Mutation(() => AuditArchiveMonthResultType, {
    description:
      "Loads an archived month back into the database with its chain links, searchable again (audited). Every archive of the month is " +
      "checked first, and the restored chain against the month's signed checkpoint: a tampered archive or checkpoint answers CONFLICT " +
      "(`archive_tampered`) naming it and the first bad event or byte range, and nothing is loaded.",
  })
  async restoreAuditArchive(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("month", { description: "YYYY-MM" }) month: string,
  ) {
    return services.retention.restore(month, actor);
  }

  @Authorized()
  @Mutation(() => AuditArchiveMonthResultType, {
    description: "Removes a restored month (its events and their chain links) from the database again; its archives stay (audited).",
  })
  async releaseAuditArchive(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("month", { description: "YYYY-MM" }) month: string,
  ) {
    return services.retention.release(month, actor);
  }
}
