import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import type { RuleRunRow } from "./rule.repository";
import { RuleFilterInput, RuleInput, RulePageType, RuleRunFilterInput, RuleRunPageType, RuleRunType, RuleType } from "./rule.type";

function runView(row: RuleRunRow): RuleRunType {
  return {
    ...row,
    rule:
      row.ruleId && row.ruleResourceType !== null
        ? { id: row.ruleId, name: row.ruleCurrentName, resourceType: row.ruleResourceType, active: row.ruleActive ?? false }
        : null,
  };
}

@Resolver(() => RuleType)
export class RuleResolver {
  @Authorized()
  @Query(() => RulePageType, { description: "The family's categorisation rules, oldest first (the order they apply in)." })
  rules(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => RuleFilterInput, { nullable: true }) filter?: RuleFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return services.rules.list(actor, { resourceType: filter?.resourceType, active: filter?.active }, page, perPage);
  }

  @Authorized()
  @Query(() => RuleType)
  rule(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.rules.get(actor, id);
  }

  @Authorized()
  @Query(() => RuleRunPageType, { description: "Applications of the family's rules, newest first." })
  async ruleRuns(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => RuleRunFilterInput, { nullable: true }) filter?: RuleRunFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, meta } = await services.rules.listRuns(actor, filter ?? {}, page, perPage);
    return { items: items.map(runView), meta };
  }

  @Authorized()
  @Query(() => RuleRunType)
  async ruleRun(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return runView(await services.rules.getRun(actor, id));
  }

  @Authorized()
  @Mutation(() => RuleType)
  createRule(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input", () => RuleInput) input: RuleInput) {
    return services.rules.create(actor, input);
  }

  @Authorized()
  @Mutation(() => RuleType)
  updateRule(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => RuleInput) input: RuleInput,
  ) {
    return services.rules.update(actor, id, input);
  }

  @Authorized()
  @Mutation(() => RuleType, { description: "Deletes the rule; its runs stay listed without it." })
  deleteRule(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.rules.delete(actor, id);
  }

  @Authorized()
  @Mutation(() => RuleRunType, { description: "Applies the rule to every transaction of the family it selects, now; answers the run." })
  async applyRule(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return runView(await services.rules.apply(actor, id));
  }
}
