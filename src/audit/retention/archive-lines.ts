import type { AuditEvent } from "../log";
import type { AuditEventFields } from "../log";

/** One archived event: the stored columns and its chain link (see ARCHIVE_LINE in the repository). */
export type ArchiveLine = AuditEventFields & {
  id: string;
  seq: string;
  occurredAt: string;
  prevHash: string | null;
  hash: string;
};

/** An archived event as live search shows an event (the same shape, so the same filter applies). */
export function eventOfLine(line: ArchiveLine): AuditEvent {
  return {
    id: line.id,
    seq: line.seq,
    timestamp: new Date(line.occurredAt),
    eventType: line.eventType,
    severity: line.severity,
    user: line.userId || line.userEmail ? { id: line.userId, email: line.userEmail ?? "" } : null,
    provider: line.provider,
    action: line.action,
    resource: line.resourceType ? { type: line.resourceType, id: line.resourceId ?? "", label: line.resourceLabel } : null,
    ipAddress: line.ipAddress,
    userAgent: line.userAgent,
    sessionId: line.sessionId,
    requestId: line.requestId,
    changes: line.changes,
    error: line.error,
    prevHash: line.prevHash,
    hash: line.hash,
  };
}
