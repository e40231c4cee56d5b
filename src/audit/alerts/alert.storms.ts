import type { Sequelize, Transaction } from "sequelize";
import type { AlertLimits } from "../../platform/config/config";
import { newId } from "../../platform/common/ids";
import type { AuditService } from "../log";
import type { AlertRepository } from "./alert.repository";
import type { AlertRuleRow } from "./alert.rules";

/**
 * Storm limits (docs/alerts.md, "Storm limits"), decided per rule on each would-be firing: a cool-down
 * after each firing, and a cap on firings per cap period. What they hold back is counted, and one digest
 * ("47 more since …") goes out when the period ends. Time is the time the evaluator decides (the
 * limits are about what is sent, so they follow the clock, not the events' timestamps).
 */
export type StormState = {
  ruleId: string;
  periodStart: Date;
  fired: number;
  suppressed: number;
  suppressedSince: Date | null;
  reason: StormReason | null;
  lastFiredAt: Date | null;
  lastSeq: string | null;
};

export type StormReason = "cooldown" | "cap";

export type StormDecision = {
  state: StormState;
  fire: boolean;
  /** Set when this firing was held back and it is the first held back in the period: the limit bites. */
  bites: StormReason | null;
  /** The previous period, ended with firings held back: its digest is due. */
  endedWithHeld: StormState | null;
};

export function ruleLimits(rule: Pick<AlertRuleRow, "cooldownSeconds" | "firingCap">, limits: AlertLimits) {
  return {
    cooldownSeconds: rule.cooldownSeconds ?? limits.cooldownSeconds,
    firingCap: rule.firingCap ?? limits.firingCap,
    capWindowSeconds: limits.capWindowSeconds,
  };
}

export function stormStep(
  state: StormState | null,
  ruleId: string,
  seq: string,
  now: Date,
  limits: { cooldownSeconds: number; firingCap: number; capWindowSeconds: number },
): StormDecision {
  let endedWithHeld: StormState | null = null;
  let current: StormState;
  if (!state || now.getTime() >= state.periodStart.getTime() + limits.capWindowSeconds * 1000) {
    if (state && state.suppressed > 0) endedWithHeld = state;
    current = {
      ruleId,
      periodStart: now,
      fired: 0,
      suppressed: 0,
      suppressedSince: null,
      reason: null,
      lastFiredAt: state?.lastFiredAt ?? null,
      lastSeq: null,
    };
  } else current = { ...state };
  const cooling = current.lastFiredAt !== null && now.getTime() < current.lastFiredAt.getTime() + limits.cooldownSeconds * 1000;
  const reason: StormReason | null = cooling ? "cooldown" : current.fired >= limits.firingCap ? "cap" : null;
  if (reason === null) {
    current.fired += 1;
    current.lastFiredAt = now;
    return { state: current, fire: true, bites: null, endedWithHeld };
  }
  const first = current.suppressed === 0;
  current.suppressed += 1;
  current.suppressedSince ??= now;
  current.reason ??= reason;
  current.lastSeq = seq;
  return { state: current, fire: false, bites: first ? reason : null, endedWithHeld };
}

/** The digest's summary: how many were held back, since when, by which limit. */
export function digestSummary(held: StormState, limits: { cooldownSeconds: number; firingCap: number; capWindowSeconds: number }): string {
  const limit =
    held.reason === "cooldown"
      ? `the rule's cool-down of ${limits.cooldownSeconds} s`
      : `the cap of ${limits.firingCap} firing(s) per ${limits.capWindowSeconds} s`;
  return `${held.suppressed} more since ${held.suppressedSince!.toISOString()} (held back by ${limit})`;
}

/**
 * Applies the limits where firings become deliveries: the evaluator asks `decide` before it writes a
 * firing, and `deliveries` writes a firing's deliveries under each channel's send budget; `flushDue`
 * (the dispatcher, on each poll) writes the digests of periods that ended. Each limit that begins to
 * bite is recorded once per period (alert.rule.limited, alert.channel.limited) in the same transaction.
 */
