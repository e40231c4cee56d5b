import { type Attributes, type CreationAttributes, type Sequelize, type WhereOptions } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import { BankConnectionModel, BankSyncRunModel, type BankProvider, type ConnectionStatus, type SyncRunStatus } from "./banking.model";
import type { SyncState } from "./provider";

/** What a client may change on a connection. */
export type ConnectionChanges = Partial<Pick<BankConnectionModel, "name" | "includePending" | "debugLogging" | "autoCreateAccounts">>;

export type ConnectionRow = {
  id: string;
  familyId: string;
  provider: BankProvider;
  name: string;
  credentials: string;
  baseUrl: string | null;
  status: ConnectionStatus;
  includePending: boolean;
  debugLogging: boolean;
  autoCreateAccounts: boolean;
  lastError: string | null;
  lastSyncAt: Date | null;
  syncState: SyncState;
  requestsToday: number;
  createdAt: Date;
  updatedAt: Date;
};

export type SyncRunRow = {
  id: string;
  connectionId: string;
  status: SyncRunStatus;
  trigger: string;
  createdCount: number;
  updatedCount: number;
  skippedCount: number;
  requestCount: number;
  errors: string[];
  startedAt: Date | null;
  heartbeatAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  /** Set where the run is read apart from its connection. */
  connectionName?: string;
};

