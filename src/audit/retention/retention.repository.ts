import type { ClientBase } from "pg";
import type { Sequelize, Transaction } from "sequelize";
import { copyOut, limitLockWait, readRows, selectRows } from "../../platform/common/sql";
import type { CategoryTier, Tier } from "./retention-tiers";

/**
 * How long detaching a month waits for the audit log's exclusive lock. While it waits behind a long
 * read (an export batch, a report, a search), every audit write queues behind it; giving up after this
 * long keeps writes flowing, and the step is tried again (see RetentionService).
 */
export const PARTITION_LOCK_WAIT_MS = 2000;

export type MonthState = "detached" | "archived" | "dropped" | "restored";
export type MonthRow = { month: Date; state: MonthState; tableName: string; rows: string | null; updatedAt: Date };
export type ArchiveManifest = {
  format: "finance-gateway-audit-archive/1";
  month: string;
  tier: Tier;
  rows: number;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
  firstSeq: string | null;
  lastSeq: string | null;
  /** Hex SHA-256 of the uncompressed JSONL, and of the stored .gz file. */
  sha256: string;
  fileSha256: string;
  dataBytes: number;
  fileBytes: number;
  createdAt: string;
};
export type ArchiveRow = {
  id: string;
  month: Date;
  tier: Tier;
  storageKey: string;
  manifest: ArchiveManifest;
  keepUntil: Date;
  state: "stored" | "deleted";
  createdAt: Date;
  deletedAt: Date | null;
};
export type CheckpointRow = { month: Date; treeSize: string; rootHash: Buffer; note: string; createdAt: Date };
export type RunRow = {
  id: string;
  startedAt: Date;
  finishedAt: Date | null;
  moved: unknown[];
  kept: unknown[];
  deleted: unknown[];
  error: string | null;
};
export type SettingsRow = { databaseDays: number; defaultTier: Tier; categoryTiers: CategoryTier[]; updatedAt: Date | null };
/** The fields of monthArchive's rows, by position. */
export const MONTH_ARCHIVE_FIELDS = { tier: 0, seq: 1, occurredAt: 2, hash: 3, line: 4, width: 5 } as const;
/** One event of a month as its archive line, with what the writer routes and sums it by. */
export type MonthLine = { seq: string; eventType: string; occurredAt: string; hash: string; line: string };

const PARTITION_NAME = /^audit_events_y\d{4}m(0[1-9]|1[0-2])$/;

/** The quoted name of the link partition (audit_chain_y…m…) of the month whose event partition is `name`. */
function chainPartitionOf(name: string): string {
  return table(name).replace("audit_events_", "audit_chain_");
}

/**
 * The link partition of the month whose event partition is `tableName`, detached and dropped if it
 * exists (migration 0017): a month's links leave as a partition, not row by row.
 */
export async function dropChainPartition(sequelize: Sequelize, tableName: string, transaction: Transaction): Promise<void> {
  const chainTable = chainPartitionOf(tableName);
  const [row] = await selectRows<{ attached: boolean | null }>(
    sequelize,
    `SELECT (SELECT true FROM pg_inherits i WHERE i.inhrelid = c.oid AND i.inhparent = 'audit_chain'::regclass) AS attached
       FROM pg_class c WHERE c.oid = to_regclass($1)`,
    [chainTable.slice(1, -1)],
    transaction,
  );
  if (!row) return;
  if (row.attached) await sequelize.query(`ALTER TABLE audit_chain DETACH PARTITION ${chainTable}`, { transaction });
  await sequelize.query(`DROP TABLE ${chainTable}`, { transaction });
}

/** A partition's name as an identifier: only names of our own shape are ever put in SQL text. */
function table(name: string): string {
  if (!PARTITION_NAME.test(name)) throw new Error(`not an audit partition name: ${name}`);
  return `"${name}"`;
}

/**
 * An event as an archive line, rendered by PostgreSQL: the stored columns exactly (the time with its
 * microseconds, the address as the hash reads it) plus the chain link, so a line restores to the same
 * row and its hash can be recomputed by audit_event_hash.
 */
