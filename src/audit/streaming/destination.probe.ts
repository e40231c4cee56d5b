import { randomUUID } from "node:crypto";
import type { Actor } from "../../platform/security/actor";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import { webhookBody, webhookHeaders } from "../delivery";
import { createSender } from "./senders/create-sender";
import type { SenderTarget } from "./senders/sender";
import type { DestinationRow } from "./stream.repository";

export type TestResult = { ok: boolean; status: number | null; latencyMs: number; error: string | null };

/**
 * Sends one test event now, outside the stream, the way real events go: a webhook gets a signed
 * `webhook.test` message; a SIEM gets a `stream.destination.tested` event in its format.
 */
export async function sendTestEvent(guard: OutboundGuard, row: DestinationRow, target: SenderTarget, actor: Actor): Promise<TestResult> {
  const now = new Date();
  const testEvent = {
    id: `test_${randomUUID()}`,
    seq: null,
    timestamp: now,
    eventType: "stream.destination.tested" as const,
    severity: "info" as const,
    user: { id: actor.userId, email: actor.email },
    provider: null,
    action: "test",
    resource: { type: "stream_destination", id: row.id, label: row.name },
    ipAddress: null,
    userAgent: null,
    sessionId: null,
    requestId: null,
    changes: null,
    error: null,
    prevHash: null,
    hash: null,
  };
  let result: TestResult;
  if (row.kind === "webhook") {
    const secrets = [target.secrets.secret, ...(target.previousSecrets ? [target.previousSecrets.secret] : [])];
    const body = webhookBody("webhook.test", now, {
      message: "test event from finance-gateway",
      destinationId: row.id,
      sentBy: actor.email,
    });
    const started = performance.now();
    try {
      const answer = await guard.request({
        method: "POST",
        url: target.url,
        body,
        headers: webhookHeaders(secrets, testEvent.id, body),
      });
      const ok = answer.status >= 200 && answer.status < 300;
      result = {
        ok,
        status: answer.status,
        latencyMs: Math.round(performance.now() - started),
        error: ok ? null : `the receiver answered ${answer.status}`,
      };
    } catch (error) {
      result = { ok: false, status: null, latencyMs: Math.round(performance.now() - started), error: (error as Error).message };
    }
  } else {
    const sender = createSender(target, guard);
    try {
      const sent = await sender.send([testEvent], Date.now() + 60_000);
      const attempt = sent.attempts[sent.attempts.length - 1];
      result = {
        ok: sent.failure === null,
        status: attempt?.status ?? null,
        latencyMs: attempt?.latencyMs ?? 0,
        error: sent.failure?.error ?? null,
      };
    } finally {
      sender.close();
    }
  }
  return result;
}
