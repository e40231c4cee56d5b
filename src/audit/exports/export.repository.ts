import type { Sequelize, Transaction } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";

export type ExportKind = "events" | "report";
export type ExportStatus = "queued" | "running" | "completed" | "failed" | "expired";
export type FileFormat = "json" | "jsonl" | "csv" | "pdf";

export type ExportRecord = {
  id: string;
  kind: ExportKind;
  format: FileFormat;
  params: Record<string, unknown>;
  status: ExportStatus;
  requestedBy: string;
  requestedByEmail: string;
  /** The credential the request came through, as its audit events name it (null: a request older than the column). */
  requestedSession: string | null;
  rowsWritten: number;
  progress: number;
  fileName: string | null;
  fileBytes: number | null;
  manifest: Record<string, unknown> | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  expiresAt: Date | null;
};

export type UnfinishedKey = { id: string; createdAt: Date };

const COLUMNS = `id, kind, format, params, status, requested_by AS "requestedBy", requested_by_email AS "requestedByEmail",
  requested_session AS "requestedSession", rows_written::float8 AS "rowsWritten", progress, file_name AS "fileName",
  file_bytes::float8 AS "fileBytes", manifest, error,
  created_at AS "createdAt", started_at AS "startedAt", completed_at AS "completedAt", expires_at AS "expiresAt"`;

/** The audit_exports table: requests for exports and reports, and what the worker made of them. */
export class ExportRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async insert(
    record: Pick<ExportRecord, "id" | "kind" | "format" | "params" | "requestedBy" | "requestedByEmail" | "requestedSession">,
    transaction: Transaction,
  ): Promise<ExportRecord> {
    const [row] = await selectRows<ExportRecord>(
      this.sequelize,
      `INSERT INTO audit_exports (id, kind, format, params, status, requested_by, requested_by_email, requested_session)
       VALUES ($1, $2, $3, $4, 'queued', $5, $6, $7) RETURNING ${COLUMNS}`,
      [
        record.id,
        record.kind,
        record.format,
        JSON.stringify(record.params),
        record.requestedBy,
        record.requestedByEmail,
        record.requestedSession,
      ],
      transaction,
    );
    return row;
  }

  async find(id: string, transaction?: Transaction): Promise<ExportRecord | null> {
    const [row] = await selectRows<ExportRecord>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM audit_exports WHERE id = $1${transaction ? " FOR UPDATE" : ""}`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  /** A transaction-scoped advisory lock per requester (released at commit or rollback). */
  async lockRequester(requestedBy: string, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `SELECT pg_advisory_xact_lock(hashtextextended('audit_exports:' || $1, 0))`,
      [requestedBy],
      transaction,
    );
  }

  /** How many of a requester's requests are waiting or being written. */
  async countActive(requestedBy: string, transaction: Transaction): Promise<number> {
    const [row] = await selectRows<{ count: number }>(
      this.sequelize,
      `SELECT count(*)::int AS count FROM audit_exports WHERE requested_by = $1 AND status IN ('queued', 'running')`,
      [requestedBy],
      transaction,
    );
    return row.count;
  }

  /** A requester's exports and reports, newest first. */
  listFor(requestedBy: string, options: { kind: ExportKind | null; limit: number }): Promise<ExportRecord[]> {
    const bind: unknown[] = [requestedBy, options.limit];
    const kind = options.kind ? ` AND kind = ${bindParam(bind, options.kind)}` : "";
    return selectRows<ExportRecord>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM audit_exports WHERE requested_by = $1${kind} ORDER BY created_at DESC, id DESC LIMIT $2`,
      bind,
    );
  }

  /**
   * Requests queued before `before`, or started before it and still running, oldest first, from after
   * `after` on (a keyset page): the job of each may be lost (it never reached the queue, or failed
   * after stalling twice while its worker died mid-file).
   */
  unfinishedBefore(before: Date, after: UnfinishedKey | null, limit: number): Promise<UnfinishedKey[]> {
    const bind: unknown[] = [before, limit];
    const page = after ? ` AND (created_at, id) > (${bindParam(bind, after.createdAt)}, ${bindParam(bind, after.id)}::uuid)` : "";
    return selectRows<UnfinishedKey>(
      this.sequelize,
      `SELECT id, created_at AS "createdAt" FROM audit_exports
        WHERE ((status = 'queued' AND created_at < $1) OR (status = 'running' AND started_at < $1))${page}
        ORDER BY created_at, id LIMIT $2`,
      bind,
    );
  }

  /** Claims a queued (or a crashed worker's running) request for this run; false when it is already finished. */
  async start(id: string): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `UPDATE audit_exports SET status = 'running', started_at = now(), rows_written = 0, progress = 0
        WHERE id = $1 AND status IN ('queued', 'running') RETURNING id`,
      [id],
    );
    return rows.length === 1;
  }

  async reportProgress(id: string, rowsWritten: number, progress: number): Promise<void> {
    await selectRows(
      this.sequelize,
      `UPDATE audit_exports SET rows_written = $2, progress = least(1, greatest(0, $3::float8)) WHERE id = $1 AND status = 'running' RETURNING id`,
      [id, rowsWritten, progress],
    );
  }

  async complete(
    id: string,
    result: { rowsWritten: number; fileName: string; fileBytes: number; manifest: object; expiresAt: Date },
    transaction: Transaction,
  ): Promise<ExportRecord> {
    const [row] = await selectRows<ExportRecord>(
      this.sequelize,
      `UPDATE audit_exports SET status = 'completed', rows_written = $2, progress = 1, file_name = $3, file_bytes = $4, manifest = $5,
              completed_at = now(), expires_at = $6
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, result.rowsWritten, result.fileName, result.fileBytes, JSON.stringify(result.manifest), result.expiresAt],
      transaction,
    );
    return row;
  }

  async fail(id: string, error: string, transaction: Transaction): Promise<ExportRecord> {
    const [row] = await selectRows<ExportRecord>(
      this.sequelize,
      `UPDATE audit_exports SET status = 'failed', error = $2, completed_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, error],
      transaction,
    );
    return row;
  }

  /** Completed requests whose files are past their expiry, oldest first. */
  expiredBefore(now: Date, limit: number): Promise<ExportRecord[]> {
    return selectRows<ExportRecord>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM audit_exports WHERE status = 'completed' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, limit],
    );
  }

  async markExpired(id: string, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `UPDATE audit_exports SET status = 'expired' WHERE id = $1 AND status = 'completed' RETURNING id`,
      [id],
      transaction,
    );
    return rows.length === 1;
  }
}
