import pg from "pg";
import { Sequelize } from "sequelize";

export type DatabaseOptions = {
  url: string;
  poolMax: number;
  /** Called with each SQL statement; tests use it to count statements. */
  onStatement?: (sql: string) => void;
  /** Cancels any statement running longer than this (PostgreSQL's statement_timeout); unset: no limit. */
  statementTimeoutMs?: number;
};

// Return numeric and bigint columns as strings: money must never pass through a JS float.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => value);
// `date` columns stay 'YYYY-MM-DD' instead of becoming a local-midnight Date.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

export function createSequelize(options: DatabaseOptions): Sequelize {
  return new Sequelize(options.url, {
    dialect: "postgres",
    dialectModule: pg,
    logging: options.onStatement ? (sql) => options.onStatement!(sql) : false,
    pool: { max: options.poolMax, min: 0, idle: 10000, acquire: 30000 },
    dialectOptions: options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {},
    define: { underscored: true, timestamps: true },
  });
}

/** Postgres error codes the services translate into domain errors. */
export const PG_UNIQUE_VIOLATION = "23505";
export const PG_FOREIGN_KEY_VIOLATION = "23503";
export const PG_QUERY_CANCELED = "57014";

/** Whether the database answers (readiness probes). */
export async function pingDatabase(sequelize: Sequelize): Promise<void> {
  await sequelize.query("SELECT 1");
}

export type PoolStats = { max: number; open: number; inUse: number; idle: number; waiting: number };

/** The connection pool as it is now (sequelize-pool's counters), for /metrics. */
export function poolStats(sequelize: Sequelize): PoolStats {
  const pool = (
    sequelize.connectionManager as unknown as {
      pool?: { maxSize: number; size: number; using: number; available: number; waiting: number };
    }
  ).pool;
  if (!pool) return { max: 0, open: 0, inUse: 0, idle: 0, waiting: 0 };
  return { max: pool.maxSize, open: pool.size, inUse: pool.using, idle: pool.available, waiting: pool.waiting };
}
