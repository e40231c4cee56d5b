import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { Access } from "../graphql/auth-checker";
import type { RequestContext } from "../graphql/context";
import { Topic, type AuditEventRecorded } from "../events/catalogue";
import { encodeCursor, parseFilter, type AuditEvent, type AuditService } from "./audit.service";
import { AuditChainReportType, AuditEventConnectionType, AuditEventFilterInput, AuditEventType, AuditSavedSearchType } from "./audit.type";

@ArgsType()
class AuditSubscriptionArgs {
  @Field(() => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null;
}

@Resolver(() => AuditEventType)
export class AuditResolver {
  @Authorized(Access.Audit)
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

  @Authorized(Access.Audit)
  @Query(() => AuditChainReportType, {
    description: "Verifies the hash chain (optionally of a date range) and reports the first broken link.",
  })
  auditChainVerification(
    @Ctx() { services }: RequestContext,
    @Arg("from", () => String, { nullable: true }) from?: string | null,
    @Arg("to", () => String, { nullable: true }) to?: string | null,
  ) {
    return services.audit.verify({ from, to });
  }

  @Authorized(Access.Audit)
  @Query(() => [AuditSavedSearchType], { description: "Your saved audit searches, by name." })
  auditSavedSearches(@Ctx() { services, actor }: RequestContext) {
    return services.auditSavedSearches.list(actor!.userId);
  }

  @Authorized(Access.Audit)
  @Query(() => AuditSavedSearchType, { description: "Reopens one of your saved searches." })
  auditSavedSearch(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.auditSavedSearches.get(actor!.userId, id);
  }

  @Authorized(Access.Audit)
  @Mutation(() => AuditSavedSearchType)
  createAuditSavedSearch(
    @Ctx() { services, actor }: RequestContext,
    @Arg("name") name: string,
    @Arg("filter", () => AuditEventFilterInput) filter: AuditEventFilterInput,
  ) {
    return services.auditSavedSearches.create(actor!.userId, name, { ...filter });
  }

  @Authorized(Access.Audit)
  @Mutation(() => AuditSavedSearchType)
  renameAuditSavedSearch(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string, @Arg("name") name: string) {
    return services.auditSavedSearches.rename(actor!.userId, id, name);
  }

  @Authorized(Access.Audit)
  @Mutation(() => AuditSavedSearchType)
  deleteAuditSavedSearch(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.auditSavedSearches.delete(actor!.userId, id);
  }

  @Authorized(Access.Audit)
  @Subscription(() => AuditEventType, {
    description: "Each audit event matching the filter, as soon as its transaction commits (from any process).",
    subscribe: ({ args, context }) => {
      const { filter } = args as AuditSubscriptionArgs;
      // Checked here so a bad filter fails the subscription instead of every event.
      parseFilter(filter);
      const { services } = context as RequestContext;
      return matching(services.events.subscribe(Topic.AuditEventRecorded), services.audit, services.audit.matcher(filter));
    },
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
