import { Field, ID, InputType, Int, ObjectType } from "type-graphql";

@ObjectType("AlertSetting", { description: "One non-secret channel setting." })
export class AlertSettingType {
  @Field() name!: string;
  @Field() value!: string;
}

@InputType("AlertSettingInput", { description: "A channel setting or credential by name (see docs/alerts.md)." })
export class AlertSettingInput {
  @Field() name!: string;
  @Field() value!: string;
}

@ObjectType("AlertRule", { description: "An alert rule: which events, how many in what window, per which group, to which channels." })
export class AlertRuleType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true, description: "The preset it was made from: brute_force, provider_change or new_country." })
  preset!: string | null;
  @Field({ description: "count (threshold events in the window per group) or new_country (a login from a country new for the user)." })
  condition!: string;
  @Field(() => [String], { description: "Exact event types or prefixes ending in .*." }) eventTypes!: string[];
  @Field({ description: "info, warning, error or critical: events below it are not counted." }) minSeverity!: string;
  @Field(() => Int) threshold!: number;
  @Field(() => Int, { description: "A window starts with its group's first event and lasts this long; it fires at most once." })
  windowSeconds!: number;
  @Field(() => String, { nullable: true, description: "ip, user, provider, or null for one group." }) groupBy!: string | null;
  @Field(() => [ID]) channelIds!: string[];
  @Field() enabled!: boolean;
  @Field(() => Int, {
    nullable: true,
    description: "Seconds after a firing during which the rule's next firings are held back for its digest; null: ALERT_COOLDOWN_SECONDS.",
  })
  cooldownSeconds!: number | null;
  @Field(() => Int, { nullable: true, description: "Firings per cap period before the rest wait for one digest; null: ALERT_FIRING_CAP." })
  firingCap!: number | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("AlertChannelBudget", { description: "How many deliveries one channel of a kind may send per budget period." })
export class AlertChannelBudgetType {
  @Field() kind!: string;
  @Field(() => Int) deliveries!: number;
}

@ObjectType("AlertLimits", {
  description: "The instance's storm limits (docs/alerts.md, Storm limits): the defaults rules inherit, and channel budgets.",
})
export class AlertLimitsType {
  @Field(() => Int, { description: "ALERT_COOLDOWN_SECONDS: a rule's default cool-down after each firing (0: none)." })
  cooldownSeconds!: number;
  @Field(() => Int, { description: "ALERT_FIRING_CAP: a rule's default number of firings per cap period." }) firingCap!: number;
  @Field(() => Int, { description: "ALERT_FIRING_CAP_WINDOW_SECONDS: the cap period; its digest goes out when it ends." })
  capWindowSeconds!: number;
  @Field(() => [AlertChannelBudgetType], { description: "ALERT_CHANNEL_BUDGETS, per channel of each kind." })
  channelBudgets!: AlertChannelBudgetType[];
  @Field(() => Int, { description: "ALERT_CHANNEL_BUDGET_WINDOW_SECONDS: the sliding period the budgets count over." })
  budgetWindowSeconds!: number;
}

@InputType("AlertRuleInput", { description: "On update, omitted fields keep their value." })
export class AlertRuleInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: "count (default) or new_country." }) condition?: string | null;
  @Field(() => [String], { nullable: true }) eventTypes?: string[] | null;
  @Field(() => String, { nullable: true }) minSeverity?: string | null;
  @Field(() => Int, { nullable: true }) threshold?: number | null;
  @Field(() => Int, { nullable: true }) windowSeconds?: number | null;
  @Field(() => String, { nullable: true, description: "ip, user, provider; empty for none." }) groupBy?: string | null;
  @Field(() => [ID], { nullable: true }) channelIds?: string[] | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
  @Field(() => Int, { nullable: true, description: "The rule's own cool-down in seconds (0: none); -1 returns to ALERT_COOLDOWN_SECONDS." })
  cooldownSeconds?: number | null;
  @Field(() => Int, { nullable: true, description: "The rule's own firing cap per cap period; -1 returns to ALERT_FIRING_CAP." })
  firingCap?: number | null;
}

