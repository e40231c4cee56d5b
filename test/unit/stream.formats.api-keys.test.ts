import type { AuditEvent } from "../../src/audit/log/audit.service";
import { webhookBody } from "../../src/audit/delivery/webhook-signing";
import { cefMessage, ecsDocument, leefMessage, sentinelRow } from "../../src/audit/streaming/stream.formats";

/** Issue 27: API key issue, revocation and expiry reach every streaming format as identity-management events. */
function event(eventType: AuditEvent["eventType"], severity: AuditEvent["severity"]): AuditEvent {
  return {
    id: "0b0e4b5e-3c1a-4d7e-9a55-1f0f0c9b7a01",
    seq: "42",
    timestamp: new Date("2026-11-01T10:00:00.000Z"),
    eventType,
    severity,
    user: { id: "5d3c1d2e-7b4a-4f0e-8c1a-2b3c4d5e6f70", email: "admin@example.test" },
    provider: null,
    action: eventType.endsWith("created") ? "create" : eventType.endsWith("expired") ? "expire" : "revoke",
    resource: { type: "api_key", id: "9f8e7d6c-5b4a-4321-8fed-cba987654321", label: "CI" },
    ipAddress: "203.0.113.9",
  } as AuditEvent;
}

test.each([
  ["auth.api_key.created", "info", "creation"],
  ["auth.api_key.revoked", "warning", "deletion"],
  ["auth.api_key.expired", "info", "deletion"],
] as const)("%s is an iam %s event in ECS, and named in CEF, LEEF, Sentinel and webhooks", (type, severity, ecsType) => {
  const audited = event(type, severity);
  expect(ecsDocument(audited).event).toMatchObject({ action: type, category: ["iam"], type: [ecsType], outcome: "success" });
  expect(cefMessage(audited)).toContain(`|${type}|${type}|`);
  expect(leefMessage(audited)).toContain(`|${type}|`);
  expect(leefMessage(audited)).toContain("^cat=iam^");
  expect(sentinelRow(audited)).toMatchObject({ EventType: type });
  expect(JSON.parse(webhookBody(type, audited.timestamp, { id: audited.id }))).toMatchObject({ type });
});
