import { Arg, Authorized, Ctx, Field, Int, ObjectType, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { AuditEventFilterInput } from "./audit.type";

@ObjectType("AuditFacetValue", { description: "One value of a facet and how many of the filter's events have it." })
export class AuditFacetValueType {
  @Field({ description: "The value as a filter takes it: an event type, a user id, an IP address, a provider, a severity." })
  value!: string;
  @Field({ description: "The value in a person's words: the event type's meaning, the user's e-mail; else the value." })
  label!: string;
  @Field(() => Int) count!: number;
}

@ObjectType("AuditFacets", { description: "The top values of the filter's events in each facet, most frequent first." })
export class AuditFacetsType {
  @Field({ description: "True when the counts are estimated from a sample of the table (counting exactly ran past the budget)." })
  sampled!: boolean;
  @Field(() => [AuditFacetValueType]) eventType!: AuditFacetValueType[];
  @Field(() => [AuditFacetValueType]) user!: AuditFacetValueType[];
  @Field(() => [AuditFacetValueType]) ipAddress!: AuditFacetValueType[];
  @Field(() => [AuditFacetValueType]) provider!: AuditFacetValueType[];
  @Field(() => [AuditFacetValueType]) severity!: AuditFacetValueType[];
}

@Resolver()
export class AuditFacetResolver {
  @Authorized()
  @Query(() => AuditFacetsType, {
    description:
      "The top values of event type, user, IP address, provider and severity among the filter's events, with counts (the console's facets), within the histogram's time budget.",
  })
  auditEventFacets(
    @Ctx() { services }: RequestContext,
    @Arg("filter", () => AuditEventFilterInput, { nullable: true }) filter?: AuditEventFilterInput | null,
    @Arg("limit", () => Int, { nullable: true, description: "Values per facet (default 5, at most 20)." }) limit?: number | null,
  ) {
    return services.auditFacets.facets(filter, limit ?? undefined);
  }
}
