import fs from "node:fs";
import path from "node:path";
import type { Sequelize, Transaction } from "sequelize";
import { manifestPathOf } from "../../platform/files/archive-writer";
import type { AuditEventName as AuditEventType } from "../log";
import type { AuditRepository } from "../log";
import { parseFilter, type AuditFilterInput } from "../log";
import type { AuditService } from "../log";
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, RateLimitedError } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import type { Logger } from "../../platform/common/logger";
import type { ExportConfig } from "../../platform/config/config";
import { requesterOf, type Actor } from "../../platform/security/actor";
import type { ReportRepository } from "./report.repository";
import { parseReportParams, type ReportParams } from "./report.templates";
import { EXPORT_FORMATS, type ExportFormat } from "./export-formats";
import { EXPORT_COMPRESSIONS, ExportWriter, REPORT_FORMATS, type ReportFormat } from "./export.writer";
import type { ExportKind, ExportRecord, ExportRepository, FileFormat, UnfinishedKey } from "./export.repository";
import type { DownloadSigner } from "./signed-url";

/** What the service needs from the queue: producers only enqueue. */
export type ExportQueue = {
  /** Adds the request's job (its id is the request's: a second add while it exists is a no-op). */
  enqueue(exportId: string): Promise<void>;
  /** Adds the job of a request left queued, or runs its failed job again; never a second job of it. */
  requeue(exportId: string): Promise<void>;
};

export type ReportInput = Parameters<typeof parseReportParams>[0] & { format: string };

const MIME_TYPES: Record<FileFormat, string> = {
  json: "application/json",
  jsonl: "application/x-ndjson",
  csv: "text/csv",
  pdf: "application/pdf",
};
const LIST_LIMIT = 100;
const EXPIRE_BATCH = 100;
const REQUEUE_BATCH = 500;
/** A request queued or running this long may have lost its job; younger ones are still on their way to the queue. */
export const STALE_REQUEST_MS = 60_000;
/** Requests of one user waiting or being written at once: asking is cheap, writing is not. */
export const MAX_ACTIVE_PER_USER = 5;

/** A file ready to send: where it is and what to call it. */
export type Download = { path: string; fileName: string; mimeType: string; bytes: number };

/**
 * Audit exports and compliance reports: a request is recorded (and audited) at once, a worker writes
 * the file, and its requester downloads it through a short-lived signed URL until it expires.
 */
