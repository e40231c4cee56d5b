import { isIP } from "node:net";
import type { AuditEvent } from "../log";
import type { Severity } from "../log";
import { PRODUCT, PRODUCT_VERSION } from "../delivery";

/**
 * One canonical audit event, one formatter per destination (docs/audit-streaming.md). Pure
 * functions: the senders (senders/) batch what these produce within each platform's limits.
 */
export const VENDOR = "finance-gateway";

/** The event as destinations see it: the audit record with its chain link, timestamps as ISO 8601. */
export function canonicalEvent(event: AuditEvent): Record<string, unknown> {
  return { ...event, timestamp: event.timestamp.toISOString() };
}

// ---------------------------------------------------------------------------------------------------
// Splunk HTTP Event Collector

export function splunkEvent(event: AuditEvent, settings: { host?: string; source?: string; sourcetype?: string; index?: string }): string {
  return JSON.stringify({
    time: event.timestamp.getTime() / 1000,
    host: settings.host ?? VENDOR,
    source: settings.source ?? VENDOR,
    sourcetype: settings.sourcetype ?? `${VENDOR}:audit`,
    ...(settings.index ? { index: settings.index } : {}),
    event: canonicalEvent(event),
  });
}

// ---------------------------------------------------------------------------------------------------
// Elastic Common Schema

const ECS_SEVERITY: Record<Severity, number> = { info: 1, warning: 2, error: 3, critical: 4 };

function ecsCategory(type: string): { category: string[]; type: string[] } {
  if (type === "auth.login.success" || type === "auth.login.failed") return { category: ["authentication", "session"], type: ["start"] };
  if (type === "auth.logout" || type === "auth.session.expired") return { category: ["authentication", "session"], type: ["end"] };
  // An API key is a credential an identity holds: its issue and revocation are identity management.
  if (type === "auth.api_key.created") return { category: ["iam"], type: ["creation"] };
  if (type === "auth.api_key.revoked" || type === "auth.api_key.expired") return { category: ["iam"], type: ["deletion"] };
  if (type.startsWith("auth.")) return { category: ["authentication"], type: ["info"] };
  if (type.startsWith("user.") || type.startsWith("account.")) {
    const action =
      type.endsWith(".created") || type.endsWith(".connected") || type.endsWith(".linked")
        ? "creation"
        : type.endsWith(".deleted")
          ? "deletion"
          : "change";
    return { category: ["iam"], type: ["user", action] };
  }
  const action = type.endsWith(".created")
    ? "creation"
    : type.endsWith(".deleted")
      ? "deletion"
      : type.endsWith(".test") || type.endsWith(".tested")
        ? "info"
        : "change";
  return { category: ["configuration"], type: [action] };
}

export function ecsOutcome(event: AuditEvent): "success" | "failure" | "unknown" {
  if (event.eventType.endsWith(".failed") || event.eventType.endsWith(".failing") || event.error) return "failure";
  return "success";
}

/** An ECS document; fields outside ECS live under `finance_gateway`. */
export function ecsDocument(event: AuditEvent): Record<string, unknown> {
  const { category, type } = ecsCategory(event.eventType);
  return {
    "@timestamp": event.timestamp.toISOString(),
    ecs: { version: "8.11.0" },
    message: `${event.eventType}${event.user?.email ? ` by ${event.user.email}` : ""}`,
    event: {
      id: event.id,
      kind: "event",
      action: event.eventType,
      category,
      type,
      outcome: ecsOutcome(event),
      severity: ECS_SEVERITY[event.severity],
      ...(event.seq ? { sequence: Number(event.seq) } : {}),
    },
    ...(event.ipAddress && isIP(event.ipAddress) ? { source: { ip: event.ipAddress } } : {}),
    ...(event.user
      ? { user: { ...(event.user.id ? { id: event.user.id } : {}), ...(event.user.email ? { email: event.user.email } : {}) } }
      : {}),
    ...(event.userAgent ? { user_agent: { original: event.userAgent } } : {}),
    ...(event.requestId ? { http: { request: { id: event.requestId } } } : {}),
    ...(event.error ? { error: { message: event.error } } : {}),
    log: { level: event.severity },
    finance_gateway: {
      severity: event.severity,
      provider: event.provider,
      action: event.action,
      resource: event.resource,
      session_id: event.sessionId,
      changes: event.changes,
      chain: { seq: event.seq, hash: event.hash, prev_hash: event.prevHash },
    },
  };
}