export class AlertLimiter {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly alerts: AlertRepository,
    private readonly audit: AuditService,
    readonly limits: AlertLimits,
  ) {}

  /** Deliveries for one firing, to the enabled channels among `channelIds`; a digest is never held back. */
  async deliveries(firingId: string, channelIds: string[], digest: boolean, transaction: Transaction): Promise<number> {
    const channels = (await this.alerts.channelsByIds(channelIds, transaction)).filter((channel) => channel.enabled);
    const sends = await this.alerts.channelSends(
      channels.map((channel) => channel.id),
      this.limits.budgetWindowSeconds,
      transaction,
    );
    const rows = [];
    for (const channel of channels) {
      const budget = this.limits.channelBudgets[channel.kind];
      const counted = sends.get(channel.id) ?? { sent: 0, held: 0 };
      let suppressed: string | null = null;
      if (!digest && counted.sent >= budget) {
        suppressed = `held back: the ${channel.kind} send budget of ${budget} per ${this.limits.budgetWindowSeconds} s is spent`;
        if (counted.held === 0)
          await this.audit.record(transaction, {
            type: "alert.channel.limited",
            action: "limit",
            resource: { type: "alert_channel", id: channel.id, label: channel.name },
            changes: {
              budget: { old: null, new: { kind: channel.kind, deliveries: budget, windowSeconds: this.limits.budgetWindowSeconds } },
            },
          });
        counted.held += 1;
      } else if (!digest) counted.sent += 1;
      sends.set(channel.id, counted);
      rows.push({
        id: newId(),
        firingId,
        channelId: channel.id,
        channelName: channel.name,
        channelKind: channel.kind,
        test: false,
        suppressed,
      });
    }
    await this.alerts.insertDeliveries(rows, transaction);
    return rows.filter((row) => row.suppressed === null).length;
  }

  /** The rule's limit began to bite: recorded once per cap period. */
  async recordBite(
    rule: Pick<AlertRuleRow, "id" | "name" | "cooldownSeconds" | "firingCap">,
    reason: StormReason,
    transaction: Transaction,
  ) {
    const limits = ruleLimits(rule, this.limits);
    await this.audit.record(transaction, {
      type: "alert.rule.limited",
      action: "limit",
      resource: { type: "alert_rule", id: rule.id, label: rule.name },
      changes: {
        limit: {
          old: null,
          new:
            reason === "cooldown"
              ? { reason, cooldownSeconds: limits.cooldownSeconds }
              : { reason, firingCap: limits.firingCap, capWindowSeconds: limits.capWindowSeconds },
        },
      },
    });
  }

  /** One digest firing for a period that ended with firings held back, and its deliveries. */
  async digest(held: StormState, rule: AlertRuleRow | null, transaction: Transaction): Promise<string | null> {
    if (!rule || held.suppressed === 0 || !held.suppressedSince) return null;
    const firing = {
      id: newId(),
      ruleId: rule.id,
      ruleName: rule.name,
      groupKey: "(digest)",
      windowStart: held.periodStart,
      seq: held.lastSeq ?? "0",
      count: held.suppressed,
      summary: digestSummary(held, ruleLimits(rule, this.limits)),
      events: [],
      digest: true,
    };
    if (!(await this.alerts.insertFiring(firing, transaction))) return null;
    await this.deliveries(firing.id, rule.channelIds, true, transaction);
    return firing.id;
  }

  /** Digests of every period that ended with firings held back (the dispatcher calls this on each poll). */
  async flushDue(): Promise<Array<{ firingId: string; ruleName: string; summary: string }>> {
    return this.sequelize.transaction(async (transaction) => {
      const due = await this.alerts.dueDigests(this.limits.capWindowSeconds, transaction);
      const written = [];
      for (const held of due) {
        const rule = await this.alerts.getRule(held.ruleId, transaction);
        const firingId = await this.digest(held, rule, transaction);
        if (firingId && rule) written.push({ firingId, ruleName: rule.name, summary: digestSummary(held, ruleLimits(rule, this.limits)) });
      }
      await this.alerts.saveStorms(
        due.map((held) => ({ ...held, suppressed: 0, suppressedSince: null, reason: null, lastSeq: null })),
        transaction,
      );
      return written;
    });
  }
}
