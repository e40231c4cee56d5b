import type { Sequelize, Transaction } from "sequelize";
import { likePattern, selectRows } from "../common/sql";
import type { AuditEventType, Severity } from "./audit.catalogue";
import type { Changes } from "./audit-changes";

export type AuditEventRow = {
  id: string;
  seq: string;
  timestamp: Date;
  eventType: AuditEventType;
  severity: Severity;
  userId: string | null;
  userEmail: string | null;
  provider: string | null;
  action: string | null;
  resourceType: string | null;
  resourceId: string | null;
  resourceLabel: string | null;
  ipAddress: string | null;
  userAgent: string | null;
  sessionId: string | null;
  requestId: string | null;
  changes: Changes | null;
  error: string | null;
  prevHash: Buffer | null;
  hash: Buffer;
};

export type NewAuditEvent = Omit<AuditEventRow, "seq" | "prevHash" | "hash">;

/** A filter already checked and normalised by the service: every value here is safe to bind. */
export type AuditQuery = {
  /** Lower-case words, each matched as a substring of the search text. */
  words: string[];
  userIds: string[];
  providers: string[];
  eventTypes: AuditEventType[];
  severities: Severity[];
  from: Date | null;
  /** Exclusive upper bound (the service turns an inclusive end into this). */
  before: Date | null;
  ipCidr: string | null;
};

export type Keyset = { timestamp: Date; id: string };

export type VerifyRow = {
  id: string;
  seq: string;
  timestamp: Date;
  prevHash: Buffer | null;
  hash: Buffer;
  hashMatches: boolean;
};

const COLUMNS = `id, seq, occurred_at AS "timestamp", event_type AS "eventType", severity, user_id AS "userId",
  user_email AS "userEmail", provider, action, resource_type AS "resourceType", resource_id AS "resourceId",
  resource_label AS "resourceLabel", host(ip_address) AS "ipAddress", user_agent AS "userAgent",
  session_id AS "sessionId", request_id AS "requestId", changes, error, prev_hash AS "prevHash", hash`;

const HASH_OF_ROW = `audit_event_hash(id, seq, occurred_at, event_type, severity, user_id, user_email, provider, action,
  resource_type, resource_id, resource_label, ip_address, user_agent, session_id, request_id, changes, error, prev_hash)`;

/**
 * Appends one event as the next link of the chain, in one statement: the CTE locks the chain head
 * (a writer in another transaction waits here until this one commits or rolls back, then reads the
 * new head), hashes the event onto it and moves the head.
 */
const APPEND_SQL = `
WITH head AS (SELECT seq, hash FROM audit_chain_head FOR UPDATE),
event AS (
  SELECT $1::uuid AS id, head.seq + 1 AS seq, $2::timestamptz AS occurred_at, $3::text AS event_type, $4::text AS severity,
         $5::uuid AS user_id, $6::text AS user_email, $7::text AS provider, $8::text AS action, $9::text AS resource_type,
         $10::text AS resource_id, $11::text AS resource_label, $12::inet AS ip_address, $13::text AS user_agent,
         $14::text AS session_id, $15::text AS request_id, $16::jsonb AS changes, $17::text AS error, head.hash AS prev_hash
    FROM head
),
inserted AS (
  INSERT INTO audit_events (id, seq, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type,
                            resource_id, resource_label, ip_address, user_agent, session_id, request_id, changes, error,
                            prev_hash, hash)
  SELECT id, seq, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type, resource_id,
         resource_label, ip_address, user_agent, session_id, request_id, changes, error, prev_hash, ${HASH_OF_ROW}
    FROM event
  RETURNING ${COLUMNS}
),
moved AS (UPDATE audit_chain_head SET seq = inserted.seq, hash = inserted.hash FROM inserted)
SELECT * FROM inserted`;

