import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { AUDIT_EVENT_CATALOGUE, AUDIT_EVENT_TYPES } from "./audit.catalogue";
import type { RequestContext } from "../../transports/graphql/context";
import { Topic, type AuditEventRecorded } from "../../platform/events/catalogue";
import { encodeCursor, parseFilter } from "./audit-filter";
import type { AuditEvent, AuditService } from "./audit.service";
import {
  AuditChainReportType,
  AuditEventConnectionType,
  AuditEventFilterInput,
  AuditEventsAfterSeqType,
  AuditEventTypeInfoType,
  AuditEventType,
  AuditHistogramType,
  AuditSavedSearchType,
} from "./audit.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import { listen } from "../../transports/graphql/subscription";
import type { Actor } from "../../platform/security/actor";

@ArgsType()
class AuditSubscriptionArgs {
  @Field(() => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null;
}

@Resolver(() => AuditEventType)
export class AuditResolver {
  @Authorized()
  @Query(() => AuditEventConnectionType, { description: "Audit events, newest first. Administrators and auditors only." })
  async auditEvents(
    @Ctx() { services }: RequestContext,
    @Arg("filter", () => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null,
    @Arg("first", () => Int, { nullable: true, description: "Page size: default 50, at most 100." }) first?: number | null,
    @Arg("after", () => String, { nullable: true, description: "endCursor of the previous page." }) after?: string | null,
    @Arg("offset", () => Int, { nullable: true, description: "For shallow pages only; ignored with `after`." }) offset?: number | null,
  ) {
    const page = await services.audit.list(filter, { first, after, offset });
    return {
      edges: page.events.map((node) => ({ node, cursor: encodeCursor(node) })),
      nodes: page.events,
      pageInfo: {
        hasNextPage: page.hasMore,
        endCursor: page.nextCursor,
        limit: page.limit,
        offset: page.offset,
        total: page.total,
        totalCapped: page.totalCapped,
      },
    };
  }

  @Authorized()
  @Query(() => AuditHistogramType, {
    description:
      "Events per time bucket and severity for the filter (the console's chart): over its date range, or from the oldest event to now.",
  })
  auditEventHistogram(
    @Ctx() { services }: RequestContext,
    @Arg("filter", () => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null,
    @Arg("buckets", () => Int, { nullable: true, description: "At most this many buckets (default and maximum 120)." })
    buckets?: number | null,
  ) {
    return services.audit.histogram(filter, buckets ?? undefined);
  }

  @Authorized()
  @Query(() => AuditEventsAfterSeqType, {
    description:
      "Events linked into the chain after position afterSeq that match the filter, oldest first: what a live view missed while disconnected.",
  })
  auditEventsAfterSeq(
    @Ctx() { services }: RequestContext,
    @Arg("afterSeq", () => String) afterSeq: string,
    @Arg("filter", () => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null,
  ) {
    return services.audit.eventsAfterSeq(afterSeq, filter);
  }

  @Authorized()
  @Query(() => [AuditEventTypeInfoType], { description: "The audit event catalogue: every type that can be recorded." })
  auditEventTypes() {
    return AUDIT_EVENT_TYPES.map((type) => ({
      type,
      category: type.split(".")[0],
      defaultSeverity: AUDIT_EVENT_CATALOGUE[type].severity,
      meaning: AUDIT_EVENT_CATALOGUE[type].meaning,
    }));
  }

  @Authorized()
  @Query(() => String, { description: "The chain position of the last linked event (0 when none): where a live view starts." })
  async auditChainHeadSeq(@Ctx() { services }: RequestContext): Promise<string> {
    return services.audit.chainHeadSeq();
  }

  @Authorized()
  @Query(() => AuditChainReportType, {
    description:
      "Verifies the hash chain and reports the first broken link: without a date range, across archived months and the database as one chain, " +
      "with every signed checkpoint. A tampered or missing archive is a broken link naming the archive (and its bad bytes when no event can be " +
      "named). Archives read count against the request's archive budget (AUDIT_ARCHIVE_REQUEST_BYTES): past it, BAD_REQUEST.",
  })
  auditChainVerification(
    @Ctx() context: RequestContext,
    @Arg("from", () => String, { nullable: true }) from?: string | null,
    @Arg("to", () => String, { nullable: true }) to?: string | null,
  ) {
    const { services } = context;
    return from || to ? services.audit.verify({ from, to }) : services.retention.verify(null, services.retention.budgetOf(context));
  }

  @Authorized()
  @Query(() => [AuditSavedSearchType], { description: "Your saved audit searches, by name." })
  auditSavedSearches(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.auditSavedSearches.list(actor.userId);
  }

  @Authorized()
  @Query(() => AuditSavedSearchType, { description: "Reopens one of your saved searches." })
  auditSavedSearch(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.auditSavedSearches.get(actor.userId, id);
  }

  @Authorized()
  @Mutation(() => AuditSavedSearchType)
  createAuditSavedSearch(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("name") name: string,
    @Arg("filter", () => AuditEventFilterInput) filter: AuditEventFilterInput,
  ) {
    return services.auditSavedSearches.create(actor.userId, name, { ...filter });
  }

  @Authorized()
  @Mutation(() => AuditSavedSearchType)
  renameAuditSavedSearch(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("name") name: string,
  ) {
    return services.auditSavedSearches.rename(actor.userId, id, name);
  }

  @Authorized()
  @Mutation(() => AuditSavedSearchType)
  deleteAuditSavedSearch(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.auditSavedSearches.delete(actor.userId, id);
  }

  @Authorized()
  @Subscription(() => AuditEventType, {
    description: "Each audit event matching the filter, as soon as its transaction commits (from any process).",
    subscribe: listen<AuditSubscriptionArgs>(({ context: { services }, args: { filter } }) => {
      // Checked here so a bad filter fails the subscription instead of every event.
      parseFilter(filter);
      return matching(services.events.subscribe(Topic.AuditEventRecorded), services.audit, services.audit.matcher(filter));
    }),
  })
  auditEventRecorded(@Root() event: AuditEvent, @Args() _args: AuditSubscriptionArgs): AuditEvent {
    return event;
  }
}

async function* matching(
  source: AsyncIterable<AuditEventRecorded>,
  audit: AuditService,
  match: (event: AuditEvent) => boolean,
): AsyncGenerator<AuditEvent> {
  for await (const notice of source) {
    const event = await audit.received(notice);
    if (event && match(event)) yield event;
  }
}
