import type { Sequelize } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";
import { auditConditions, type AuditQuery } from "../log";

/** What a report table can be grouped by: each a fixed SQL expression over audit_events (never client text). */
export const GROUP_KEYS = {
  eventType: "event_type",
  severity: "severity",
  user: "coalesce(user_email, '(no user)')",
  provider: "coalesce(provider, '(local)')",
  ipAddress: "coalesce(host(ip_address), '(no address)')",
  day: `to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  reason: "coalesce(error, '(no reason given)')",
} as const;
export type GroupKey = keyof typeof GROUP_KEYS;

/** `total`: how many rows the query has before its limit (every row of a page carries it). */
export type GroupCount = { key: string; count: number; total: number };

/** An event as report tables show it, every field as text. */
export type ReportEventRow = {
  timestamp: string;
  eventType: string;
  severity: string;
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
  changes: Record<string, { old: unknown; new: unknown }> | null;
  error: string | null;
  /** Matching rows before the limit. */
  total: number;
};

export type PerUserSummary = { email: string; events: number; first: string; last: string; addresses: number; total: number };

/** The number of rows a query has before its LIMIT (window functions run before it). */
const TOTAL = `count(*) OVER () AS total`;

const ROW_COLUMNS = `to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "timestamp", e.event_type AS "eventType",
  e.severity, e.user_id AS "userId", e.user_email AS "userEmail", e.provider, e.action, e.resource_type AS "resourceType",
  e.resource_id AS "resourceId", e.resource_label AS "resourceLabel", host(e.ip_address) AS "ipAddress", e.user_agent AS "userAgent",
  e.session_id AS "sessionId", e.request_id AS "requestId", e.changes, e.error`;

/** Restricts to events about (not by) these users: resource type user with one of these ids. */
export type Subjects = { subjectUserIds?: string[] };

/**
 * The SQL behind compliance reports. Every statement starts from the audit search's own conditions
 * (auditConditions), so "the events of a report" are the events a search with the same filters shows.
 */
export class ReportRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Matching events counted per key, largest first (then by key); `limit` keeps the top ones. */
  async groupCount(query: AuditQuery, key: GroupKey, options: Subjects & { limit?: number; byKey?: boolean } = {}): Promise<GroupCount[]> {
    const { where, bind } = this.conditions(query, options);
    const limit = options.limit ? ` LIMIT ${bindParam(bind, options.limit)}` : "";
    const rows = await selectRows<{ key: string; count: string; total: string }>(
      this.sequelize,
      `SELECT ${GROUP_KEYS[key]} AS key, count(*) AS count, ${TOTAL} FROM audit_events e ${whereSql(where)}
        GROUP BY 1 ORDER BY ${options.byKey ? "1" : "2 DESC, 1"}${limit}`,
      bind,
    );
    return rows.map((row) => ({ key: row.key, count: Number(row.count), total: Number(row.total) }));
  }

  async count(query: AuditQuery, options: Subjects = {}): Promise<number> {
    const { where, bind } = this.conditions(query, options);
    const [row] = await selectRows<{ count: string }>(
      this.sequelize,
      `SELECT count(*) AS count FROM audit_events e ${whereSql(where)}`,
      bind,
    );
    return Number(row.count);
  }

  /** Matching events in time order (by user first when `byUser`), at most `limit`. */
  async events(query: AuditQuery, limit: number, options: Subjects & { byUser?: boolean } = {}): Promise<ReportEventRow[]> {
    const { where, bind } = this.conditions(query, options);
    const rows = await selectRows<ReportEventRow>(
      this.sequelize,
      `SELECT ${ROW_COLUMNS}, ${TOTAL} FROM audit_events e ${whereSql(where)}
        ORDER BY ${options.byUser ? "e.user_email, " : ""}e.occurred_at, e.id LIMIT ${bindParam(bind, limit)}`,
      bind,
    );
    return rows.map((row) => ({ ...row, total: Number(row.total) }));
  }

  /** Per acting user: events, first and last time, distinct addresses. */
  async perUser(query: AuditQuery, limit: number): Promise<PerUserSummary[]> {
    const { where, bind } = auditConditions(query);
    const rows = await selectRows<PerUserSummary & { events: string; addresses: string; total: string }>(
      this.sequelize,
      `SELECT coalesce(user_email, '(no user)') AS email, count(*) AS events,
              to_char(min(occurred_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS first,
              to_char(max(occurred_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS last,
              count(DISTINCT ip_address) AS addresses, ${TOTAL}
         FROM audit_events ${whereSql(where)} GROUP BY 1 ORDER BY 1 LIMIT ${bindParam(bind, limit)}`,
      bind,
    );
    return rows.map((row) => ({ ...row, events: Number(row.events), addresses: Number(row.addresses), total: Number(row.total) }));
  }

  /**
   * Events by a user after that user's suspension and before any reactivation: what a suspension
   * should have made impossible. Events recorded by the suspending request itself (its sessions
   * ending) are not activity. Returns the events with the time of the suspension they follow.
   */
  async activityAfterSuspension(query: AuditQuery, limit: number): Promise<Array<ReportEventRow & { suspendedAt: string }>> {
    const { where, bind } = auditConditions(query);
    const rows = await selectRows<ReportEventRow & { suspendedAt: string }>(
      this.sequelize,
      `SELECT ${ROW_COLUMNS}, to_char(s.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "suspendedAt", ${TOTAL}
         FROM (SELECT * FROM audit_events ${whereSql(where)}) AS e
         JOIN LATERAL (SELECT s.occurred_at, s.request_id FROM audit_events s
                        WHERE s.event_type = 'user.suspended' AND s.resource_type = 'user' AND s.resource_id = e.user_id::text
                          AND s.occurred_at < e.occurred_at ORDER BY s.occurred_at DESC LIMIT 1) AS s ON true
        WHERE e.user_id::text IN (SELECT resource_id FROM audit_events WHERE event_type = 'user.suspended' AND resource_type = 'user')
          AND e.request_id IS DISTINCT FROM s.request_id
          AND NOT EXISTS (SELECT 1 FROM audit_events r WHERE r.event_type = 'user.reactivated' AND r.resource_type = 'user'
                            AND r.resource_id = e.user_id::text AND r.occurred_at > s.occurred_at AND r.occurred_at < e.occurred_at)
        ORDER BY e.occurred_at, e.id LIMIT ${bindParam(bind, limit)}`,
      bind,
    );
    return rows.map((row) => ({ ...row, total: Number(row.total) }));
  }

  private conditions(query: AuditQuery, options: Subjects): { where: string[]; bind: unknown[] } {
    const { where, bind } = auditConditions(query);
    if (options.subjectUserIds?.length) {
      where.push(`resource_type = 'user' AND resource_id = ANY(${bindParam(bind, options.subjectUserIds)}::text[])`);
    }
    return { where, bind };
  }
}

function whereSql(conditions: string[]): string {
  return conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
}
