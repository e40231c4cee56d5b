import { bindParam } from "../../platform/common/sql";
import { textConditions, whereClause, whereSql, type AuditQuery } from "./audit-query.sql";

/*
 * An event as an export writes it, rendered by PostgreSQL (audit.repository.ts's exportBatch streams
 * it out with COPY): a JSON line or a CSV record, byte for byte what export-formats.ts describes.
 */

/** An export's keyset: the timestamp as ISO text with microseconds, so no row is skipped or repeated. */
export type ExportKey = { at: string; id: string };
/** The fields of each row exportBatch writes, by position. */
export const EXPORT_BATCH_FIELDS = { at: 0, id: 1, line: 2, width: 3 } as const;

/** An event as the export writes it: the fields and order of toEvent in the service, timestamps in ISO 8601 UTC. */
const EXPORT_TIMESTAMP = `to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const EXPORT_JSON = `json_build_object('id', e.id, 'seq', c.seq::text, 'timestamp', ${EXPORT_TIMESTAMP}, 'eventType', e.event_type,
  'severity', e.severity,
  'user', CASE WHEN e.user_id IS NOT NULL OR e.user_email IS NOT NULL THEN json_build_object('id', e.user_id, 'email', coalesce(e.user_email, '')) END,
  'provider', e.provider, 'action', e.action,
  'resource', CASE WHEN e.resource_type IS NOT NULL THEN json_build_object('type', e.resource_type, 'id', coalesce(e.resource_id, ''), 'label', e.resource_label) END,
  'ipAddress', host(e.ip_address), 'userAgent', e.user_agent, 'sessionId', e.session_id, 'requestId', e.request_id, 'changes', e.changes,
  'error', e.error, 'prevHash', encode(c.prev_hash, 'hex'), 'hash', encode(c.hash, 'hex'))::text`;
/**
 * One CSV field of a text column, written exactly as csvField (export-formats.ts) writes it: empty for
 * NULL, an apostrophe before a leading formula character, quoted (quotes doubled) when it holds a
 * quote, comma, CR or LF. `column` is read several times, so it must be a column, not an expression.
 */
function csvFieldSql(column: string): string {
  const neutral = `CASE WHEN left(${column}, 1) IN ('=', '+', '-', '@', E'\\t', E'\\r') THEN '''' || ${column} ELSE ${column} END`;
  const special = [`'"'`, `','`, `E'\\n'`, `E'\\r'`].map((char) => `strpos(${column}, ${char}) > 0`).join(" OR ");
  return `CASE WHEN ${column} IS NULL THEN '' WHEN ${special} THEN '"' || replace(${neutral}, '"', '""') || '"' ELSE ${neutral} END`;
}
/** A field that cannot hold a special character (an id, a number, a timestamp, hex, an address): only NULL needs care. */
const plainField = (expression: string) => `coalesce(${expression}, '')`;
/** The CSV record of an event (CSV_COLUMNS of export-formats.ts, in order), without its line end. */
const EXPORT_CSV = `concat_ws(',', ${[
  plainField("e.id::text"),
  plainField("c.seq::text"),
  plainField(EXPORT_TIMESTAMP),
  csvFieldSql("e.event_type"),
  csvFieldSql("e.severity"),
  plainField("e.user_id::text"),
  csvFieldSql("e.user_email"),
  csvFieldSql("e.provider"),
  csvFieldSql("e.action"),
  csvFieldSql("e.resource_type"),
  csvFieldSql("e.resource_id"),
  csvFieldSql("e.resource_label"),
  plainField("host(e.ip_address)"),
  csvFieldSql("e.user_agent"),
  csvFieldSql("e.session_id"),
  csvFieldSql("e.request_id"),
  csvFieldSql("e.changes_text"),
  csvFieldSql("e.error"),
  plainField("encode(c.prev_hash, 'hex')"),
  plainField("encode(c.hash, 'hex')"),
].join(", ")})`;

/** The statement of one export batch (see AuditRepository.exportBatch): the filter's events after `after`, each rendered. */
export function exportBatchSql(query: AuditQuery, after: ExportKey | null, limit: number, line: "json" | "csv") {
  const { where, bind } = whereClause(query);
  where.push(...textConditions(query, bind));
  if (after) where.push(`(occurred_at, id) > (${bindParam(bind, after.at)}::timestamptz, ${bindParam(bind, after.id)}::uuid)`);
  // A CSV record reads the changes' text several times: the subquery (its LIMIT keeps it one) renders it once.
  const columns = line === "csv" ? "*, changes::text AS changes_text" : "*";
  // One ordered index scan joined to the chain, streamed as it goes: the outer order is the scan's, so
  // nothing is sorted and no row waits for the batch's last (a page of keys looked up row by row, as
  // search does, would read the index twice and sort the batch before sending any of it).
  const sql = `SELECT to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), e.id::text,
              ${line === "json" ? EXPORT_JSON : EXPORT_CSV}
         FROM (SELECT ${columns} FROM audit_events ${whereSql(where)} ORDER BY occurred_at, id LIMIT ${bindParam(bind, limit)}) AS e
         LEFT JOIN audit_chain c ON c.occurred_at = e.occurred_at AND c.event_id = e.id
        ORDER BY e.occurred_at, e.id`;
  return { sql, bind };
}
