/** What other features use of log: the one entry into it (docs/architecture.md, feature entry files). */
// The GraphQL classes below carry decorators that need the metadata API: a caller outside the schema
// (a worker, a test importing a service) loads them through this file.
import "reflect-metadata";
export { checkLink } from "./audit-chain-verify";
export type { ChainBreak, ChainReport } from "./audit-chain-verify";
export { REDACTED, SECRET_QUERY_PARAMETER, diffChanges } from "./audit-changes";
export type { Changes } from "./audit-changes";
export { recordWrite } from "./audit-write";
export { EXPORT_BATCH_FIELDS } from "./audit-export.sql";
export type { ExportKey } from "./audit-export.sql";
export { clampLimit, matchesFilter, parseFilter } from "./audit-filter";
export type { AuditFilterInput } from "./audit-filter";
export { auditConditions } from "./audit-query.sql";
export type { AuditQuery } from "./audit-query.sql";
export { SEVERITIES, expandEventTypePattern, expandEventTypePatterns, isSeverity } from "./audit.catalogue";
/** `AuditEventName` is the union of event type names; `AuditEventType` is the GraphQL type of an event. */
export type { AuditEventType as AuditEventName, Severity } from "./audit.catalogue";
export type { AuditEventFields, AuditRepository, VerifyRow } from "./audit.repository";
export type { AuditEvent, AuditService, AuditUser } from "./audit.service";
export { AuditEventFilterInput, AuditEventType } from "./audit.type";