const CONNECTION_COLUMNS = `id, family_id AS "familyId", provider, name, credentials, base_url AS "baseUrl", status,
  include_pending AS "includePending", debug_logging AS "debugLogging",
  auto_create_accounts AS "autoCreateAccounts", last_error AS "lastError",
  last_sync_at AS "lastSyncAt", sync_state AS "syncState",
  CASE WHEN requests_day = current_date THEN requests_today ELSE 0 END AS "requestsToday",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const RUN_COLUMNS = `id, connection_id AS "connectionId", status, trigger, created_count AS "createdCount",
  updated_count AS "updatedCount", skipped_count AS "skippedCount", request_count AS "requestCount", errors,
  started_at AS "startedAt", heartbeat_at AS "heartbeatAt", finished_at AS "finishedAt", created_at AS "createdAt"`;

/** Runs read with their connection's name (the family-wide run routes, where no connection is at hand). */
const withConnectionName = (runs: string) =>
  `SELECT runs.*, c.name AS "connectionName" FROM (${runs}) runs JOIN bank_connections c ON c.id = runs."connectionId"
    ORDER BY runs."createdAt" DESC, runs.id DESC`;

/** Bank connections and their sync runs. */
export class BankConnectionRepository {
  constructor(private readonly sequelize: Sequelize) {}

  // ---- connection and run writes ---------------------------------------------------------------------

  async createConnection(values: CreationAttributes<BankConnectionModel>): Promise<void> {
    await BankConnectionModel.create(values);
  }

  /** Updates connection `id`, only within `familyId` when given (a client's request; the sync worker passes none). */
  async updateConnection(id: string, changes: Partial<Attributes<BankConnectionModel>>, familyId?: string): Promise<void> {
    const where: WhereOptions<BankConnectionModel> = familyId ? { id, familyId } : { id };
    await BankConnectionModel.update(changes, { where });
  }

  async deleteConnection(familyId: string, id: string): Promise<void> {
    await BankConnectionModel.destroy({ where: { id, familyId } });
  }

  async createRun(values: CreationAttributes<BankSyncRunModel>): Promise<void> {
    await BankSyncRunModel.create(values);
  }

  async updateRun(id: string, changes: Partial<Attributes<BankSyncRunModel>>): Promise<void> {
    await BankSyncRunModel.update(changes, { where: { id } });
  }

  // ---- connections and runs -------------------------------------------------------------------------

  connections(familyId: string): Promise<ConnectionRow[]> {
    return selectRows<ConnectionRow>(
      this.sequelize,
      `SELECT ${CONNECTION_COLUMNS} FROM bank_connections WHERE family_id = $1 ORDER BY created_at, id`,
      [familyId],
    );
  }

  /** Without a family: for the worker, which acts on a connection id from its own queue. */
  async connection(id: string, familyId?: string): Promise<ConnectionRow | null> {
    const [row] = await selectRows<ConnectionRow>(
      this.sequelize,
      `SELECT ${CONNECTION_COLUMNS} FROM bank_connections WHERE id = $1 ${familyId ? "AND family_id = $2" : ""}`,
      familyId ? [id, familyId] : [id],
    );
    return row ?? null;
  }

  /** Connections the refresh should sync now: not waiting for new credentials, and not synced lately or with a walk left unfinished. */
  dueConnections(olderThanSeconds: number): Promise<ConnectionRow[]> {
    return selectRows<ConnectionRow>(
      this.sequelize,
      `SELECT ${CONNECTION_COLUMNS} FROM bank_connections
        WHERE status <> 'requires_update'
          AND (last_sync_at IS NULL OR last_sync_at < now() - make_interval(secs => $1) OR jsonb_typeof(sync_state -> 'walk') = 'object')`,
      [olderThanSeconds],
    );
  }

  runs(connectionId: string, limit: number): Promise<SyncRunRow[]> {
    return selectRows<SyncRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE connection_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      [connectionId],
    );
  }

  /** The newest `limit` runs of each of these connections of the family, newest first. */
  runsOfConnections(familyId: string, connectionIds: readonly string[], limit: number): Promise<SyncRunRow[]> {
    return selectRows<SyncRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM (
         SELECT *, row_number() OVER (PARTITION BY connection_id ORDER BY created_at DESC, id DESC) AS position
           FROM bank_sync_runs WHERE family_id = $1 AND connection_id = ANY($2::uuid[])) runs
        WHERE position <= $3
        ORDER BY created_at DESC, id DESC`,
      [familyId, connectionIds, limit],
    );
  }

  /** The family's runs of every connection, newest first, a page at a time with the total. */
  async runsPage(familyId: string, limit: number, offset: number): Promise<{ rows: SyncRunRow[]; total: number }> {
    const rows = await selectRows<SyncRunRow & { total: string }>(
      this.sequelize,
      withConnectionName(
        `SELECT ${RUN_COLUMNS}, count(*) OVER () AS total FROM bank_sync_runs WHERE family_id = $1
          ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      ),
      [familyId, limit, offset],
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(
      this.sequelize,
      "SELECT count(*) AS total FROM bank_sync_runs WHERE family_id = $1",
      [familyId],
    );
    return { rows, total: Number(count.total) };
  }

  async familyRun(familyId: string, id: string): Promise<SyncRunRow | null> {
    const [row] = await selectRows<SyncRunRow>(
      this.sequelize,
      withConnectionName(`SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE family_id = $1 AND id = $2`),
      [familyId, id],
    );
    return row ?? null;
  }

  async run(id: string): Promise<SyncRunRow | null> {
    const [row] = await selectRows<SyncRunRow>(this.sequelize, `SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** The run a sync job continues: the newest one not yet finished. */
  async openRun(connectionId: string): Promise<SyncRunRow | null> {
    const [row] = await selectRows<SyncRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE connection_id = $1 AND status IN ('pending', 'syncing')
        ORDER BY created_at DESC LIMIT 1`,
      [connectionId],
    );
    return row ?? null;
  }

  /**
   * Counts one request against the connection's day and refuses it past the budget (null budget: count
   * only). The day rolls over by itself: a new date restarts the count.
   */
  async countRequest(connectionId: string, runId: string, budget: number | null): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `WITH counted AS (
         UPDATE bank_connections
            SET requests_today = CASE WHEN requests_day = current_date THEN requests_today + 1 ELSE 1 END, requests_day = current_date
          WHERE id = $1 AND ($2::int IS NULL OR requests_day IS DISTINCT FROM current_date OR requests_today < $2::int)
          RETURNING id)
       UPDATE bank_sync_runs SET request_count = request_count + 1, heartbeat_at = now() WHERE id = $3 AND EXISTS (SELECT 1 FROM counted)
       RETURNING id`,
      [connectionId, budget, runId],
    );
    return rows.length > 0;
  }
}