/** `_bulk` NDJSON: a `create` per event with the event id as `_id`, so a redelivery is a harmless 409. */
export function elasticBulkLines(event: AuditEvent, index: string): string {
  return `${JSON.stringify({ create: { _index: index, _id: event.id } })}\n${JSON.stringify(ecsDocument(event))}\n`;
}

// ---------------------------------------------------------------------------------------------------
// Datadog logs intake

export function datadogEntry(event: AuditEvent, settings: { service?: string; tags?: string; hostname?: string }): Record<string, unknown> {
  const tags = [`event_type:${event.eventType}`, `severity:${event.severity}`, settings.tags].filter(Boolean).join(",");
  return {
    // Datadog dates an entry by its reserved `timestamp` attribute, else by arrival: a replayed or delayed
    // event keeps the time it happened.
    timestamp: event.timestamp.toISOString(),
    ddsource: VENDOR,
    service: settings.service ?? VENDOR,
    hostname: settings.hostname ?? VENDOR,
    ddtags: tags,
    status: event.severity === "critical" ? "critical" : event.severity,
    message: `${event.eventType}${event.user?.email ? ` by ${event.user.email}` : ""}`,
    audit: canonicalEvent(event),
  };
}

// ---------------------------------------------------------------------------------------------------
// Microsoft Sentinel (Logs Ingestion API): one JSON object per row of the custom table's stream.

export function sentinelRow(event: AuditEvent): Record<string, unknown> {
  return {
    TimeGenerated: event.timestamp.toISOString(),
    EventId: event.id,
    EventType: event.eventType,
    Severity: event.severity,
    UserId: event.user?.id ?? null,
    UserEmail: event.user?.email ?? null,
    Provider: event.provider,
    Action: event.action,
    Resource: event.resource,
    SourceIp: event.ipAddress,
    UserAgent: event.userAgent,
    SessionId: event.sessionId,
    RequestId: event.requestId,
    Changes: event.changes,
    Error: event.error,
    Sequence: event.seq,
    Hash: event.hash,
  };
}

// ---------------------------------------------------------------------------------------------------
// Syslog lines: LEEF 2.0 (QRadar) and CEF (ArcSight)

const CEF_SEVERITY: Record<Severity, number> = { info: 3, warning: 6, error: 8, critical: 10 };
const LEEF_SEVERITY: Record<Severity, number> = { info: 2, warning: 5, error: 8, critical: 10 };
const SYSLOG_SEVERITY: Record<Severity, number> = { info: 6, warning: 4, error: 3, critical: 2 };
/** Facility 13 (log audit). */
const SYSLOG_FACILITY = 13;

/** RFC 5424 header (no structured data) before a LEEF or CEF message; one line per event. */
export function syslogLine(event: AuditEvent, message: string, hostname: string): string {
  const pri = SYSLOG_FACILITY * 8 + SYSLOG_SEVERITY[event.severity];
  return `<${pri}>1 ${event.timestamp.toISOString()} ${hostname} ${VENDOR} - ${event.eventType} - ${message}\n`;
}

/** CEF header fields: backslash and pipe are escaped; line breaks cannot appear. */
function cefHeader(value: string): string {
  return value
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/[\r\n]+/g, " ");
}

