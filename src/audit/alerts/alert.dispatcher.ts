import type { Logger } from "../../platform/common/logger";
import { Topic } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import type { SecretBox } from "../../platform/security/secret-box";
import { sendAlert, type AlertMessage, type ChannelTarget } from "./alert.channels";
import type { AlertLimiter } from "./alert.storms";
import type { AlertChannelRow, AlertDeliveryRow, AlertRepository, FiringRow } from "./alert.repository";

export type DispatcherOptions = { pollMs: number; retryScheduleMs: number[]; leaseMs: number; concurrency: number };

export function messageOf(firing: FiringRow, test = false): AlertMessage {
  return {
    id: firing.id,
    ruleName: firing.ruleName,
    groupKey: firing.groupKey,
    summary: firing.summary,
    firedAt: firing.firedAt,
    count: firing.count,
    events: firing.events,
    test,
  };
}

export function targetOf(channel: AlertChannelRow, secrets: SecretBox): ChannelTarget {
  return {
    id: channel.id,
    kind: channel.kind,
    name: channel.name,
    settings: channel.settings,
    secrets: JSON.parse(secrets.open(channel.secretsEncrypted)) as Record<string, string>,
  };
}

/**
 * Sends the deliveries that firings committed (alert_deliveries is the outbox): woken by each firing,
 * polling as the safety net. A failed attempt is kept on the row with its reason and retried on
 * ALERT_RETRY_SCHEDULE; past the last wait the row is `failed`, visible in the firing history. A
 * worker that dies mid-send loses its lease and the row is sent again (at least once).
 */
export class AlertDispatcher {
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private cycling: Promise<void> | null = null;
  private again = false;
  private wakeups: AsyncIterator<unknown> | null = null;

  constructor(
    private readonly alerts: AlertRepository,
    private readonly secrets: SecretBox,
    private readonly guard: OutboundGuard,
    private readonly events: EventBus,
    private readonly options: DispatcherOptions,
    private readonly logger: Logger,
    /** Writes the storm digests due (periods that ended with firings held back) before each look for deliveries. */
    private readonly limiter?: AlertLimiter,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wakeups = this.events.subscribe(Topic.AlertFired)[Symbol.asyncIterator]();
    void this.listen(this.wakeups);
    this.schedule(0);
  }

  private async listen(wakeups: AsyncIterator<unknown>): Promise<void> {
    try {
      while (this.running) {
        if ((await wakeups.next()).done) return;
        this.wake();
      }
    } catch (error) {
      this.logger.warn({ err: error }, "alert wake-ups stopped; polling continues");
    }
  }

  wake(): void {
    if (!this.running) return;
    if (this.cycling) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.cycling = this.cycle()
        .catch((error) => this.logger.warn({ err: error }, "alert dispatch cycle failed"))
        .finally(() => {
          this.cycling = null;
          const more = this.again;
          this.again = false;
          this.schedule(more ? 0 : this.options.pollMs);
        });
    }, ms);
  }

  private async cycle(): Promise<void> {
    if (this.limiter) {
      const digests = await this.limiter.flushDue();
      for (const notice of digests) this.events.publish(Topic.AlertFired, notice);
    }
    for (;;) {
      const due = await this.alerts.claimDueDeliveries(this.options.concurrency, this.options.leaseMs);
      if (due.length === 0 || !this.running) return;
      await Promise.all(due.map((delivery) => this.deliver(delivery)));
    }
  }

  private async deliver(delivery: AlertDeliveryRow): Promise<void> {
    const [firing, channel] = await Promise.all([
      delivery.firingId ? this.alerts.firing(delivery.firingId) : null,
      delivery.channelId ? this.alerts.getChannel(delivery.channelId) : null,
    ]);
    let error: string | null = null;
    if (!firing) error = "the firing was removed";
    else if (!channel) error = "the channel was removed";
    else if (!channel.enabled) error = "the channel is disabled";
    else {
      try {
        await sendAlert(targetOf(channel, this.secrets), messageOf(firing), this.guard);
      } catch (caught) {
        error = (caught as Error).message || String(caught);
      }
    }
    if (error === null) {
      await this.alerts.settleDelivery(delivery.id, { sent: true });
      return;
    }
    const schedule = this.options.retryScheduleMs;
    const wait = firing && channel?.enabled ? schedule[delivery.attempts] : undefined;
    const retryAt = wait === undefined ? null : new Date(Date.now() + wait);
    this.logger.warn({ delivery: delivery.id, channel: delivery.channelName, error, retryAt }, "alert delivery failed");
    await this.alerts.settleDelivery(delivery.id, { sent: false, error: error.slice(0, 500), retryAt });
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.wakeups?.return?.();
    await this.cycling;
  }
}
