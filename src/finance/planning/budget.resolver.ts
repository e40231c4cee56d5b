import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import {
  BudgetCategoryFilterInput,
  BudgetCategoryInput,
  BudgetCategoryPageType,
  BudgetCategoryType,
  BudgetFilterInput,
  BudgetInput,
  BudgetPageType,
  BudgetType,
} from "./budget.type";

@Resolver(() => BudgetType)
export class BudgetResolver {
  @Authorized()
  @Query(() => BudgetPageType, { description: "The family's monthly budgets, newest month first." })
  async budgets(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => BudgetFilterInput, { nullable: true }) filter?: BudgetFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, pagination } = await services.budgets.list(
      actor,
      { startDate: filter?.startDate ?? undefined, endDate: filter?.endDate ?? undefined },
      page,
      perPage,
    );
    return { items: items.map((view) => new BudgetType(view)), pagination };
  }

  @Authorized()
  @Query(() => BudgetType)
  async budget(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return new BudgetType(await services.budgets.get(actor, id));
  }

  @Authorized()
  @Query(() => BudgetCategoryPageType, { description: "Allocations of the family's budgets, newest month first, then by category name." })
  async budgetCategories(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => BudgetCategoryFilterInput, { nullable: true }) filter?: BudgetCategoryFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, pagination } = await services.budgets.listCategories(
      actor,
      {
        budgetId: filter?.budgetId ?? undefined,
        categoryId: filter?.categoryId ?? undefined,
        startDate: filter?.startDate ?? undefined,
        endDate: filter?.endDate ?? undefined,
      },
      page,
      perPage,
    );
    return { items: items.map((view) => new BudgetCategoryType(view)), pagination };
  }

  @Authorized()
  @Query(() => BudgetCategoryType)
  async budgetCategory(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return new BudgetCategoryType(await services.budgets.getCategory(actor, id));
  }

  @Authorized()
  @Mutation(() => BudgetType, { description: "Sets a month's totals, creating its budget (every category at zero) on first write." })
  async setBudget(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input", () => BudgetInput) input: BudgetInput) {
    return new BudgetType(await services.budgets.setBudget(actor, input));
  }

  @Authorized()
  @Mutation(() => BudgetCategoryType, { description: "Sets one category's allocation in a budget." })
  async setBudgetCategory(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => BudgetCategoryInput) input: BudgetCategoryInput,
  ) {
    return new BudgetCategoryType(await services.budgets.setCategory(actor, input));
  }
}
