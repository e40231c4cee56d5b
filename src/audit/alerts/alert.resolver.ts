import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { Topic } from "../../platform/events/catalogue";
import type { RequestContext } from "../../transports/graphql/context";
import type { Services } from "../../app/services";
import type { ChannelInput, ChannelView } from "./alert-channel.service";
import type { FiringView, RuleInput } from "./alert.service";
import {
  AlertChannelInput,
  AlertChannelTestResultType,
  AlertChannelType,
  AlertChannelWithSecretType,
  AlertFiringType,
  AlertLimitsType,
  AlertPresetType,
  AlertRuleInput,
  AlertRuleType,
  type AlertSettingInput,
} from "./alert.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import { listen } from "../../transports/graphql/subscription";
import type { Actor } from "../../platform/security/actor";

function pairs(list: AlertSettingInput[] | null | undefined): Record<string, string> | null {
  return list ? Object.fromEntries(list.map(({ name, value }) => [name, value])) : null;
}

function toChannelInput(input: AlertChannelInput): ChannelInput {
  return {
    kind: input.kind,
    name: input.name,
    enabled: input.enabled,
    settings: pairs(input.settings),
    credentials: pairs(input.credentials),
  };
}

function toChannel(view: ChannelView): AlertChannelType {
  return { ...view, settings: Object.entries(view.settings).map(([name, value]) => ({ name, value })) };
}

function toFiring(view: FiringView): AlertFiringType {
  return {
    ...view,
    digest: view.digest ?? false,
    deliveries: view.deliveries.map((delivery) => ({
      ...delivery,
      nextAttemptAt: delivery.status === "pending" ? delivery.nextAttemptAt : null,
    })),
  };
}

/** Each firing committed from now on, read whole. */
async function* firings(services: Services): AsyncGenerator<AlertFiringType> {
  for await (const notice of services.events.subscribe(Topic.AlertFired)) {
    const firing = await services.alerts.firing(notice.firingId);
    if (firing) yield toFiring(firing);
  }
}

/** Alerts administration: administrators only, changes need a read_write credential. */
@Resolver()
export class AlertResolver {
  @Authorized()
  @Query(() => [AlertRuleType])
  alertRules(@Ctx() { services }: RequestContext) {
    return services.alerts.rules();
  }

  @Authorized()
  @Query(() => AlertLimitsType, {
    description: "The instance's storm limits: rule defaults (cool-down, firing cap) and channel send budgets.",
  })
  alertLimits(@Ctx() { services }: RequestContext): AlertLimitsType {
    const limits = services.alerts.limits;
    return {
      ...limits,
      channelBudgets: Object.entries(limits.channelBudgets).map(([kind, deliveries]) => ({ kind, deliveries })),
    };
  }

  @Authorized()
  @Query(() => [AlertPresetType], { description: "The spec's example rules, and whether each is enabled." })
  alertPresets(@Ctx() { services }: RequestContext) {
    return services.alerts.presets();
  }

  @Authorized()
  @Query(() => [AlertChannelType])
  async alertChannels(@Ctx() { services }: RequestContext) {
    return (await services.alertChannels.channels()).map(toChannel);
  }

  @Authorized()
  @Query(() => [AlertFiringType], { description: "Firing history, newest first (before: a firing id, for the next page)." })
  async alertFirings(
    @Ctx() { services }: RequestContext,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("before", () => ID, { nullable: true }) before?: string | null,
    @Arg("ruleId", () => ID, { nullable: true }) ruleId?: string | null,
  ) {
    return (await services.alerts.firings(first, before, ruleId)).map(toFiring);
  }

  @Authorized()
  @Mutation(() => AlertRuleType, { description: "Creates the preset's rule, or enables it again (alert.rule.created / updated)." })
  enableAlertPreset(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("preset") preset: string,
    @Arg("channelIds", () => [ID], { nullable: true }) channelIds?: string[] | null,
  ) {
    return services.alerts.enablePreset(actor, preset, channelIds);
  }

  @Authorized()
  @Mutation(() => AlertRuleType, { description: "alert.rule.created" })
  createAlertRule(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input") input: AlertRuleInput) {
    return services.alerts.createRule(actor, input as RuleInput);
  }

  @Authorized()
  @Mutation(() => AlertRuleType, { description: "alert.rule.updated; a changed condition starts its windows afresh." })
  updateAlertRule(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input") input: AlertRuleInput,
  ) {
    return services.alerts.updateRule(actor, id, input as RuleInput);
  }

  @Authorized()
  @Mutation(() => AlertRuleType, { description: "alert.rule.deleted; its firing history stays." })
  deleteAlertRule(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.alerts.deleteRule(actor, id);
  }

  @Authorized()
  @Mutation(() => AlertChannelWithSecretType, { description: "alert.channel.created; a webhook channel's secret is in the answer, once." })
  async createAlertChannel(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input") input: AlertChannelInput) {
    const created = await services.alertChannels.createChannel(actor, toChannelInput(input));
    return { channel: toChannel(created.channel), secret: created.secret };
  }

  @Authorized()
  @Mutation(() => AlertChannelType, { description: "alert.channel.updated, credentials redacted." })
  async updateAlertChannel(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input") input: AlertChannelInput,
  ) {
    return toChannel(await services.alertChannels.updateChannel(actor, id, toChannelInput(input)));
  }

  @Authorized()
  @Mutation(() => AlertChannelType, { description: "alert.channel.deleted; rules stop using it." })
  async deleteAlertChannel(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toChannel(await services.alertChannels.deleteChannel(actor, id));
  }

  @Authorized()
  @Mutation(() => AlertChannelTestResultType, { description: "Sends a test alert now (alert.channel.tested)." })
  testAlertChannel(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.alertChannels.testChannel(actor, id);
  }

  @Authorized()
  @Subscription(() => AlertFiringType, {
    description: "Each alert firing as soon as it is committed (from any process): the console's toast.",
    subscribe: listen(({ context }) => firings(context.services)),
  })
  alertFired(@Root() firing: AlertFiringType): AlertFiringType {
    return firing;
  }
}
