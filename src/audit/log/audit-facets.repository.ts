import type { Sequelize } from "sequelize";
import { bindParam, readRows, readRowsWithin } from "../../platform/common/sql";
import { auditConditions, type AuditQuery } from "./audit-query.sql";

/** The fields the console shows facets for, as the service names them. */
export const FACET_DIMENSIONS = ["eventType", "user", "ipAddress", "provider", "severity"] as const;
export type FacetDimension = (typeof FACET_DIMENSIONS)[number];

/** One value of one dimension with its count; `label` is what the row itself says about it (a user's e-mail). */
export type FacetRow = { dimension: FacetDimension; value: string; label: string | null; count: number };

/**
 * Top values per dimension for a filter, in one pass over its rows (GROUPING SETS), ranked within each
 * dimension. Events without a value in a dimension (no user, no address) are not a value of it.
 */
function facetSql(query: AuditQuery, limit: number, samplePercent: number | null) {
  const { where, bind } = auditConditions(query);
  const sample = samplePercent === null ? "" : ` TABLESAMPLE SYSTEM (${bindParam(bind, samplePercent)})`;
  const count = samplePercent === null ? "count(*)" : `round(count(*) * 100 / ${bindParam(bind, samplePercent)}::float8)`;
  const top = bindParam(bind, limit);
  const sql = `SELECT dimension, value, label, count FROM (
      SELECT CASE WHEN GROUPING(event_type) = 0 THEN 'eventType' WHEN GROUPING(user_id) = 0 THEN 'user'
                  WHEN GROUPING(ip_address) = 0 THEN 'ipAddress' WHEN GROUPING(provider) = 0 THEN 'provider' ELSE 'severity' END AS dimension,
             COALESCE(event_type, user_id::text, host(ip_address), provider, severity) AS value,
             CASE WHEN GROUPING(user_id) = 0 THEN max(user_email) END AS label,
             ${count}::int AS count,
             row_number() OVER (PARTITION BY GROUPING(event_type, user_id, ip_address, provider, severity) ORDER BY count(*) DESC,
                                COALESCE(event_type, user_id::text, host(ip_address), provider, severity)) AS rank
        FROM audit_events${sample} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       GROUP BY GROUPING SETS ((event_type), (user_id), (ip_address), (provider), (severity))
    ) AS ranked
   WHERE value IS NOT NULL AND rank <= ${top}
   ORDER BY dimension, count DESC, value`;
  return { sql, bind };
}

export class AuditFacetRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Every match counted, unless that takes longer than `budgetMs` (null then), as the histogram. */
  facets(query: AuditQuery, limit: number, budgetMs: number): Promise<FacetRow[] | null> {
    const { sql, bind } = facetSql(query, limit, null);
    return readRowsWithin<FacetRow>(this.sequelize, sql, bind, budgetMs);
  }

  /** The same, estimated from a random `percent` of the table's pages, scaled up. */
  facetsSampled(query: AuditQuery, limit: number, percent: number): Promise<FacetRow[]> {
    const { sql, bind } = facetSql(query, limit, percent);
    return readRows<FacetRow>(this.sequelize, sql, bind);
  }
}