export const ARCHIVE_LINE = `json_build_object('id', e.id, 'seq', c.seq::text,
  'occurredAt', to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'eventType', e.event_type,
  'severity', e.severity, 'userId', e.user_id, 'userEmail', e.user_email, 'provider', e.provider, 'action', e.action,
  'resourceType', e.resource_type, 'resourceId', e.resource_id, 'resourceLabel', e.resource_label, 'ipAddress', host(e.ip_address),
  'userAgent', e.user_agent, 'sessionId', e.session_id, 'requestId', e.request_id, 'changes', e.changes, 'error', e.error,
  'prevHash', encode(c.prev_hash, 'hex'), 'hash', encode(c.hash, 'hex'))::text`;

/**
 * ARCHIVE_LINE's exact bytes, spelled out: json_build_object's layout (`{"key" : value, …}`) with each
 * value rendered as it renders it (text escaped by to_json, JSON documents as they are, null as null).
 * Rendering a million lines is most of an archive's cost, and one concat() of ready pieces takes about
 * half the time json_build_object does (which works out each argument's JSON category per call).
 * audit-retention.archive.test.ts checks both give the same bytes for awkward values.
 */
const text = (value: string) => `coalesce(to_json(${value})::text, 'null')`;
const quoted = (value: string) => `coalesce('"' || ${value} || '"', 'null')`;
export const ARCHIVE_LINE_FAST = `concat('{"id" : "', e.id, '", "seq" : "', c.seq, '", "occurredAt" : "',
  to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
  '", "eventType" : ', ${text("e.event_type")}, ', "severity" : ', ${text("e.severity")}, ', "userId" : ', ${quoted("e.user_id")},
  ', "userEmail" : ', ${text("e.user_email")}, ', "provider" : ', ${text("e.provider")}, ', "action" : ', ${text("e.action")},
  ', "resourceType" : ', ${text("e.resource_type")}, ', "resourceId" : ', ${text("e.resource_id")},
  ', "resourceLabel" : ', ${text("e.resource_label")}, ', "ipAddress" : ', ${text("host(e.ip_address)")},
  ', "userAgent" : ', ${text("e.user_agent")}, ', "sessionId" : ', ${text("e.session_id")}, ', "requestId" : ', ${text("e.request_id")},
  ', "changes" : ', coalesce(e.changes::text, 'null'), ', "error" : ', ${text("e.error")},
  ', "prevHash" : ', ${quoted("encode(c.prev_hash, 'hex')")}, ', "hash" : "', encode(c.hash, 'hex'), '"}')`;

/** The columns of an archive line as a record (jsonb_to_recordset). */
export const LINE_RECORD = `(id uuid, seq bigint, "occurredAt" timestamptz, "eventType" text, severity text, "userId" uuid, "userEmail" text,
  provider text, action text, "resourceType" text, "resourceId" text, "resourceLabel" text, "ipAddress" inet, "userAgent" text,
  "sessionId" text, "requestId" text, changes jsonb, error text, "prevHash" text, hash text)`;

const RETENTION_LOCK = "hashtextextended('finance-gateway:audit-retention', 0)";

