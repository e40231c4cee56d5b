import fs from "node:fs";
import path from "node:path";
import { Transaction as SequelizeTransaction, type Sequelize, type Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import type { DownloadSigner } from "../../audit/exports";
import { ConflictError, DomainError, ErrorCode, ForbiddenError, NotFoundError, RateLimitedError } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import type { Logger } from "../../platform/common/logger";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { requesterOf, type Actor, type Requester } from "../../platform/security/actor";
import {
  CSV_FILES,
  NDJSON_SELECTS,
  type CsvFileName,
  type FamilyExportRecord,
  type FamilyExportRepository,
} from "./family-export.repository";
import { CsvRecordCounter, writeNdjson, ZipEntriesWriter, type FamilyExportManifest } from "./family-export.writer";

/** A download asked for before the zip is written: 409 `export_not_ready`, as upstream's FamilyExportsController#download. */
export class ExportNotReadyError extends DomainError {
  readonly code = ErrorCode.Conflict;
  readonly restError = "export_not_ready";

  constructor() {
    super("Export is not ready for download");
  }
}

/** What the service needs from the queue: producers only enqueue. */
export type FamilyExportQueue = { enqueue(exportId: string): Promise<void> };

/** A request pending or processing this long may have lost its job (the audit exports' rule, STALE_REQUEST_MS there). */
const STALE_REQUEST_MS = 60_000;
const REQUEUE_BATCH = 500;

/** Exports of one family waiting or being written at once. */
export const MAX_ACTIVE_PER_FAMILY = 3;
const DEFAULT_PER_PAGE = 25;

/**
 * Upstream's two small files beside the CSVs (Family::DataExporter): its version marker for downstream
 * tools, and its attachment manifest, which never holds binaries; no attachments are stored here, so
 * its list is empty.
 */
const VERSION_TXT = "export_version: 2\n";
const ATTACHMENTS_JSON = JSON.stringify({ version: 1, binary_included: false, attachments: [] });

/** A family export's zip, or the file it is written to before its rename, named by the export's id. */
const EXPORT_FILE = /^family-export-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.zip(?:\.partial)?$/;

/** A file ready to send. */
export type FamilyExportDownload = { path: string; fileName: string; bytes: number };
export type FamilyExportPage = { items: FamilyExportRecord[]; pagination: PageInfo };

/**
 * Family exports (docs/exports.md): a family administrator asks, a worker writes a zip of the family's
 * data (upstream's files, and a manifest with the SHA-256 of each), and the zip is fetched through a
 * short-lived URL signed for that family. restore.service.ts loads such a zip into an empty family.
 */
export class FamilyExportService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: FamilyExportRepository,
    private readonly audit: AuditService,
    private readonly queue: FamilyExportQueue,
    private readonly signer: DownloadSigner,
    private readonly dir: string,
    private readonly logger?: Logger,
  ) {}

  async request(actor: Actor): Promise<FamilyExportRecord> {
    const record = await this.sequelize.transaction(async (transaction) => {
      await this.repository.lockFamily(actor.familyId, transaction);
      if ((await this.repository.countActive(actor.familyId, transaction)) >= MAX_ACTIVE_PER_FAMILY) {
        throw new RateLimitedError(`Your family has ${MAX_ACTIVE_PER_FAMILY} exports in progress; wait for one to finish`);
      }
      const requester = requesterOf(actor);
      const created = await this.repository.insert(
        {
          id: newId(),
          familyId: actor.familyId,
          requestedBy: actor.userId,
          requestedByEmail: actor.email,
          requestedSession: requester.session,
        },
        transaction,
      );
      await this.record(transaction, created, "created", actor);
      return created;
    });
    // After commit: a job for a request that rolled back would find nothing.
    await this.queue.enqueue(record.id);
    return record;
  }

  async list(actor: Actor, page?: number | null, perPage?: number | null): Promise<FamilyExportPage> {
    const request = clampPage(page, perPage, DEFAULT_PER_PAGE);
    const { rows, total } = await this.repository.page(actor.familyId, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /** One of the family's exports; another family's is as unknown as a missing one. */
  async get(actor: Actor, id: string): Promise<FamilyExportRecord> {
    const record = isUuid(id) ? await this.repository.find(actor.familyId, id) : null;
    if (!record) throw new NotFoundError("Family export");
    return record;
  }

  /** A URL (path and query) of a finished export, valid for EXPORT_URL_TTL_SECONDS and for this family only. */
  async downloadUrl(actor: Actor, id: string): Promise<{ url: string; expiresAt: Date }> {
    const record = await this.get(actor, id);
    if (record.status !== "completed") throw new ExportNotReadyError();
    const { expires, signature, expiresAt } = this.signer.sign(record.id, record.familyId);
    return { url: `/family_exports/${record.id}/file?expires=${expires}&signature=${signature}`, expiresAt };
  }

  /** Checks a signed URL against the family of the caller presenting it, records the download, and names the file. */
  async openDownload(actor: Actor, id: string, expires: string | undefined, signature: string | undefined): Promise<FamilyExportDownload> {
    if (!isUuid(id)) throw new NotFoundError("Family export");
    const check = this.signer.check(id, actor.familyId, expires, signature);
    if (check === "invalid") throw new ForbiddenError("This download link is not valid for you");
    if (check === "expired") throw new ForbiddenError("This download link has expired; ask for a new one");
    return this.sequelize.transaction(async (transaction) => {
      const record = await this.repository.find(actor.familyId, id, transaction);
      if (!record) throw new NotFoundError("Family export");
      if (record.status !== "completed" || !record.fileName) throw new ExportNotReadyError();
      const file = path.join(this.dir, record.fileName);
      const stat = await fs.promises.stat(file).catch(() => null);
      if (!stat) throw new ConflictError("The export's file is gone");
      await this.record(transaction, record, "downloaded", actor);
      return { path: file, fileName: record.fileName, bytes: stat.size };
    });
  }

  /**
   * The worker's part: writes the zip from one REPEATABLE READ snapshot of the family (every file agrees
   * with every other), then records the outcome. A finished request is left alone; a crashed worker's
   * request is written again from the start.
   */
  async run(id: string): Promise<FamilyExportRecord | null> {
    const record = await this.repository.byId(id);
    if (!record || !(await this.repository.start(id))) return null;
    const fileName = `family-export-${record.id}.zip`;
    try {
      const written = await this.write(record, path.join(this.dir, fileName));
      return await this.sequelize.transaction(async (transaction) => {
        const completed = await this.repository.complete(
          id,
          {
            fileName,
            fileBytes: written.fileBytes,
            manifest: { ...written.manifest, fileSha256: written.fileSha256, fileBytes: written.fileBytes },
          },
          transaction,
        );
        await this.record(transaction, completed, "completed", null, {
          status: { old: "processing", new: "completed" },
          rows: { old: null, new: Object.fromEntries(written.manifest.files.map((file) => [file.name, file.rows])) },
          sha256: { old: null, new: written.fileSha256 },
        });
        return completed;
      });
    } catch (error) {
      this.logger?.warn({ err: error, familyExportId: id }, "family export failed");
      return this.sequelize.transaction(async (transaction) => {
        const failed = await this.repository.fail(id, "The export could not be written", transaction);
        await this.record(transaction, failed, "failed", null, { status: { old: "processing", new: "failed" } });
        return failed;
      });
    }
  }

  /**
   * Enqueues again the requests pending or processing for longer than STALE_REQUEST_MS (run by the
   * exports queue's minutely requeue-stale-exports schedule, beside the audit exports'). The job id is
   * the request's, so a request whose job still waits or runs gets no second one.
   */
  async requeueStale(now = new Date()): Promise<number> {
    const stale = await this.repository.unfinishedBefore(new Date(now.getTime() - STALE_REQUEST_MS), REQUEUE_BATCH);
    for (const { id } of stale) await this.queue.enqueue(id);
    return stale.length;
  }

  /**
   * Removes the zips (and half-written ones) that no export names any more: a family reset, or the
   * deletion of a family's last member, took their rows. Run by the exports queue's expire-exports
   * schedule; the rows go in their own transaction and the files after it, so a crash between the two
   * leaves only a file this removes on its next run.
   */
  async removeOrphanFiles(): Promise<number> {
    const names = await fs.promises.readdir(this.dir).catch(() => [] as string[]);
    const files = new Map(
      names.flatMap(
        (name) =>
          EXPORT_FILE.exec(name)
            ?.slice(1, 2)
            .map((id) => [id, name] as const) ?? [],
      ),
    );
    if (files.size === 0) return 0;
    const kept = await this.repository.existing([...files.keys()]);
    let removed = 0;
    for (const [id, name] of files) {
      if (kept.has(id)) continue;
      await fs.promises.rm(path.join(this.dir, name), { force: true });
      removed += 1;
    }
    return removed;
  }

  /** Writes the zip: upstream's files in upstream's order, then manifest.json with the SHA-256 of each. */
  async write(record: Pick<FamilyExportRecord, "id" | "familyId">, file: string) {
    const writer = await ZipEntriesWriter.create(file);
    try {
      await this.sequelize.transaction(
        { isolationLevel: SequelizeTransaction.ISOLATION_LEVELS.REPEATABLE_READ, readOnly: true },
        async (transaction) => {
          writer.begin("version.txt");
          await writer.write(VERSION_TXT, 1);
          for (const name of Object.keys(CSV_FILES) as CsvFileName[]) {
            writer.begin(name);
            await writer.write(CSV_FILES[name].header.join(",") + "\n");
            const records = new CsvRecordCounter();
            for await (const chunk of this.repository.csvFile(name, record.familyId, transaction))
              await writer.write(chunk, records.count(chunk));
          }
          writer.begin("attachments.json");
          await writer.write(ATTACHMENTS_JSON, 0);
          writer.begin("all.ndjson");
          for (const { select } of NDJSON_SELECTS)
            await writeNdjson(writer, this.repository.ndjsonLines(select, record.familyId, transaction));
        },
      );
    } catch (error) {
      await writer.abort();
      throw error;
    }
    return writer.finish((files): FamilyExportManifest => ({
      kind: "family-export",
      version: 1,
      id: record.id,
      familyId: record.familyId,
      generatedAt: new Date().toISOString(),
      files,
    }));
  }

  private async record(
    transaction: Transaction,
    record: FamilyExportRecord,
    outcome: "created" | "completed" | "failed" | "downloaded",
    actor: Actor | null,
    changes: Record<string, { old: unknown; new: unknown }> | null = null,
  ): Promise<void> {
    const requester: Requester = { userId: record.requestedBy, email: record.requestedByEmail, session: record.requestedSession };
    await this.audit.record(transaction, {
      type: `family_export.${outcome}`,
      actor: actor ?? requester,
      action: outcome === "created" ? "create" : outcome,
      resource: { type: "family_export", id: record.id, label: record.fileName ?? "family export" },
      changes,
      error: outcome === "failed" ? record.error : null,
    });
  }
}
