import type { AuditEventJson } from "../../platform/events/catalogue";
import type { AuditEventType, Severity } from "./audit.catalogue";

/**
 * A recorded event: its fields are the event bus's AuditEventJson (src/platform/events/catalogue.ts),
 * typed. In a file of its own so the pure filter and the service both name it without importing each other.
 */
export type AuditEvent = Omit<AuditEventJson, "timestamp" | "eventType" | "severity"> & {
  timestamp: Date;
  eventType: AuditEventType;
  severity: Severity;
};
