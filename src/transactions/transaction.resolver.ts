import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { AccountType } from "../accounts/account.type";
import { CategoryType } from "../categories/category.type";
import { Access } from "../graphql/auth-checker";
import type { RequestContext } from "../graphql/context";
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

@Resolver(() => TransactionType)
export class TransactionResolver {
  @Authorized(Access.Read)
  @Query(() => TransactionPageType, { description: "Newest first." })
  async transactions(
    @Ctx() { services, actor }: RequestContext,
    @Arg("filter", () => TransactionFilterInput, { nullable: true }) filter?: TransactionFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    const { items, pagination } = await services.transactions.list(actor!, filter ?? {}, page, perPage);
    return { items: items.map((row) => new TransactionType(row)), pagination };
  }

  @Authorized(Access.Read)
  @Query(() => TransactionType)
  async transaction(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return new TransactionType(await services.transactions.get(actor!, id));
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
  async account(@Root() transaction: TransactionType, @Ctx() { loaders }: RequestContext) {
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
