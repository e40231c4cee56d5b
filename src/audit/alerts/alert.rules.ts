import { SEVERITIES, type Severity } from "../log";
import type { AuditEvent } from "../log";

/**
 * What an alert rule is and how one event moves its window (pure: the evaluator loads and stores the
 * state, this decides). A window starts with the first matching event of a group and lasts
 * `windowSeconds` by the events' own timestamps, so a replay after a crash decides exactly as the
 * first run did; it fires once, when its count reaches the threshold. The next matching event after
 * the window's end opens a new window, which may fire again.
 */
export type AlertCondition = "count" | "new_country";
export type AlertGroupBy = "ip" | "user" | "provider";

export type AlertRuleRow = {
  id: string;
  name: string;
  preset: string | null;
  condition: AlertCondition;
  eventTypes: string[];
  minSeverity: Severity;
  threshold: number;
  windowSeconds: number;
  groupBy: AlertGroupBy | null;
  channelIds: string[];
  enabled: boolean;
  /** Storm limits of its own (null: ALERT_COOLDOWN_SECONDS / ALERT_FIRING_CAP). */
  cooldownSeconds: number | null;
  firingCap: number | null;
  createdAt: Date;
  updatedAt: Date;
};

/** A triggering event as a firing keeps it. */
export type EventSummary = {
  id: string;
  seq: string | null;
  timestamp: string;
  eventType: string;
  ipAddress: string | null;
  user: string | null;
  provider: string | null;
  country?: string | null;
};

export type WindowState = { windowStart: Date; count: number; fired: boolean; sample: EventSummary[] };

/** Events a firing (and a window) keeps; the count says how many there were in all. */
export const SAMPLE_SIZE = 20;

export type AlertPreset = {
  key: string;
  name: string;
  description: string;
  rule: Pick<AlertRuleRow, "condition" | "eventTypes" | "minSeverity" | "threshold" | "windowSeconds" | "groupBy">;
};

/** The interface spec's three example rules, enabled in one step. */
export const ALERT_PRESETS: AlertPreset[] = [
  {
    key: "brute_force",
    name: "Failed logins from one IP",
    description: "Five or more failed logins from one IP address within 10 minutes.",
    rule: { condition: "count", eventTypes: ["auth.login.failed"], minSeverity: "info", threshold: 5, windowSeconds: 600, groupBy: "ip" },
  },
  {
    key: "provider_change",
    name: "SSO provider changed or removed",
    description: "Any provider.updated or provider.deleted event (at most one alert per provider per second).",
    rule: {
      condition: "count",
      eventTypes: ["provider.updated", "provider.deleted"],
      minSeverity: "info",
      threshold: 1,
      windowSeconds: 1,
      groupBy: "provider",
    },
  },
  {
    key: "new_country",
    name: "Login from a new country",
    description: "A successful login from a country or region not seen before for that user.",
    rule: {
      condition: "new_country",
      eventTypes: ["auth.login.success"],
      minSeverity: "info",
      threshold: 1,
      windowSeconds: 1,
      groupBy: "user",
    },
  },
];

export function presetOf(key: string): AlertPreset | undefined {
  return ALERT_PRESETS.find((preset) => preset.key === key);
}

export function atLeast(severity: Severity, minimum: Severity): boolean {
  return SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(minimum);
}

export function userKeyOf(event: AuditEvent): string | null {
  return event.user?.id ?? event.user?.email?.toLowerCase() ?? null;
}

/** The group an event falls in under `groupBy`; events without the value share the group "(none)". */
export function groupKeyOf(event: AuditEvent, groupBy: AlertGroupBy | null): string {
  if (!groupBy) return "*";
  const value = groupBy === "ip" ? event.ipAddress : groupBy === "user" ? (event.user?.email?.toLowerCase() ?? null) : event.provider;
  return value ?? "(none)";
}

export function summaryOf(event: AuditEvent, country?: string | null): EventSummary {
  return {
    id: event.id,
    seq: event.seq,
    timestamp: event.timestamp.toISOString(),
    eventType: event.eventType,
    ipAddress: event.ipAddress,
    user: event.user?.email ?? null,
    provider: event.provider,
    ...(country !== undefined ? { country } : {}),
  };
}

/** One event into a count rule's window: the new state, and whether the window fired with it. */
export function countStep(
  state: WindowState | null,
  event: AuditEvent,
  rule: Pick<AlertRuleRow, "threshold" | "windowSeconds">,
): { state: WindowState; fires: boolean } {
  const at = event.timestamp.getTime();
  const open = state && at < state.windowStart.getTime() + rule.windowSeconds * 1000 ? state : null;
  const current: WindowState = open
    ? { ...open, sample: [...open.sample] }
    : { windowStart: event.timestamp, count: 0, fired: false, sample: [] };
  current.count += 1;
  if (current.sample.length < SAMPLE_SIZE) current.sample.push(summaryOf(event));
  const fires = !current.fired && current.count >= rule.threshold;
  if (fires) current.fired = true;
  return { state: current, fires };
}

/** Does the rule look at this event (type and severity)? */
export function ruleMatches(rule: AlertRuleRow, types: ReadonlySet<string>, event: AuditEvent): boolean {
  return types.has(event.eventType) && atLeast(event.severity, rule.minSeverity);
}