export class AuditExportService {
  private readonly writer: ExportWriter;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: ExportRepository,
    auditEvents: AuditRepository,
    reports: ReportRepository,
    private readonly audit: AuditService,
    private readonly queue: ExportQueue,
    private readonly signer: DownloadSigner,
    private readonly settings: ExportConfig,
    private readonly logger?: Logger,
  ) {
    this.writer = new ExportWriter(repository, auditEvents, reports, settings);
  }

  /**
   * Asks for an export of the events a search with `filter` shows, all of them. A filter that names
   * something unknown or malformed is refused, never ignored. With no `to`, the export ends now.
   */
  async requestExport(
    actor: Actor,
    input: { filter: AuditFilterInput | null | undefined; format: string; compression?: string | null },
  ): Promise<ExportRecord> {
    const format = input.format.toLowerCase();
    if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
      throw new BadRequestError(`format must be one of ${EXPORT_FORMATS.join(", ")}`);
    }
    const filter = compact({ ...(input.filter ?? {}) });
    filter.to ??= new Date().toISOString();
    const query = parseFilter(filter);
    if (query.from && query.before && query.from >= query.before) throw new BadRequestError("from must be before to");
    const compression = (input.compression ?? "gzip").toLowerCase();
    if (!(EXPORT_COMPRESSIONS as readonly string[]).includes(compression)) {
      throw new BadRequestError(`compression must be one of ${EXPORT_COMPRESSIONS.join(", ")}`);
    }
    return this.request(actor, "events", format as ExportFormat, { filter, compression });
  }

  async requestReport(actor: Actor, input: ReportInput): Promise<ExportRecord> {
    const format = input.format.toLowerCase();
    if (!(REPORT_FORMATS as readonly string[]).includes(format)) {
      throw new BadRequestError(`format must be one of ${REPORT_FORMATS.join(", ")}`);
    }
    const params = parseReportParams(input);
    return this.request(actor, "report", format as ReportFormat, { report: params });
  }

  private async request(actor: Actor, kind: ExportKind, format: FileFormat, params: Record<string, unknown>): Promise<ExportRecord> {
    const record = await this.sequelize.transaction(async (transaction) => {
      // Serialises one user's requests, so two at once cannot both pass the limit.
      await this.repository.lockRequester(actor.userId, transaction);
      if ((await this.repository.countActive(actor.userId, transaction)) >= MAX_ACTIVE_PER_USER) {
        throw new RateLimitedError(`You have ${MAX_ACTIVE_PER_USER} exports or reports in progress; wait for one to finish`);
      }
      const created = await this.repository.insert(
        {
          id: newId(),
          kind,
          format,
          params,
          requestedBy: actor.userId,
          requestedByEmail: actor.email,
          // Kept for the worker, which finishes the request on the caller's behalf (its events name this credential too).
          requestedSession: requesterOf(actor).session,
        },
        transaction,
      );
      await this.record(transaction, created, "requested", actor);
      return created;
    });
    // After commit: a job for a request that rolled back would find nothing. Should this enqueue fail,
    // the request stays queued until requeueStale enqueues it again.
    await this.queue.enqueue(record.id);
    return record;
  }

  list(actor: Actor, kind: ExportKind | null): Promise<ExportRecord[]> {
    return this.repository.listFor(actor.userId, { kind, limit: LIST_LIMIT });
  }

  /** One of the actor's own requests; another user's is as unknown as a missing one. */
  async get(actor: Actor, id: string): Promise<ExportRecord> {
    const record = isUuid(id) ? await this.repository.find(id) : null;
    if (!record || record.requestedBy !== actor.userId) throw new NotFoundError("Export");
    return record;
  }

  /** A download URL (path and query) for the actor's finished file, valid for EXPORT_URL_TTL_SECONDS and for the actor only. */
  async downloadUrl(actor: Actor, id: string): Promise<{ url: string; expiresAt: Date }> {
    const record = await this.get(actor, id);
    if (record.status !== "completed") throw new ConflictError(`The ${describe(record)} is ${record.status}, not ready to download`);
    const { expires, signature, expiresAt } = this.signer.sign(record.id, actor.userId);
    return { url: `/exports/${record.id}/download?expires=${expires}&signature=${signature}`, expiresAt };
  }

  /** Checks a signed URL against the user presenting it, records the download, and names the file to send. */
  async openDownload(actor: Actor, id: string, expires: string | undefined, signature: string | undefined): Promise<Download> {
    if (!isUuid(id)) throw new NotFoundError("Export");
    const check = this.signer.check(id, actor.userId, expires, signature);
    if (check === "invalid") throw new ForbiddenError("This download link is not valid for you");
    if (check === "expired") throw new ForbiddenError("This download link has expired; ask for a new one");
    return this.sequelize.transaction(async (transaction) => {
      const record = await this.repository.find(id, transaction);
      if (!record || record.requestedBy !== actor.userId) throw new NotFoundError("Export");
      if (record.status !== "completed" || !record.fileName) throw new ConflictError(`The ${describe(record)} is ${record.status}`);
      const file = path.join(this.settings.dir, record.fileName);
      const stat = await fs.promises.stat(file).catch(() => null);
      if (!stat) throw new ConflictError(`The ${describe(record)} file is gone`);
      await this.record(transaction, record, "downloaded", actor);
      return {
        path: file,
        fileName: record.fileName,
        mimeType: mimeTypeOf(record.fileName, record.format),
        bytes: stat.size,
      };
    });
  }

  /**
   * The worker's part: writes the file and its manifest, then records the outcome. Runs again from the
   * start after a crash (the job is retried once its lock lapses); a finished request is left alone.
   */
  async run(id: string): Promise<ExportRecord | null> {
    const record = await this.repository.find(id);
    if (!record || !(await this.repository.start(id))) return null;
    try {
      const written = record.kind === "events" ? await this.writer.writeEvents(record) : await this.writer.writeReport(record);
      return await this.sequelize.transaction(async (transaction) => {
        const completed = await this.repository.complete(
          id,
          { ...written, expiresAt: new Date(Date.now() + this.settings.retentionMs) },
          transaction,
        );
        await this.record(transaction, completed, "completed", null, {
          changes: {
            status: { old: "running", new: "completed" },
            rows: { old: null, new: written.rowsWritten },
            sha256: { old: null, new: written.manifest.dataSha256 },
          },
        });
        return completed;
      });
    } catch (error) {
      this.logger?.warn({ err: error, exportId: id }, "export failed");
      const message = error instanceof BadRequestError ? error.message : "The file could not be written";
      return this.sequelize.transaction(async (transaction) => {
        const failed = await this.repository.fail(id, message, transaction);
        await this.record(transaction, failed, "failed", null, { error: message });
        return failed;
      });
    }
  }

  /**
   * Enqueues again every request queued, or running, for longer than STALE_REQUEST_MS. A queued one's job
   * may never have reached the queue (the queue was down between the commit and the enqueue) or failed
   * before it claimed the request; a running one's job may have failed after stalling twice (its worker
   * died mid-file, twice), which BullMQ does not retry. The job id is the request's, so a request whose
   * job is waiting or still running (a long export) gets no second job, and nothing is written twice.
   */
  async requeueStale(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - STALE_REQUEST_MS);
    let requeued = 0;
    let after: UnfinishedKey | null = null;
    for (;;) {
      const page: UnfinishedKey[] = await this.repository.unfinishedBefore(before, after, REQUEUE_BATCH);
      for (const { id } of page) await this.queue.requeue(id);
      requeued += page.length;
      if (page.length < REQUEUE_BATCH) return requeued;
      after = page[page.length - 1];
    }
  }

  /** Removes files past their expiry (and their manifests), each recorded; returns how many. */
  async expire(now = new Date()): Promise<number> {
    let removed = 0;
    for (;;) {
      const due = await this.repository.expiredBefore(now, EXPIRE_BATCH);
      for (const record of due) {
        await this.sequelize.transaction(async (transaction) => {
          if (!(await this.repository.markExpired(record.id, transaction))) return;
          await this.record(transaction, record, "expired", null, { changes: { status: { old: "completed", new: "expired" } } });
          removed += 1;
        });
        // After the commit: a file whose row still says "completed" must still be there.
        if (record.fileName) {
          const file = path.join(this.settings.dir, record.fileName);
          await fs.promises.rm(file, { force: true });
          await fs.promises.rm(manifestPathOf(file), { force: true });
        }
      }
      if (due.length < EXPIRE_BATCH) return removed;
    }
  }

  /**
   * Records one of the request's events. Who asked: the caller (`actor`), else, for a worker finishing,
   * failing or expiring the request, the requester the request kept: its user and the credential it
   * came through, as the request's own events name them.
   */
  private async record(
    transaction: Transaction,
    record: ExportRecord,
    outcome: "requested" | "completed" | "failed" | "downloaded" | "expired",
    actor: Actor | null,
    extra: { changes?: Record<string, { old: unknown; new: unknown }>; error?: string } = {},
  ): Promise<void> {
    const type = `audit.${record.kind === "events" ? "export" : "report"}.${outcome}` as AuditEventType;
    await this.audit.record(transaction, {
      type,
      actor: actor ?? { userId: record.requestedBy, email: record.requestedByEmail, session: record.requestedSession },
      action: outcome,
      resource: { type: record.kind === "events" ? "audit_export" : "audit_report", id: record.id, label: describe(record) },
      changes: extra.changes ?? (outcome === "requested" ? { params: { old: null, new: record.params } } : null),
      error: extra.error ?? null,
    });
  }
}

function mimeTypeOf(fileName: string, format: FileFormat): string {
  if (fileName.endsWith(".gz")) return "application/gzip";
  if (fileName.endsWith(".zip")) return "application/zip";
  return MIME_TYPES[format];
}

function describe(record: Pick<ExportRecord, "kind" | "format" | "params">): string {
  if (record.kind === "events") return `${record.format.toUpperCase()} export`;
  const template = (record.params as { report?: ReportParams }).report?.template ?? "custom";
  return `${template.replace(/_/g, " ")} report (${record.format.toUpperCase()})`;
}

function compact(filter: AuditFilterInput): AuditFilterInput {
  return Object.fromEntries(
    Object.entries(filter).filter(([, value]) => value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0)),
  ) as AuditFilterInput;
}
