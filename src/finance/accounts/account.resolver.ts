import { SafeIntResolver } from "graphql-scalars";
import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { cashPart } from "../ledger";
import { formatMoney, toSignedMinorUnits } from "../money";
import type { AccountRow } from "./account.repository";
import { AccountInput, AccountPageType, AccountType, BalanceSheetType } from "./account.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver(() => AccountType)
export class AccountResolver {
  @Authorized()
  @Query(() => [AccountType], { description: "The family's accounts ordered by name." })
  accounts(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.accounts.list(actor);
  }

  @Authorized()
  @Query(() => AccountPageType, { description: "The family's accounts ordered by name, a page at a time." })
  accountPage(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ) {
    return services.accounts.page(actor, page, perPage);
  }

  @Authorized()
  @Query(() => BalanceSheetType)
  async balanceSheet(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor): Promise<BalanceSheetType> {
    const sheet = await services.accounts.balanceSheet(actor);
    const shape = (totals: { currency: string; netWorth: string; assets: string; liabilities: string }) => {
      const money = (amount: string) => ({ amount, currency: totals.currency, formatted: formatMoney(amount, totals.currency) });
      return {
        currency: totals.currency,
        netWorth: money(totals.netWorth),
        assets: money(totals.assets),
        liabilities: money(totals.liabilities),
      };
    };
    return {
      ...shape(sheet),
      complete: sheet.unconvertedAccounts.length === 0,
      conversions: sheet.conversions,
      unconvertedAccounts: sheet.unconvertedAccounts as unknown as AccountType[],
      otherCurrencies: sheet.otherCurrencies.map(shape),
    };
  }

  @FieldResolver(() => String, { description: 'The balance formatted in its currency ("$1,234.50").' })
  formattedBalance(@Root() row: AccountRow): string {
    return formatMoney(row.balance, row.currency);
  }

  @FieldResolver(() => SafeIntResolver, { description: "The balance in minor units, signed as stored." })
  balanceCents(@Root() row: AccountRow): number {
    return toSignedMinorUnits(row.balance, row.currency);
  }

  // As upstream: a house's, a car's or a loan's value is not cash; an investment's holdings are not either.
  @FieldResolver(() => String, {
    description: "The cash part of the balance, formatted: none of a property's, vehicle's or loan's value, nor an investment's holdings.",
  })
  cashBalance(@Root() row: AccountRow): string {
    return formatMoney(cashPart(row.accountType, row.balance, row.cashBalance), row.currency);
  }

  @FieldResolver(() => SafeIntResolver, { description: "cashBalance in minor units." })
  cashBalanceCents(@Root() row: AccountRow): number {
    return toSignedMinorUnits(cashPart(row.accountType, row.balance, row.cashBalance), row.currency);
  }

  @FieldResolver(() => String, { description: "active: accounts here are never disabled or pending deletion." })
  status(): string {
    return "active";
  }

  @FieldResolver(() => String, { nullable: true, description: "The institution of the bank-provider account feeding it, if any." })
  async institutionName(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Root() row: AccountRow,
  ): Promise<string | null> {
    // The account routes read it with the account; an account reached as a relation looks it up.
    if (row.institutionName !== undefined) return row.institutionName;
    return (await services.accounts.get(actor, row.id)).institutionName ?? null;
  }

  @Authorized()
  @Query(() => AccountType)
  account(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.accounts.get(actor, id);
  }

  @Authorized()
  @Mutation(() => AccountType)
  createAccount(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input", () => AccountInput) input: AccountInput) {
    return services.accounts.create(actor, input);
  }

  @Authorized()
  @Mutation(() => AccountType)
  updateAccount(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => AccountInput) input: AccountInput,
  ) {
    return services.accounts.update(actor, id, input);
  }

  @Authorized()
  @Mutation(() => AccountType, { description: "Deletes the account and its transactions." })
  deleteAccount(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.accounts.delete(actor, id);
  }
}