export class RetentionRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async settings(): Promise<SettingsRow> {
    const [row] = await selectRows<SettingsRow>(
      this.sequelize,
      `SELECT database_days AS "databaseDays", default_tier AS "defaultTier", category_tiers AS "categoryTiers", updated_at AS "updatedAt"
         FROM audit_retention_settings`,
      [],
    );
    return row;
  }

  async updateSettings(settings: { databaseDays: number; defaultTier: Tier; categoryTiers: CategoryTier[] }, transaction: Transaction) {
    await selectRows(
      this.sequelize,
      `UPDATE audit_retention_settings SET database_days = $1, default_tier = $2, category_tiers = $3::jsonb, updated_at = now() RETURNING id`,
      [settings.databaseDays, settings.defaultTier, JSON.stringify(settings.categoryTiers)],
      transaction,
    );
  }

  /**
   * Runs `work` holding the retention lock (a session advisory lock on a connection of its own), or
   * answers null at once when another process holds it: one retention run, restore or release at a time.
   */
  async exclusively<T>(work: () => Promise<T>): Promise<T | null> {
    const connection = (await this.sequelize.connectionManager.getConnection({ type: "write" })) as unknown as ClientBase;
    try {
      const { rows } = await connection.query(`SELECT pg_try_advisory_lock(${RETENTION_LOCK}) AS locked`);
      if (!rows[0].locked) return null;
      try {
        return await work();
      } finally {
        await connection.query(`SELECT pg_advisory_unlock(${RETENTION_LOCK})`);
      }
    } finally {
      void this.sequelize.connectionManager.releaseConnection(connection as never);
    }
  }

  /** The months whose partition is attached, oldest first (partition names only; the default partition is not a month). */
  async attachedMonths(): Promise<{ month: Date; tableName: string }[]> {
    const rows = await selectRows<{ name: string }>(
      this.sequelize,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'audit_events'::regclass ORDER BY c.relname`,
      [],
    );
    return rows
      .filter((row) => PARTITION_NAME.test(row.name))
      .map((row) => ({ month: new Date(`${row.name.slice(14, 18)}-${row.name.slice(19, 21)}-01T00:00:00Z`), tableName: row.name }));
  }

  async months(): Promise<MonthRow[]> {
    return selectRows<MonthRow>(
      this.sequelize,
      `SELECT month::timestamp AT TIME ZONE 'UTC' AS month, state, table_name AS "tableName", rows::text AS rows, updated_at AS "updatedAt"
         FROM audit_retention_months ORDER BY month`,
      [],
    );
  }

  /** Events in a month's table and chain links in its range: equal when every event of the month is linked. */
  async monthCounts(tableName: string, range: { from: Date; before: Date }): Promise<{ events: number; links: number }> {
    const [row] = await selectRows<{ events: string; links: string }>(
      this.sequelize,
      `SELECT (SELECT count(*) FROM ${table(tableName)}) AS events,
              (SELECT count(*) FROM audit_chain WHERE occurred_at >= $1 AND occurred_at < $2) AS links`,
      [range.from, range.before],
    );
    return { events: Number(row.events), links: Number(row.links) };
  }

  /** Step 1: the partition leaves audit_events (search no longer sees it) but stays a table; the month's state says so. */
  async detach(month: Date, tableName: string, rows: number, transaction: Transaction): Promise<void> {
    await limitLockWait(this.sequelize, transaction, PARTITION_LOCK_WAIT_MS);
    await this.sequelize.query(`ALTER TABLE audit_events DETACH PARTITION ${table(tableName)}`, { transaction });
    await selectRows(
      this.sequelize,
      `INSERT INTO audit_retention_months (month, state, table_name, rows) VALUES ($1::date, 'detached', $2, $3)
       ON CONFLICT (month) DO UPDATE SET state = 'detached', table_name = $2, rows = $3, updated_at = now() RETURNING month`,
      [monthText(month), tableName, rows],
      transaction,
    );
  }

  async tableExists(tableName: string): Promise<boolean> {
    const [row] = await selectRows<{ exists: boolean }>(this.sequelize, "SELECT to_regclass($1) IS NOT NULL AS exists", [
      table(tableName).slice(1, -1),
    ]);
    return row.exists;
  }

  /**
   * Up to `limit` events of a detached month after chain position `afterSeq`, in chain order, as archive
   * lines. Each link finds its event by key (LIMIT 1, as LINK_WITH_EVENT does): a join lets the planner
   * hash the whole month for every batch.
   */
  monthLines(tableName: string, range: { from: Date; before: Date }, afterSeq: string, limit: number): Promise<MonthLine[]> {
    return readRows<MonthLine>(
      this.sequelize,
      `SELECT c.seq::text AS seq, e.event_type AS "eventType",
              to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "occurredAt",
              encode(c.hash, 'hex') AS hash, ${ARCHIVE_LINE} AS line
         FROM (SELECT * FROM audit_chain c WHERE c.occurred_at >= $1 AND c.occurred_at < $2 AND c.seq > $3 ORDER BY c.seq LIMIT $4) AS c
         JOIN LATERAL (SELECT * FROM ${table(tableName)} e WHERE e.occurred_at = c.occurred_at AND e.id = c.event_id LIMIT 1) AS e ON true
        ORDER BY c.seq`,
      [range.from, range.before, afterSeq, limit],
    );
  }

  /**
   * Every event of a detached month in chain order, as binary COPY (copy-binary.ts) of MONTH_ARCHIVE_FIELDS:
   * per event the index of its tier in `tierTypes` plus one (the event types each tier takes; 0 for none
   * of them, the default tier), its seq, its time and hash as the manifest and checkpoint quote them,
   * and its archive line, all rendered by PostgreSQL in one statement. The links are joined to their
   * events and sorted by seq as narrow rows (the event's row address, not its text), then each event is
   * fetched by that address and rendered: sorting rendered lines would spill the whole month to disk,
   * and an index lookup per link costs more than the hash join. The table is detached: nothing writes
   * to it while this reads it.
   */
  monthArchive(tableName: string, range: { from: Date; before: Date }, tierTypes: string[][]): AsyncGenerator<Buffer> {
    const bind: unknown[] = [range.from, range.before, ...tierTypes];
    const tier = tierTypes.length
      ? `CASE ${tierTypes.map((_types, index) => `WHEN e.event_type = ANY($${index + 3}::text[]) THEN '${index + 1}'`).join(" ")} ELSE '0' END`
      : "'0'";
    return copyOut(
      this.sequelize,
      `SELECT ${tier} AS tier, c.seq::text AS seq,
              to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "occurredAt",
              encode(c.hash, 'hex') AS hash, ${ARCHIVE_LINE_FAST} AS line
         FROM (SELECT c.seq, c.prev_hash, c.hash, e.ctid AS event_row
                 FROM audit_chain c JOIN ${table(tableName)} e ON e.occurred_at = c.occurred_at AND e.id = c.event_id
                WHERE c.occurred_at >= $1 AND c.occurred_at < $2 ORDER BY c.seq) AS c
         CROSS JOIN LATERAL (SELECT * FROM ${table(tableName)} e WHERE e.ctid = c.event_row) AS e
        ORDER BY c.seq`,
      bind,
      "binary",
    );
  }

  /** Step 2: the verified archives, the month's signed checkpoint and its new state, in one transaction. */
  async recordArchived(
    month: Date,
    archives: { id: string; tier: Tier; storageKey: string; manifest: ArchiveManifest; keepUntil: Date }[],
    checkpoint: { treeSize: string; rootHash: Buffer; note: string } | null,
    transaction: Transaction,
  ): Promise<void> {
    for (const archive of archives) {
      await selectRows(
        this.sequelize,
        `INSERT INTO audit_archives (id, month, tier, storage_key, manifest, keep_until, state) VALUES ($1, $2::date, $3, $4, $5::jsonb, $6, 'stored')
         ON CONFLICT (month, tier) DO UPDATE SET storage_key = $4, manifest = $5::jsonb, keep_until = $6, state = 'stored', deleted_at = NULL
         RETURNING id`,
        [archive.id, monthText(month), archive.tier, archive.storageKey, JSON.stringify(archive.manifest), archive.keepUntil],
        transaction,
      );
    }
    if (checkpoint)
      await selectRows(
        this.sequelize,
        `INSERT INTO audit_checkpoints (month, tree_size, root_hash, note) VALUES ($1::date, $2, $3, $4)
         ON CONFLICT (month) DO UPDATE SET tree_size = $2, root_hash = $3, note = $4, created_at = now() RETURNING month`,
        [monthText(month), checkpoint.treeSize, checkpoint.rootHash, checkpoint.note],
        transaction,
      );
    await this.setState(month, "archived", transaction);
  }

  /**
   * Step 3: the month's table and its chain links go, and the state says so, in one transaction. The
   * links' append-only trigger lets this transaction (and only it) delete them.
   */
  async drop(month: Date, tableName: string, range: { from: Date; before: Date }, transaction: Transaction): Promise<void> {
    // The month's links leave as a partition (migration 0017); links of the month that sit in the default
    // partition (made before their month's partition existed) are deleted by range, which only the default
    // partition can hold now.
    await dropChainPartition(this.sequelize, tableName, transaction);
    await selectRows(this.sequelize, "SELECT set_config('finance_gateway.retention_drop', 'on', true) AS on", [], transaction);
    await selectRows(
      this.sequelize,
      "DELETE FROM audit_chain WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING 1 AS one",
      [range.from, range.before],
      transaction,
    );
    await this.sequelize.query(`DROP TABLE IF EXISTS ${table(tableName)}`, { transaction });
    await this.setState(month, "dropped", transaction);
  }

  /** A month's new state; with `rows`, the events it now holds (a restore records what it loaded). */
  async setState(month: Date, state: MonthState, transaction: Transaction, rows?: number): Promise<void> {
    await selectRows(
      this.sequelize,
      "UPDATE audit_retention_months SET state = $2, rows = coalesce($3, rows), updated_at = now() WHERE month = $1::date RETURNING month",
      [monthText(month), state, rows ?? null],
      transaction,
    );
  }

  archives(): Promise<ArchiveRow[]> {
    return selectRows<ArchiveRow>(
      this.sequelize,
      `SELECT id, month::timestamp AT TIME ZONE 'UTC' AS month, tier, storage_key AS "storageKey", manifest, keep_until AS "keepUntil", state,
              created_at AS "createdAt", deleted_at AS "deletedAt"
         FROM audit_archives ORDER BY month DESC, tier`,
      [],
    );
  }

  async markDeleted(id: string, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      "UPDATE audit_archives SET state = 'deleted', deleted_at = now() WHERE id = $1 RETURNING id",
      [id],
      transaction,
    );
  }

  checkpoints(): Promise<CheckpointRow[]> {
    return selectRows<CheckpointRow>(
      this.sequelize,
      `SELECT month::timestamp AT TIME ZONE 'UTC' AS month, tree_size::text AS "treeSize", root_hash AS "rootHash", note, created_at AS "createdAt"
         FROM audit_checkpoints ORDER BY month`,
      [],
    );
  }

  async startRun(id: string, startedAt: Date): Promise<void> {
    await selectRows(this.sequelize, "INSERT INTO audit_retention_runs (id, started_at) VALUES ($1, $2) RETURNING id", [id, startedAt]);
  }

  async finishRun(id: string, outcome: { moved: unknown[]; kept: unknown[]; deleted: unknown[]; error: string | null }): Promise<void> {
    await selectRows(
      this.sequelize,
      `UPDATE audit_retention_runs SET finished_at = now(), moved = $2::jsonb, kept = $3::jsonb, deleted = $4::jsonb, error = $5
        WHERE id = $1 RETURNING id`,
      [id, JSON.stringify(outcome.moved), JSON.stringify(outcome.kept), JSON.stringify(outcome.deleted), outcome.error],
    );
  }

  async lastRun(): Promise<RunRow | null> {
    const [row] = await selectRows<RunRow>(
      this.sequelize,
      `SELECT id, started_at AS "startedAt", finished_at AS "finishedAt", moved, kept, deleted, error
         FROM audit_retention_runs ORDER BY started_at DESC LIMIT 1`,
      [],
    );
    return row ?? null;
  }

  /** Restore: the month's partition again (empty), and its state. */
  async createPartition(month: Date, transaction: Transaction): Promise<void> {
    const [row] = await selectRows<{ ok: boolean }>(
      this.sequelize,
      "SELECT audit_create_month_partition($1::date) AS ok",
      [monthText(month)],
      transaction,
    );
    if (!row.ok) throw new Error(`the default partition holds events of ${monthText(month)}`);
  }

  /**
   * For each archive line (by seq): whether audit_event_hash over its content and prevHash gives its
   * hash. A line whose values the database cannot read as an event's (a tampered archive: a user id that
   * is no UUID, an address that is none) does not match; its neighbours are still checked one by one.
   */
  async hashesMatch(lines: string[]): Promise<Map<string, boolean>> {
    try {
      return await this.hashesMatchOnce(lines);
    } catch (error) {
      const sqlState = (error as { parent?: { code?: unknown } }).parent?.code;
      if (typeof sqlState !== "string" || !sqlState.startsWith("22") || lines.length === 0) throw error;
      if (lines.length === 1) return new Map([[String((JSON.parse(lines[0]) as { seq?: unknown }).seq), false]]);
      const checked = new Map<string, boolean>();
      for (const line of lines) {
        const one = await this.hashesMatch([line]);
        for (const [seq, ok] of one) checked.set(seq, ok);
        if ([...one.values()].includes(false)) break;
      }
      return checked;
    }
  }

  private async hashesMatchOnce(lines: string[]): Promise<Map<string, boolean>> {
    const rows = await readRows<{ seq: string; ok: boolean }>(
      this.sequelize,
      `SELECT r.seq::text AS seq, coalesce(audit_event_hash(r.id, r.seq, r."occurredAt", r."eventType", r.severity, r."userId", r."userEmail",
              r.provider, r.action, r."resourceType", r."resourceId", r."resourceLabel", r."ipAddress", r."userAgent", r."sessionId",
              r."requestId", r.changes, r.error, decode(r."prevHash", 'hex')) = decode(r.hash, 'hex'), false) AS ok
         FROM jsonb_to_recordset($1::jsonb) AS r${LINE_RECORD}`,
      [`[${lines.join(",")}]`],
    );
    return new Map(rows.map((row) => [row.seq, row.ok]));
  }
}

function monthText(month: Date): string {
  return month.toISOString().slice(0, 10);
}