@ObjectType("AlertPreset", { description: "One of the interface spec's example rules, enabled in one step." })
export class AlertPresetType {
  @Field() key!: string;
  @Field() name!: string;
  @Field() description!: string;
  @Field(() => ID, { nullable: true, description: "The rule made from it, once enabled." }) ruleId!: string | null;
  @Field() enabled!: boolean;
}

@ObjectType("AlertChannel", { description: "Where alerts go: email, chat (Slack-compatible webhook), webhook (signed) or sms." })
export class AlertChannelType {
  @Field(() => ID) id!: string;
  @Field() kind!: string;
  @Field() name!: string;
  @Field() enabled!: boolean;
  @Field(() => [AlertSettingType]) settings!: AlertSettingType[];
  @Field(() => [String], { description: "Names of the stored credentials; their values are never returned." }) credentialNames!: string[];
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("AlertChannelWithSecret", { description: "A webhook channel's signing secret (whsec_…) is shown here once." })
export class AlertChannelWithSecretType {
  @Field(() => AlertChannelType) channel!: AlertChannelType;
  @Field(() => String, { nullable: true }) secret!: string | null;
}

@InputType("AlertChannelInput", {
  description: "On update, omitted fields keep their value; credentials given replace those of the same name.",
})
export class AlertChannelInput {
  @Field(() => String, { nullable: true, description: "Required on create; cannot change." }) kind?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
  @Field(() => [AlertSettingInput], { nullable: true, description: "An empty value removes a setting." }) settings?:
    AlertSettingInput[] | null;
  @Field(() => [AlertSettingInput], { nullable: true, description: "Write-only (password, url, authToken), stored encrypted." })
  credentials?: AlertSettingInput[] | null;
}

@ObjectType("AlertChannelTestResult")
export class AlertChannelTestResultType {
  @Field() ok!: boolean;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType("AlertEvent", { description: "An audit event that made a rule fire." })
export class AlertEventType {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) seq!: string | null;
  @Field() timestamp!: string;
  @Field() eventType!: string;
  @Field(() => String, { nullable: true }) ipAddress!: string | null;
  @Field(() => String, { nullable: true }) user!: string | null;
  @Field(() => String, { nullable: true }) provider!: string | null;
  @Field(() => String, { nullable: true }) country?: string | null;
}

@ObjectType("AlertAttemptError")
export class AlertAttemptErrorType {
  @Field() at!: string;
  @Field() error!: string;
}

@ObjectType("AlertDelivery", {
  description:
    "A firing sent to one channel: pending (retrying), sent, failed after the last retry, or suppressed (the channel's send budget held it back).",
})
export class AlertDeliveryType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) channelId!: string | null;
  @Field() channelName!: string;
  @Field() channelKind!: string;
  @Field() status!: string;
  @Field(() => Int) attempts!: number;
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => [AlertAttemptErrorType], { description: "Failed attempts, oldest first (the last 20)." }) errors!: AlertAttemptErrorType[];
  @Field(() => Date, { nullable: true }) sentAt!: Date | null;
}

@ObjectType("AlertFiring", { description: "A rule fired: once per window per group." })
export class AlertFiringType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) ruleId!: string | null;
  @Field() ruleName!: string;
  @Field({ description: "The group's value (an IP, a user, a provider), or * for rules without grouping." }) groupKey!: string;
  @Field() windowStart!: Date;
  @Field() firedAt!: Date;
  @Field(() => Int, { description: "Events counted when it fired." }) count!: number;
  @Field() summary!: string;
  @Field(() => [AlertEventType], { description: "The triggering events (the first 20)." }) events!: AlertEventType[];
  @Field({ description: "A storm digest: count firings the rule's limits held back in one cap period (summary: N more since …)." })
  digest!: boolean;
  @Field(() => [AlertDeliveryType]) deliveries!: AlertDeliveryType[];
}
