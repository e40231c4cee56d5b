import type { GraphQLResolveInfo } from "graphql";
import { Arg, Authorized, Ctx, FieldResolver, ID, Info, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { AccountType } from "../accounts/account.type";
import { CategoryType } from "../categories/category.type";
import { Access } from "../graphql/auth-checker";
import type { RequestContext } from "../graphql/context";
import type { RelationKinds } from "../graphql/loaders";
import { selectedFieldNames } from "../graphql/selection";
import { MerchantType } from "../merchants/merchant.type";
import { TagType } from "../tags/tag.type";
import {
  CreateTransactionPayload,
  TransactionFilterInput,
  TransactionInput,
  TransactionPageType,
  TransactionType,
  TransferInput,
  TransferPayload,
  TransferType,
} from "./transaction.type";
import type { TransactionRow } from "./transaction.repository";

@Resolver(() => TransactionType)
export class TransactionResolver {
  @Authorized(Access.Read)
  @Query(() => TransactionPageType, { description: "Newest first." })
  async transactions(
    @Ctx() context: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Arg("filter", () => TransactionFilterInput, { nullable: true }) filter?: TransactionFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, pagination } = await context.services.transactions.list(context.actor!, filter ?? {}, page, perPage);
    await prefetchSelectedRelations(context, info, ["items"], items);
    return { items: items.map((row) => new TransactionType(row)), pagination };
  }

  @Authorized(Access.Read)
  @Query(() => TransactionType)
  async transaction(@Ctx() context: RequestContext, @Info() info: GraphQLResolveInfo, @Arg("id", () => ID) id: string) {
    const row = await context.services.transactions.get(context.actor!, id);
    await prefetchSelectedRelations(context, info, [], [row]);
    return new TransactionType(row);
  }

  @Authorized(Access.Write)
  @Mutation(() => CreateTransactionPayload)
  async createTransaction(@Ctx() { services, actor }: RequestContext, @Arg("input", () => TransactionInput) input: TransactionInput) {
    const { transaction, created } = await services.transactions.create(actor!, input);
    return { transaction: new TransactionType(transaction), created };
  }

  @Authorized(Access.Write)
  @Mutation(() => TransactionType)
  async updateTransaction(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => TransactionInput) input: TransactionInput,
  ) {
    return new TransactionType(await services.transactions.update(actor!, id, input));
  }

  @Authorized(Access.Write)
  @Mutation(() => TransactionType, { description: "Returns the deleted transaction." })
  async deleteTransaction(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return new TransactionType(await services.transactions.delete(actor!, id));
  }

  @Authorized(Access.Write)
  @Mutation(() => TransferPayload)
  async createTransfer(@Ctx() { services, actor }: RequestContext, @Arg("input", () => TransferInput) input: TransferInput) {
    const { id, outflow, inflow } = await services.transactions.createTransfer(actor!, input);
    return { id, outflow: new TransactionType(outflow), inflow: new TransactionType(inflow) };
  }

  @FieldResolver(() => AccountType)
  account(@Root() transaction: TransactionType, @Ctx() { loaders }: RequestContext) {
    return loaders.account(transaction.accountId);
  }

  @FieldResolver(() => CategoryType, { nullable: true })
  category(@Root() transaction: TransactionType, @Ctx() { loaders }: RequestContext) {
    return transaction.categoryId ? loaders.category(transaction.categoryId) : null;
  }

  @FieldResolver(() => MerchantType, { nullable: true })
  merchant(@Root() transaction: TransactionType, @Ctx() { loaders }: RequestContext) {
    return transaction.merchantId ? loaders.merchant(transaction.merchantId) : null;
  }

  @FieldResolver(() => [TagType])
  tags(@Root() transaction: TransactionType, @Ctx() { loaders }: RequestContext) {
    return loaders.tagsOfTransaction(transaction.id);
  }
}

@Resolver(() => TransferType)
export class TransferResolver {
  @FieldResolver(() => AccountType, { description: "The account on the other side of the transfer." })
  otherAccount(@Root() transfer: TransferType, @Ctx() { loaders }: RequestContext) {
    return loaders.account(transfer.otherAccountId);
  }
}

/**
 * Reads ahead, in one statement, the relations the query selects on these transactions, so the field
 * resolvers below answer from memory. `transfer` counts as selecting its other account.
 */
async function prefetchSelectedRelations(context: RequestContext, info: GraphQLResolveInfo, path: string[], rows: TransactionRow[]) {
  const selected = selectedFieldNames(info, path);
  const kinds: RelationKinds = {
    accounts: selected.has("account") || selected.has("transfer"),
    categories: selected.has("category"),
    merchants: selected.has("merchant"),
    tags: selected.has("tags"),
  };
  await context.loaders.prefetchRelationsOf(rows, kinds);
}
