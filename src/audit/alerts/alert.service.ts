import type { Sequelize, Transaction } from "sequelize";
import { expandEventTypePattern, isSeverity } from "../log";
import { diffChanges, type Changes } from "../log";
import type { AuditService } from "../log";
import { BadRequestError, NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { requiredText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { AlertLimits } from "../../platform/config/config";
import type { AlertDeliveryRow, AlertRepository, FiringRow } from "./alert.repository";
import { ALERT_PRESETS, presetOf, type AlertCondition, type AlertGroupBy, type AlertRuleRow } from "./alert.rules";

const CONDITIONS: AlertCondition[] = ["count", "new_country"];
const GROUP_BY: AlertGroupBy[] = ["ip", "user", "provider"];

const MAX_CHANNELS_PER_RULE = 20;
const MAX_EVENT_TYPES = 50;

export type RuleInput = {
  name?: string | null;
  condition?: string | null;
  eventTypes?: string[] | null;
  minSeverity?: string | null;
  threshold?: number | null;
  windowSeconds?: number | null;
  groupBy?: string | null;
  channelIds?: string[] | null;
  enabled?: boolean | null;
  /** Storm limits of the rule; 0 (cool-down) or null-by-omission keep the current value, a negative value clears it. */
  cooldownSeconds?: number | null;
  firingCap?: number | null;
};

export type PresetView = { key: string; name: string; description: string; ruleId: string | null; enabled: boolean };
export type FiringView = FiringRow & { deliveries: AlertDeliveryRow[] };
/**
 * Administration of alert rules (audited in the transaction of the change), the spec's presets in one
 * step, and the firing history. Channels have their own service (alert-channel.service.ts).
 */
export class AlertService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly alerts: AlertRepository,
    private readonly audit: AuditService,
    /** The instance's storm limits (ALERT_COOLDOWN_SECONDS, ALERT_FIRING_CAP, ALERT_CHANNEL_BUDGETS, …). */
    readonly limits: AlertLimits,
  ) {}

  // Rules ------------------------------------------------------------------------------------------

  rules(): Promise<AlertRuleRow[]> {
    return this.alerts.listRules();
  }

  async presets(): Promise<PresetView[]> {
    const rules = await this.alerts.listRules();
    return ALERT_PRESETS.map((preset) => {
      const rule = rules.find((candidate) => candidate.preset === preset.key) ?? null;
      return {
        key: preset.key,
        name: preset.name,
        description: preset.description,
        ruleId: rule?.id ?? null,
        enabled: rule?.enabled ?? false,
      };
    });
  }

  /** One step: the preset's rule, created (or re-enabled) with the given channels. */
  async enablePreset(actor: Actor, key: string, channelIds: string[] | null | undefined): Promise<AlertRuleRow> {
    const preset = presetOf(key);
    if (!preset) throw new BadRequestError(`preset must be one of ${ALERT_PRESETS.map((p) => p.key).join(", ")}`);
    const existing = (await this.alerts.listRules()).find((rule) => rule.preset === key);
    if (existing) return this.updateRule(actor, existing.id, { enabled: true, ...(channelIds ? { channelIds } : {}) });
    return this.createRule(actor, { name: preset.name, ...preset.rule, channelIds: channelIds ?? [], enabled: true }, key);
  }

  async createRule(actor: Actor, input: RuleInput, preset: string | null = null): Promise<AlertRuleRow> {
    const checked = await this.validateRule(input, null);
    return this.sequelize.transaction(async (transaction) => {
      const saved = await this.alerts.saveRule({ id: newId(), preset, ...checked }, transaction);
      await this.recordRule(transaction, actor, saved, "alert.rule.created", "create", diffChanges({}, ruleState(saved)));
      return saved;
    });
  }

  async updateRule(actor: Actor, id: string, input: RuleInput): Promise<AlertRuleRow> {
    await this.findRule(id);
    return this.sequelize.transaction(async (transaction) => {
      const locked = (await this.alerts.getRule(id, transaction))!;
      const checked = await this.validateRule(input, locked, transaction);
      const changes = diffChanges(ruleState(locked), ruleState({ ...locked, ...checked }));
      if (Object.keys(changes).length === 0) return locked;
      const saved = await this.alerts.saveRule({ ...locked, ...checked }, transaction);
      // A changed condition counts afresh; a change of name, channels or enabled keeps the open windows.
      if (["condition", "eventTypes", "minSeverity", "threshold", "windowSeconds", "groupBy"].some((field) => field in changes))
        await this.alerts.resetWindows(id, transaction);
      await this.recordRule(transaction, actor, saved, "alert.rule.updated", "update", changes);
      return saved;
    });
  }

  async deleteRule(actor: Actor, id: string): Promise<AlertRuleRow> {
    const rule = await this.findRule(id);
    await this.sequelize.transaction(async (transaction) => {
      await this.alerts.deleteRule(id, transaction);
      await this.recordRule(transaction, actor, rule, "alert.rule.deleted", "delete", diffChanges(ruleState(rule), {}));
    });
    return rule;
  }

  private async findRule(id: string): Promise<AlertRuleRow> {
    const rule = isUuid(id) ? await this.alerts.getRule(id) : null;
    if (!rule) throw new NotFoundError("Alert rule");
    return rule;
  }

  private async validateRule(input: RuleInput, current: AlertRuleRow | null, transaction?: Transaction) {
    const problems = new ValidationErrors();
    const name = requiredText(problems, "Name", input.name ?? current?.name, 100);
    const condition = (input.condition ?? current?.condition ?? "count") as AlertCondition;
    if (!CONDITIONS.includes(condition)) problems.add(`Condition must be one of ${CONDITIONS.join(", ")}`);
    let eventTypes = (input.eventTypes ?? current?.eventTypes ?? []).map((pattern) => pattern.trim());
    if (condition === "new_country") eventTypes = ["auth.login.success"];
    if (eventTypes.length === 0) problems.add("Event types can't be empty");
    if (eventTypes.length > MAX_EVENT_TYPES) problems.add(`Event types has too many entries (maximum is ${MAX_EVENT_TYPES})`);
    for (const pattern of eventTypes.slice(0, MAX_EVENT_TYPES))
      if (!expandEventTypePattern(pattern))
        problems.add(`Event type ${JSON.stringify(pattern.slice(0, 100))} is not a known event type or prefix`);
    const minSeverity = input.minSeverity ?? current?.minSeverity ?? "info";
    if (!isSeverity(minSeverity)) problems.add("Minimum severity must be info, warning, error or critical");
    const threshold = input.threshold ?? current?.threshold ?? 1;
    if (!Number.isInteger(threshold) || threshold < 1 || threshold > 100_000) problems.add("Threshold must be between 1 and 100000");
    const windowSeconds = input.windowSeconds ?? current?.windowSeconds ?? 600;
    if (!Number.isInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > 604_800)
      problems.add("Window must be between 1 and 604800 seconds");
    const groupBy = (input.groupBy === undefined ? (current?.groupBy ?? null) : input.groupBy || null) as AlertGroupBy | null;
    if (groupBy !== null && !GROUP_BY.includes(groupBy)) problems.add(`Group by must be one of ${GROUP_BY.join(", ")} or empty`);
    const channelIds = [...new Set(input.channelIds ?? current?.channelIds ?? [])];
    if (channelIds.length > MAX_CHANNELS_PER_RULE) problems.add(`Channels has too many entries (maximum is ${MAX_CHANNELS_PER_RULE})`);
    else if (channelIds.some((id) => !isUuid(id))) problems.add("Channels must be alert channel ids");
    else if ((await this.alerts.channelsByIds(channelIds, transaction)).length !== channelIds.length)
      problems.add("Channels names an unknown channel");
    const cooldownSeconds = ownLimit(input.cooldownSeconds, current?.cooldownSeconds ?? null);
    if (cooldownSeconds !== null && (!Number.isInteger(cooldownSeconds) || cooldownSeconds > 604_800))
      problems.add("Cool-down must be between 0 and 604800 seconds (or -1 for the instance's default)");
    const firingCap = ownLimit(input.firingCap, current?.firingCap ?? null);
    if (firingCap !== null && (!Number.isInteger(firingCap) || firingCap < 1 || firingCap > 100_000))
      problems.add("Firing cap must be between 1 and 100000 (or -1 for the instance's default)");
    problems.throwIfAny();
    return {
      cooldownSeconds,
      firingCap,
      name,
      condition,
      eventTypes,
      minSeverity: minSeverity as AlertRuleRow["minSeverity"],
      threshold,
      windowSeconds,
      groupBy: condition === "new_country" ? ("user" as const) : groupBy,
      channelIds,
      enabled: input.enabled ?? current?.enabled ?? true,
    };
  }

  private async recordRule(
    transaction: Transaction,
    actor: Actor,
    rule: AlertRuleRow,
    type: "alert.rule.created" | "alert.rule.updated" | "alert.rule.deleted",
    action: string,
    changes: Changes,
  ): Promise<void> {
    await this.audit.record(transaction, {
      type,
      actor,
      action,
      resource: { type: "alert_rule", id: rule.id, label: rule.name },
      changes,
    });
  }

  // Firing history ---------------------------------------------------------------------------------

  async firings(
    first: number | null | undefined,
    before: string | null | undefined,
    ruleId: string | null | undefined,
  ): Promise<FiringView[]> {
    if (before && !isUuid(before)) throw new BadRequestError("before must be a firing id");
    if (ruleId && !isUuid(ruleId)) throw new BadRequestError("ruleId must be an alert rule id");
    const limit = Math.min(Math.max(first ?? 50, 1), 200);
    const rows = await this.alerts.firings(limit, before ?? null, ruleId ?? null);
    const deliveries = await this.alerts.deliveriesOf(rows.map((row) => row.id));
    return rows.map((row) => ({ ...row, deliveries: deliveries.filter((delivery) => delivery.firingId === row.id) }));
  }

  /** Windows that started more than 8 days ago ended at least a day ago (the longest window is 7 days). */
  pruneWindows(): Promise<number> {
    return this.alerts.pruneWindows(new Date(Date.now() - 8 * 86_400_000));
  }

  async firing(id: string): Promise<FiringView | null> {
    const row = isUuid(id) ? await this.alerts.firing(id) : null;
    if (!row) return null;
    return { ...row, deliveries: await this.alerts.deliveriesOf([row.id]) };
  }
}

function ruleState(rule: Omit<AlertRuleRow, "createdAt" | "updatedAt" | "id" | "preset">): Record<string, unknown> {
  return {
    name: rule.name,
    condition: rule.condition,
    eventTypes: rule.eventTypes,
    minSeverity: rule.minSeverity,
    threshold: rule.threshold,
    windowSeconds: rule.windowSeconds,
    groupBy: rule.groupBy,
    channelIds: rule.channelIds,
    enabled: rule.enabled,
    cooldownSeconds: rule.cooldownSeconds,
    firingCap: rule.firingCap,
  };
}

/** A rule's own limit: omitted keeps the current one, a negative value returns to the instance's default (null). */
function ownLimit(given: number | null | undefined, current: number | null): number | null {
  if (given === undefined || given === null) return current;
  return given < 0 ? null : given;
}
