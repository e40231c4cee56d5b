import type { Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import { LINE_RECORD, PARTITION_LOCK_WAIT_MS } from "./retention.repository";

const PARTITION_NAME = /^audit_events_y\d{4}m(0[1-9]|1[0-2])$/;

function table(name: string): string {
  if (!PARTITION_NAME.test(name)) throw new Error(`not an audit partition name: ${name}`);
  return `"${name}"`;
}

/** The first link of a restored month that does not follow the one before it, or its last link. */
export type RestoredLinks = { broken: { seq: string; id: string } | null; last: { seq: string; hash: Buffer } | null; links: number };

/**
 * Restore and release of an archived month: its events back into their partition and its chain links
 * back into audit_chain (so a restored event has its seq, prevHash and hash again), and both gone again.
 */
export class RestoreRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Archive lines back as the rows they were, events and links, in one statement. */
  async insertLines(lines: string[], transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r${LINE_RECORD}),
       events AS (
         INSERT INTO audit_events (id, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type, resource_id,
                                   resource_label, ip_address, user_agent, session_id, request_id, changes, error)
         SELECT r.id, r."occurredAt", r."eventType", r.severity, r."userId", r."userEmail", r.provider, r.action, r."resourceType",
                r."resourceId", r."resourceLabel", r."ipAddress", r."userAgent", r."sessionId", r."requestId", r.changes, r.error
           FROM r RETURNING 1),
       links AS (
         INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
         SELECT r.seq, r.id, r."occurredAt", decode(r."prevHash", 'hex'), decode(r.hash, 'hex') FROM r RETURNING 1)
       SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM links)::int AS links`,
      [`[${lines.join(",")}]`],
      transaction,
    );
  }

  /** The restored month's links in sequence order: the first that does not follow its predecessor, and the last. */
  async checkLinks(range: { from: Date; before: Date }, transaction: Transaction): Promise<RestoredLinks> {
    const [broken] = await selectRows<{ seq: string; id: string }>(
      this.sequelize,
      `SELECT seq::text AS seq, event_id AS id FROM (
         SELECT c.seq, c.event_id, c.prev_hash, lag(c.hash) OVER w AS before_hash, lag(c.seq) OVER w AS before_seq
           FROM audit_chain c WHERE c.occurred_at >= $1 AND c.occurred_at < $2 WINDOW w AS (ORDER BY c.seq)) AS x
        WHERE before_seq IS NOT NULL AND (seq <> before_seq + 1 OR prev_hash IS DISTINCT FROM before_hash)
        ORDER BY seq LIMIT 1`,
      [range.from, range.before],
      transaction,
    );
    const [last] = await selectRows<{ seq: string; hash: Buffer; links: number }>(
      this.sequelize,
      `SELECT c.seq::text AS seq, c.hash, (SELECT count(*) FROM audit_chain WHERE occurred_at >= $1 AND occurred_at < $2)::int AS links
         FROM audit_chain c WHERE c.occurred_at >= $1 AND c.occurred_at < $2 ORDER BY c.seq DESC LIMIT 1`,
      [range.from, range.before],
      transaction,
    );
    return { broken: broken ?? null, last: last ? { seq: last.seq, hash: last.hash } : null, links: last?.links ?? 0 };
  }

  /**
   * Release: the restored month's event partition and link partition are dropped (a partition dropped
   * whole leaves its parent with it), and links of the month the default partition holds (a month
   * restored while it held strays) are deleted by range: one round trip, waiting at most
   * PARTITION_LOCK_WAIT_MS for the audit log's lock. Nothing is counted here: the partitions are not
   * read at all (the service answers the count the restore recorded). Events before links, as the chain
   * sequencer takes them (migration 0023): links first deadlocked with a sequencer reading the events.
   */
  async release(tableName: string, range: { from: Date; before: Date }, transaction: Transaction): Promise<void> {
    const chainTable = table(tableName).replace("audit_events_", "audit_chain_");
    await this.sequelize.query(
      `SELECT set_config('lock_timeout', '${PARTITION_LOCK_WAIT_MS}ms', true), set_config('finance_gateway.retention_drop', 'on', true);
       DROP TABLE ${table(tableName)};
       DROP TABLE IF EXISTS ${chainTable};
       DELETE FROM audit_chain WHERE occurred_at >= ${timestamp(range.from)} AND occurred_at < ${timestamp(range.before)};`,
      { transaction },
    );
  }
}

/** A month bound as a timestamptz literal (a Date's ISO text: digits and separators only). */
function timestamp(at: Date): string {
  return `'${at.toISOString()}'::timestamptz`;
}