export class AuditRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async append(event: NewAuditEvent, transaction: Transaction): Promise<AuditEventRow> {
    const [row] = await selectRows<AuditEventRow>(
      this.sequelize,
      APPEND_SQL,
      [
        event.id,
        event.timestamp,
        event.eventType,
        event.severity,
        event.userId,
        event.userEmail,
        event.provider,
        event.action,
        event.resourceType,
        event.resourceId,
        event.resourceLabel,
        event.ipAddress,
        event.userAgent,
        event.sessionId,
        event.requestId,
        event.changes === null ? null : JSON.stringify(event.changes),
        event.error,
      ],
      transaction,
    );
    return row;
  }

  /** Newest first, keyset after `after`, skipping `offset`; fetches one extra row to tell whether more exist. */
  async list(query: AuditQuery, options: { limit: number; offset: number; after: Keyset | null }): Promise<AuditEventRow[]> {
    const { where, bind } = whereClause(query);
    if (options.after) {
      bind.push(options.after.timestamp, options.after.id);
      where.push(`(occurred_at, id) < ($${bind.length - 1}::timestamptz, $${bind.length}::uuid)`);
    }
    bind.push(options.limit + 1, options.offset);
    return selectRows<AuditEventRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM audit_events ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY occurred_at DESC, id DESC LIMIT $${bind.length - 1} OFFSET $${bind.length}`,
      bind,
    );
  }

  /** Counts matches up to `cap`: an exact count over years of events would cost more than the page. */
  async countUpTo(query: AuditQuery, cap: number): Promise<number> {
    const { where, bind } = whereClause(query);
    bind.push(cap);
    const [row] = await selectRows<{ count: string }>(
      this.sequelize,
      `SELECT count(*) AS count FROM (SELECT 1 FROM audit_events ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        LIMIT $${bind.length}) AS capped`,
      bind,
    );
    return Number(row.count);
  }

  /** One batch of the chain in `seq` order, each row with whether its stored hash matches its content. */
  verifyBatch(
    afterSeq: bigint,
    throughSeq: bigint,
    limit: number,
    range: { from: Date | null; before: Date | null },
  ): Promise<VerifyRow[]> {
    const bind: unknown[] = [afterSeq.toString(), limit, throughSeq.toString()];
    const where = ["seq > $1", "seq <= $3"];
    if (range.from) where.push(`occurred_at >= $${bind.push(range.from)}`);
    if (range.before) where.push(`occurred_at < $${bind.push(range.before)}`);
    return selectRows<VerifyRow>(
      this.sequelize,
      `SELECT id, seq, occurred_at AS "timestamp", prev_hash AS "prevHash", hash, ${HASH_OF_ROW} = hash AS "hashMatches"
         FROM audit_events WHERE ${where.join(" AND ")} ORDER BY seq, occurred_at, id LIMIT $2`,
      bind,
    );
  }

  async bySeq(seq: bigint): Promise<VerifyRow | null> {
    const [row] = await selectRows<VerifyRow>(
      this.sequelize,
      `SELECT id, seq, occurred_at AS "timestamp", prev_hash AS "prevHash", hash, ${HASH_OF_ROW} = hash AS "hashMatches"
         FROM audit_events WHERE seq = $1 ORDER BY occurred_at, id LIMIT 1`,
      [seq.toString()],
    );
    return row ?? null;
  }

  /** The first event past the chain head: nothing the application wrote can be there. One statement, one snapshot. */
  async firstBeyondHead(): Promise<VerifyRow | null> {
    const [row] = await selectRows<VerifyRow>(
      this.sequelize,
      `SELECT id, seq, occurred_at AS "timestamp", prev_hash AS "prevHash", hash, ${HASH_OF_ROW} = hash AS "hashMatches"
         FROM audit_events WHERE seq > (SELECT seq FROM audit_chain_head) ORDER BY seq LIMIT 1`,
      [],
    );
    return row ?? null;
  }

  async chainHead(): Promise<{ seq: string; hash: Buffer | null }> {
    const [row] = await selectRows<{ seq: string; hash: Buffer | null }>(this.sequelize, "SELECT seq, hash FROM audit_chain_head", []);
    return row;
  }

  /** Creates the monthly partitions from this month to `monthsAhead` months ahead; names the months it had to skip. */
  async ensurePartitions(monthsAhead: number, from: Date = new Date()): Promise<{ created: string[]; skipped: string[] }> {
    const rows = await selectRows<{ month: string; ok: boolean; existed: boolean }>(
      this.sequelize,
      `SELECT to_char(month, 'YYYY-MM') AS month,
              to_regclass(format('audit_events_y%sm%s', to_char(month, 'YYYY'), to_char(month, 'MM'))) IS NOT NULL AS existed,
              audit_create_month_partition(month) AS ok
         FROM (SELECT (date_trunc('month', $1::timestamptz AT TIME ZONE 'UTC') + make_interval(months => m))::date AS month
                 FROM generate_series(0, $2::int) AS m) AS months
        ORDER BY month`,
      [from, monthsAhead],
    );
    return {
      created: rows.filter((row) => row.ok && !row.existed).map((row) => row.month),
      skipped: rows.filter((row) => !row.ok).map((row) => row.month),
    };
  }

  async partitionNames(): Promise<string[]> {
    const rows = await selectRows<{ name: string }>(
      this.sequelize,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'audit_events'::regclass ORDER BY c.relname`,
      [],
    );
    return rows.map((row) => row.name);
  }
}

function whereClause(query: AuditQuery): { where: string[]; bind: unknown[] } {
  const where: string[] = [];
  const bind: unknown[] = [];
  for (const word of query.words) where.push(`search_text LIKE $${bind.push(likePattern(word))}`);
  if (query.userIds.length) where.push(`user_id = ANY($${bind.push(query.userIds)}::uuid[])`);
  if (query.providers.length) where.push(`provider = ANY($${bind.push(query.providers)}::text[])`);
  if (query.eventTypes.length) where.push(`event_type = ANY($${bind.push(query.eventTypes)}::text[])`);
  if (query.severities.length) where.push(`severity = ANY($${bind.push(query.severities)}::text[])`);
  if (query.from) where.push(`occurred_at >= $${bind.push(query.from)}`);
  if (query.before) where.push(`occurred_at < $${bind.push(query.before)}`);
  if (query.ipCidr) where.push(`ip_address <<= $${bind.push(query.ipCidr)}::inet`);
  return { where, bind };
}
