import type { Transaction } from "sequelize";
import { expandEventTypePatterns, type AuditEventName as AuditEventType } from "../log";
import type { AuditEvent, AuditService } from "../log";
import { newId } from "../../platform/common/ids";
import { digestSummary, ruleLimits, stormStep, type AlertLimiter } from "./alert.storms";
import { Topic } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import type { ChainConsumerHandler, TurnOutcome } from "../delivery";
import type { ConsumerRow, ConsumerSettlement } from "../delivery";
import type { GeoCountryLookup } from "./geo-country";
import { windowId, type AlertRepository, type NewFiring, type WindowKey } from "./alert.repository";
import { countStep, groupKeyOf, ruleMatches, summaryOf, userKeyOf, type AlertRuleRow, type WindowState } from "./alert.rules";

export const ALERTS_PREFIX = "alerts:";
/** The one evaluator consumer (created by migration 0010 at the chain head). */
export const EVALUATOR_CONSUMER = `${ALERTS_PREFIX}evaluator`;

/** Links a turn looks through, and matching events it evaluates at most. */
const SCAN_LINKS = 20_000;
const TURN_EVENTS = 1000;
/** The country history is kept from every successful login, whether a new-country rule exists yet or not. */
const LOGIN: AuditEventType = "auth.login.success";

type EvaluatorOutcome = TurnOutcome & {
  windows: Array<WindowKey & WindowState>;
  countries: Array<{ userKey: string; country: string; at: Date }>;
  firings: Array<NewFiring & { channelIds: string[]; rule: AlertRuleRow }>;
};

