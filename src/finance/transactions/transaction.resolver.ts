import type { GraphQLResolveInfo } from "graphql";
import { Arg, Authorized, Ctx, ID, Info, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import type { RelationKinds } from "./transaction-relations.read-ahead";
import { selectedFieldNames } from "../../transports/graphql/selection";
import {
  CreateTransactionPayload,
  TransactionFilterInput,
  TransactionInput,
  TransactionPageType,
  TransactionType,
  TransferInput,
  TransferPayload,
} from "./transaction.type";
import type { TransactionRow } from "./transaction.repository";

@Resolver(() => TransactionType)
export class TransactionResolver {
  @Authorized()
  @Query(() => TransactionPageType, { description: "Newest first." })
  async transactions(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("filter", () => TransactionFilterInput, { nullable: true }) filter?: TransactionFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, pagination } = await context.services.transactions.list(actor, filter ?? {}, page, perPage);
    return { items: await withSelectedRelations(context, info, [["items"]], items), pagination };
  }

  @Authorized()
  @Query(() => TransactionType)
  async transaction(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("id", () => ID) id: string,
  ) {
    const row = await context.services.transactions.get(actor, id);
    const [transaction] = await withSelectedRelations(context, info, [[]], [row]);
    return transaction;
  }

  @Authorized()
  @Mutation(() => CreateTransactionPayload)
  async createTransaction(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("input", () => TransactionInput) input: TransactionInput,
  ) {
    const { transaction, created } = await context.services.transactions.create(actor, input);
    const [built] = await withSelectedRelations(context, info, [["transaction"]], [transaction]);
    return { transaction: built, created };
  }

  @Authorized()
  @Mutation(() => TransactionType)
  async updateTransaction(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => TransactionInput) input: TransactionInput,
  ) {
    const row = await context.services.transactions.update(actor, id, input);
    const [transaction] = await withSelectedRelations(context, info, [[]], [row]);
    return transaction;
  }

  @Authorized()
  @Mutation(() => TransactionType, { description: "Returns the deleted transaction." })
  async deleteTransaction(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("id", () => ID) id: string,
  ) {
    const row = await context.services.transactions.delete(actor, id);
    const [transaction] = await withSelectedRelations(context, info, [[]], [row]);
    return transaction;
  }

  @Authorized()
  @Mutation(() => TransferPayload)
  async createTransfer(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("input", () => TransferInput) input: TransferInput,
  ) {
    const { id, outflow, inflow } = await context.services.transactions.createTransfer(actor, input);
    const [outflowType, inflowType] = await withSelectedRelations(context, info, [["outflow"], ["inflow"]], [outflow, inflow]);
    return { id, outflow: outflowType, inflow: inflowType };
  }
}

/**
 * Builds the GraphQL objects of these transactions after reading ahead, in one statement, the
 * relations the query selects on them at any of `paths` (below the field being resolved); their fields
 * then hold plain values. `transfer` counts as selecting its other account.
 */
export async function withSelectedRelations(
  context: RequestContext,
  info: GraphQLResolveInfo,
  paths: string[][],
  rows: TransactionRow[],
): Promise<TransactionType[]> {
  const selected = new Set(paths.flatMap((path) => [...selectedFieldNames(info, path)]));
  const kinds: RelationKinds = {
    accounts: selected.has("account") || selected.has("transfer"),
    categories: selected.has("category"),
    merchants: selected.has("merchant"),
    tags: selected.has("tags"),
  };
  const readAhead = context.transactionRelations;
  await readAhead.readRelationsOf(rows, kinds);
  return rows.map((row) => new TransactionType(row, readAhead));
}