/** CEF extension values: backslash, equals sign and line breaks are escaped. */
export function cefValue(value: string): string {
  return value
    .replace(/\\/g, "\\\\")
    .replace(/=/g, "\\=")
    .replace(/\r\n|\n/g, "\\n")
    .replace(/\r/g, "\\r");
}

function extensionPairs(
  pairs: Array<[string, string | number | null | undefined]>,
  escape: (value: string) => string,
  separator: string,
): string {
  return pairs
    .filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([key, value]) => `${key}=${escape(String(value))}`)
    .join(separator);
}

export function cefMessage(event: AuditEvent): string {
  const header = ["CEF:0", VENDOR, PRODUCT, PRODUCT_VERSION, event.eventType, event.eventType, String(CEF_SEVERITY[event.severity])].map(
    cefHeader,
  );
  const extension = extensionPairs(
    [
      ["rt", event.timestamp.getTime()],
      ["src", event.ipAddress && isIP(event.ipAddress) ? event.ipAddress : null],
      ["suser", event.user?.email],
      ["suid", event.user?.id],
      ["act", event.action ?? event.eventType],
      ["outcome", ecsOutcome(event)],
      ["requestClientApplication", event.userAgent],
      ["externalId", event.id],
      ["cs1Label", event.provider ? "provider" : null],
      ["cs1", event.provider],
      ["cs2Label", event.requestId ? "requestId" : null],
      ["cs2", event.requestId],
      ["cs3Label", event.changes ? "changes" : null],
      ["cs3", event.changes ? JSON.stringify(event.changes) : null],
      ["cs4Label", event.resource ? "resource" : null],
      ["cs4", event.resource ? `${event.resource.type}:${event.resource.id}` : null],
      ["cn1Label", event.seq ? "chainSequence" : null],
      ["cn1", event.seq],
      ["msg", event.error],
    ],
    cefValue,
    " ",
  );
  return `${header.join("|")}|${extension}`;
}

/** LEEF header fields: backslash and pipe escaped. */
function leefHeader(value: string): string {
  return value
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/[\r\n]+/g, " ");
}

export const LEEF_DELIMITER = "^";

/**
 * LEEF attribute values: backslash, the delimiter, the pipe and line breaks escaped (a value may
 * contain `=`). The pipe too: readers that find the header by counting pipes would otherwise cut a value.
 */
export function leefValue(value: string): string {
  return value
    .replace(/\\/g, "\\\\")
    .replace(/\^/g, "\\^")
    .replace(/\|/g, "\\|")
    .replace(/\r\n|\n/g, "\\n")
    .replace(/\r/g, "\\r");
}

export function leefMessage(event: AuditEvent): string {
  const header = ["LEEF:2.0", VENDOR, PRODUCT, PRODUCT_VERSION, event.eventType].map(leefHeader);
  const category = ecsCategory(event.eventType).category[0];
  const attributes = extensionPairs(
    [
      ["devTime", event.timestamp.toISOString()],
      ["devTimeFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSX"],
      ["src", event.ipAddress && isIP(event.ipAddress) ? event.ipAddress : null],
      ["usrName", event.user?.email],
      ["sev", LEEF_SEVERITY[event.severity]],
      ["cat", category],
      ["identSrc", event.ipAddress && isIP(event.ipAddress) ? event.ipAddress : null],
      ["userId", event.user?.id],
      ["action", event.action],
      ["outcome", ecsOutcome(event)],
      ["userAgent", event.userAgent],
      ["eventId", event.id],
      ["provider", event.provider],
      ["requestId", event.requestId],
      ["sessionId", event.sessionId],
      ["resource", event.resource ? `${event.resource.type}:${event.resource.id}` : null],
      ["changes", event.changes ? JSON.stringify(event.changes) : null],
      ["error", event.error],
      ["chainSequence", event.seq],
    ],
    leefValue,
    LEEF_DELIMITER,
  );
  return `${header.join("|")}|${LEEF_DELIMITER}|${attributes}`;
}
