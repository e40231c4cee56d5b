import type { AuditEvent } from "../../log";
import type { OutboundGuard } from "../../../platform/outbound/outbound.guard";
import { webhookBody, webhookHeaders } from "../../delivery";
import { canonicalEvent } from "../stream.formats";
import { postChunks, type Sender, type SenderTarget, type SendResult } from "./sender";

/** Messages per turn. */
const WEBHOOK_TURN = 100;

/** Standard Webhooks: one message per event, in order; webhook-id is the event id, so it is stable across retries. */
export class WebhookSender implements Sender {
  readonly turnSize = WEBHOOK_TURN;

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const secrets = [this.target.secrets.secret, ...(this.target.previousSecrets ? [this.target.previousSecrets.secret] : [])];
    return postChunks(
      this.guard,
      events.map((event) => ({
        events: [event],
        request: () => {
          const body = webhookBody(event.eventType, event.timestamp, canonicalEvent(event));
          return { method: "POST", url: this.target.url, body, headers: webhookHeaders(secrets, event.id, body) };
        },
      })),
      deadline,
    );
  }

  close(): void {}
}