function describeWindow(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/**
 * Alert rules evaluated incrementally on the committed audit stream. A turn reads the events after
 * the evaluator's position that any enabled rule (or the country history) looks at, loads only the
 * windows and country lists those events touch, decides in memory (alert.rules.ts), and hands the
 * changes to `record`, which the pump runs in the transaction that moves the position. A turn that
 * dies before that commit leaves position, counts and firings as they were: the next turn decides
 * the same events again, from the same state, to the same result.
 */
export class AlertEvaluator implements ChainConsumerHandler<EvaluatorOutcome> {
  readonly prefix = ALERTS_PREFIX;

  constructor(
    private readonly alerts: AlertRepository,
    private readonly audit: AuditService,
    private readonly geo: GeoCountryLookup,
    private readonly events: EventBus,
    private readonly limiter: AlertLimiter,
  ) {}

  async turn(consumer: ConsumerRow): Promise<EvaluatorOutcome> {
    const rules = await this.alerts.enabledRules();
    const typesOf = new Map(rules.map((rule) => [rule.id, new Set<string>(expandEventTypePatterns(rule.eventTypes))]));
    const eventTypes = [...new Set<AuditEventType>([LOGIN, ...rules.flatMap((rule) => [...typesOf.get(rule.id)!] as AuditEventType[])])];
    const read = await this.audit.readChain(consumer.position, { scanLinks: SCAN_LINKS, limit: TURN_EVENTS, eventTypes });
    const outcome: EvaluatorOutcome = { position: read.through, windows: [], countries: [], firings: [] };
    if (read.events.length === 0) return outcome;

    const counting = rules.filter((rule) => rule.condition === "count");
    const keys: WindowKey[] = [];
    for (const event of read.events)
      for (const rule of counting)
        if (ruleMatches(rule, typesOf.get(rule.id)!, event)) keys.push({ ruleId: rule.id, groupKey: groupKeyOf(event, rule.groupBy) });
    const logins = read.events.filter((event) => event.eventType === LOGIN);
    const [windows, countries] = await Promise.all([
      this.alerts.windows(keys),
      this.alerts.countries([...new Set(logins.map(userKeyOf).filter((key): key is string => key !== null))]),
    ]);

    const changed = new Map<string, WindowKey & WindowState>();
    for (const event of read.events) {
      const country = event.eventType === LOGIN ? this.geo.country(event.ipAddress) : null;
      const userKey = userKeyOf(event);
      for (const rule of rules) {
        if (!ruleMatches(rule, typesOf.get(rule.id)!, event)) continue;
        if (rule.condition === "count") {
          const key = { ruleId: rule.id, groupKey: groupKeyOf(event, rule.groupBy) };
          const id = windowId(key);
          const step = countStep(windows.get(id) ?? null, event, rule);
          windows.set(id, step.state);
          changed.set(id, { ...key, ...step.state });
          if (step.fires) outcome.firings.push(this.countFiring(rule, key.groupKey, step.state, event));
        } else if (country && userKey) {
          const known = countries.get(userKey);
          // The first country seen is the user's baseline, not news.
          if (known && known.size > 0 && !known.has(country)) outcome.firings.push(this.countryFiring(rule, event, country, known));
        }
      }
      if (country && userKey && !countries.get(userKey)?.has(country)) {
        if (!countries.has(userKey)) countries.set(userKey, new Set());
        countries.get(userKey)!.add(country);
        outcome.countries.push({ userKey, country, at: event.timestamp });
      }
    }
    outcome.windows = [...changed.values()];
    return outcome;
  }

  async record(
    _consumer: ConsumerRow,
    outcome: EvaluatorOutcome,
    _settlement: ConsumerSettlement,
    transaction: Transaction,
  ): Promise<void> {
    // A turn that threw (a deadlock with a retention run detaching a month, say) decided nothing: the
    // pump settles it as a failure with a bare outcome, to be retried from the same position.
    if (outcome.failure) return;
    await this.alerts.saveWindows(outcome.windows, transaction);
    await this.alerts.addCountries(outcome.countries, transaction);
    const fired: Array<{ firingId: string; ruleName: string; summary: string }> = [];
    // Storm limits (alert.storms.ts): each would-be firing passes its rule's cool-down and cap first.
    const rules = new Map(outcome.firings.map((firing) => [firing.rule.id, firing.rule]));
    const storms = await this.alerts.storms([...rules.keys()], transaction);
    const changedStorms = new Set<string>();
    const now = new Date();
    for (const { channelIds, rule, ...firing } of outcome.firings) {
      const decision = stormStep(storms.get(rule.id) ?? null, rule.id, firing.seq, now, ruleLimits(rule, this.limiter.limits));
      storms.set(rule.id, decision.state);
      changedStorms.add(rule.id);
      if (decision.endedWithHeld) {
        const digestId = await this.limiter.digest(decision.endedWithHeld, rule, transaction);
        if (digestId)
          fired.push({
            firingId: digestId,
            ruleName: rule.name,
            summary: digestSummary(decision.endedWithHeld, ruleLimits(rule, this.limiter.limits)),
          });
      }
      if (decision.bites) await this.limiter.recordBite(rule, decision.bites, transaction);
      if (!decision.fire) continue;
      if (!(await this.alerts.insertFiring(firing, transaction))) continue;
      await this.limiter.deliveries(firing.id, channelIds, false, transaction);
      fired.push({ firingId: firing.id, ruleName: firing.ruleName, summary: firing.summary });
    }
    await this.alerts.saveStorms(
      [...changedStorms].map((id) => storms.get(id)!),
      transaction,
    );
    // The console's toast and the dispatcher hear of a firing once it is committed.
    if (fired.length > 0)
      transaction.afterCommit(() => {
        for (const notice of fired) this.events.publish(Topic.AlertFired, notice);
      });
  }

  private countFiring(
    rule: AlertRuleRow,
    groupKey: string,
    state: WindowState,
    event: AuditEvent,
  ): NewFiring & { channelIds: string[]; rule: AlertRuleRow } {
    const types = rule.eventTypes.join(", ");
    const group = rule.groupBy ? ` from ${rule.groupBy === "ip" ? "IP" : rule.groupBy} ${groupKey}` : "";
    const summary =
      rule.threshold === 1
        ? `${event.eventType}${event.user ? ` by ${event.user.email}` : ""}${event.resource?.label ? ` (${event.resource.label})` : ""}`
        : `${state.count} ${types} event(s)${group} within ${describeWindow(rule.windowSeconds)}`;
    return {
      id: newId(),
      ruleId: rule.id,
      ruleName: rule.name,
      groupKey,
      windowStart: state.windowStart,
      seq: event.seq!,
      count: state.count,
      summary,
      events: state.sample,
      channelIds: rule.channelIds,
      rule,
    };
  }

  private countryFiring(
    rule: AlertRuleRow,
    event: AuditEvent,
    country: string,
    known: Set<string>,
  ): NewFiring & { channelIds: string[]; rule: AlertRuleRow } {
    const user = event.user?.email ?? event.user?.id ?? "(unknown)";
    return {
      id: newId(),
      ruleId: rule.id,
      ruleName: rule.name,
      groupKey: user,
      windowStart: event.timestamp,
      seq: event.seq!,
      count: 1,
      summary: `${user} logged in from ${country} (${event.ipAddress}), a country not seen before for this user (known: ${[...known].sort().join(", ")})`,
      events: [summaryOf(event, country)],
      channelIds: rule.channelIds,
      rule,
    };
  }
}
