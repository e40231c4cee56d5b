import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import { CalendarDateScalar } from "../money";
import {
  RecurringTransactionFilterInput,
  RecurringTransactionInput,
  RecurringTransactionPageType,
  RecurringTransactionType,
  RecurringTransactionUpdateInput,
} from "./recurring.type";

@Resolver(() => RecurringTransactionType)
export class RecurringTransactionResolver {
  @Authorized()
  @Query(() => RecurringTransactionPageType, {
    description: "The family's recurring transactions: active first, then by next expected date.",
  })
  async recurringTransactions(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => RecurringTransactionFilterInput, { nullable: true }) filter?: RecurringTransactionFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, pagination } = await services.recurring.list(actor, filter ?? {}, page, perPage);
    return { items: items.map((row) => new RecurringTransactionType(row)), pagination };
  }

  @Authorized()
  @Query(() => RecurringTransactionType)
  async recurringTransaction(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return new RecurringTransactionType(await services.recurring.get(actor, id));
  }

  @Authorized()
  @Query(() => [RecurringTransactionType], {
    description:
      "Bills due: active recurring money out expected from today until `before` (default: the end of this month), soonest first.",
  })
  async upcomingBills(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("before", () => CalendarDateScalar, { nullable: true }) before?: string,
  ) {
    return (await services.recurring.upcoming(actor, before)).map((row) => new RecurringTransactionType(row));
  }

  @Authorized()
  @Mutation(() => RecurringTransactionType)
  async createRecurringTransaction(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => RecurringTransactionInput) input: RecurringTransactionInput,
  ) {
    return new RecurringTransactionType(await services.recurring.create(actor, input));
  }

  @Authorized()
  @Mutation(() => RecurringTransactionType)
  async updateRecurringTransaction(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => RecurringTransactionUpdateInput) input: RecurringTransactionUpdateInput,
  ) {
    return new RecurringTransactionType(await services.recurring.update(actor, id, input));
  }

  @Authorized()
  @Mutation(() => RecurringTransactionType)
  async deleteRecurringTransaction(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return new RecurringTransactionType(await services.recurring.delete(actor, id));
  }

  @Authorized()
  @Mutation(() => Int, {
    description: "Detects recurring patterns in the last three months of history; answers how many were created or refreshed.",
  })
  detectRecurringTransactions(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.recurring.detect(actor);
  }
}
