import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { destinationKinds, type DestinationInput, type DestinationKind } from "./destination.settings";
import type { DestinationView, DestinationWithSecret } from "./stream-destination.service";
import {
  StreamDeliveryType,
  StreamDestinationKindType,
  StreamDestinationInput,
  StreamDestinationType,
  StreamDestinationWithSecretType,
  StreamSettingInput,
  StreamTestResultType,
} from "./stream.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

function pairs(list: StreamSettingInput[] | null | undefined): Record<string, string> | null {
  return list ? Object.fromEntries(list.map(({ name, value }) => [name, value])) : null;
}

function toInput(input: StreamDestinationInput): DestinationInput {
  return {
    kind: (input.kind ?? null) as DestinationKind | null,
    name: input.name,
    description: input.description,
    url: input.url,
    eventTypes: input.eventTypes,
    enabled: input.enabled,
    settings: pairs(input.settings),
    credentials: pairs(input.credentials),
  };
}

function toType(view: DestinationView): StreamDestinationType {
  return { ...view, settings: Object.entries(view.settings).map(([name, value]) => ({ name, value: String(value) })) };
}

function withSecret(result: DestinationWithSecret): StreamDestinationWithSecretType {
  return { destination: toType(result.destination), secret: result.secret };
}

/**
 * Audit streaming: administrators and auditors read where the audit log goes (an auditor checks that
 * the evidence leaves the building; no credential is ever returned); only administrators change it,
 * with a read_write credential.
 */
@Resolver()
export class StreamResolver {
  @Authorized()
  @Query(() => [StreamDestinationType], { description: "Webhooks and SIEM destinations of the audit stream, with their health." })
  async streamDestinations(@Ctx() { services }: RequestContext) {
    return (await services.streamDestinations.list()).map(toType);
  }

  @Authorized()
  @Query(() => [StreamDestinationKindType], {
    description: "What each kind of destination takes: its settings (required or not) and credentials, for forms.",
  })
  streamDestinationKinds(): StreamDestinationKindType[] {
    return destinationKinds();
  }

  @Authorized()
  @Query(() => StreamDestinationType)
  async streamDestination(@Ctx() { services }: RequestContext, @Arg("id", () => ID) id: string) {
    return toType(await services.streamDestinations.get(id));
  }

  @Authorized()
  @Query(() => [StreamDeliveryType], {
    description: "A destination's delivery attempts, newest first (before: a delivery id, for the next page).",
  })
  streamDeliveries(
    @Ctx() { services }: RequestContext,
    @Arg("destinationId", () => ID) destinationId: string,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("before", () => ID, { nullable: true }) before?: string | null,
  ) {
    return services.streamDestinations.deliveries(destinationId, first, before);
  }

  @Authorized()
  @Mutation(() => StreamDestinationWithSecretType, {
    description:
      "Adds a destination (stream.destination.created); it receives events recorded from now on. A webhook's secret is in the answer, once.",
  })
  async createStreamDestination(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input") input: StreamDestinationInput,
  ) {
    return withSecret(await services.streamDestinations.create(actor, toInput(input)));
  }

  @Authorized()
  @Mutation(() => StreamDestinationType, { description: "stream.destination.updated, with changes; credentials redacted." })
  async updateStreamDestination(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input") input: StreamDestinationInput,
  ) {
    return toType(await services.streamDestinations.update(actor, id, toInput(input)));
  }

  @Authorized()
  @Mutation(() => StreamDestinationType, { description: "stream.destination.deleted" })
  async deleteStreamDestination(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toType(await services.streamDestinations.delete(actor, id));
  }

  @Authorized()
  @Mutation(() => StreamDestinationType, { description: "Stops delivery; events keep accumulating as lag (stream.destination.paused)." })
  async pauseStreamDestination(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toType(await services.streamDestinations.setPaused(actor, id, true));
  }

  @Authorized()
  @Mutation(() => StreamDestinationType, {
    description: "Delivers again from the position, also after retries were exhausted (stream.destination.resumed).",
  })
  async resumeStreamDestination(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toType(await services.streamDestinations.setPaused(actor, id, false));
  }

  @Authorized()
  @Mutation(() => StreamDestinationType, {
    description: "Delivers again from a chain sequence number or from the first event at or after a time (stream.destination.replayed).",
  })
  async replayStreamDestination(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("fromSequence", () => String, { nullable: true }) fromSequence?: string | null,
    @Arg("fromTime", () => String, { nullable: true, description: "ISO 8601 date-time." }) fromTime?: string | null,
  ) {
    return toType(await services.streamDestinations.replay(actor, id, { sequence: fromSequence, time: fromTime }));
  }

  @Authorized()
  @Mutation(() => StreamDestinationWithSecretType, {
    description:
      "A new webhook secret, shown once; the old one keeps signing for overlapSeconds (default 86400) (stream.destination.secret_rotated).",
  })
  async rotateStreamWebhookSecret(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("overlapSeconds", () => Int, { nullable: true }) overlapSeconds?: number | null,
  ) {
    return withSecret(await services.streamDestinations.rotateSecret(actor, id, overlapSeconds));
  }

  @Authorized()
  @Mutation(() => StreamTestResultType, { description: "Sends a test event now: webhook.test for webhooks (stream.destination.tested)." })
  testStreamDestination(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.streamDestinations.test(actor, id);
  }
}
