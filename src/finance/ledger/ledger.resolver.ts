import type { GraphQLFieldResolver, GraphQLObjectType, GraphQLSchema } from "graphql";
import { SafeIntResolver } from "graphql-scalars";
import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CalendarDateScalar } from "../money";
import type { AccountRow } from "../accounts";
import { AccountType } from "../accounts";
import { formatMoney, toSignedMinorUnits } from "../money";
import { balanceFigures, flowsFactorOf } from "./balance.figures";
import type { BalanceRow } from "./ledger.repository";
import {
  BalanceFigureEnum,
  BalanceFilterInput,
  BalancePageType,
  BalancePointType,
  BalanceType,
  CreateValuationPayload,
  NetWorthPointType,
  SeriesIntervalEnum,
  ValuationFilterInput,
  ValuationInput,
  ValuationPageType,
  ValuationType,
} from "./ledger.type";
import type { ValuationRow } from "./valuation.repository";

/**
 * An instance of BalanceType, not a plain object: its field resolvers (`formatted`, `cents`, thirty per
 * row on a REST page) then receive it as it is, where type-graphql copies a plain root into a new
 * instance for each call (3,000 copies for a page of 100 rows).
 */
function toBalance(row: BalanceRow): BalanceType {
  return Object.assign(new BalanceType(), {
    id: row.id,
    date: row.date,
    currency: row.currency,
    flowsFactor: flowsFactorOf(row.classification),
    ...balanceFigures(row),
    account: { id: row.accountId, name: row.accountName, accountType: row.accountType },
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  });
}

function toValuation(row: ValuationRow): ValuationType {
  const { accountId, accountName, accountType, ...rest } = row;
  return { ...rest, account: { id: accountId, name: accountName, accountType } };
}

@Resolver(() => BalanceType)
export class BalanceResolver {
  @Authorized()
  @Query(() => BalancePageType, { description: "Daily balance rows of the family's accounts, newest day first." })
  async balances(
    @Ctx() { services, actor }: RequestContext,
    @Arg("filter", () => BalanceFilterInput, { nullable: true }) filter?: BalanceFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ): Promise<BalancePageType> {
    const { items, pagination } = await services.balances.list(actor!, filter ?? {}, page, perPage);
    return { items: items.map(toBalance), pagination };
  }

  @Authorized()
  @Query(() => BalanceType)
  async balance(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<BalanceType> {
    return toBalance(await services.balances.get(actor!, id));
  }

  @Authorized()
  @Query(() => [NetWorthPointType], {
    description:
      "Net worth at the end of each interval from `from` (default: a year before `to`) to `to` (default: today), in the family's currency: " +
      "other currencies converted with the rate in force that day, and a currency without one left as its own point, named on the family's.",
  })
  async netWorthSeries(
    @Ctx() { services, actor }: RequestContext,
    @Arg("from", () => CalendarDateScalar, { nullable: true }) from?: string,
    @Arg("to", () => CalendarDateScalar, { nullable: true }) to?: string,
    @Arg("interval", () => SeriesIntervalEnum, { defaultValue: SeriesIntervalEnum.MONTH }) interval?: SeriesIntervalEnum,
  ) {
    const points = await services.balances.netWorthSeries(actor!, from, to, interval ?? SeriesIntervalEnum.MONTH);
    return services.exchangeRates.series(actor!.familyId, points);
  }

  @FieldResolver(() => String, { description: 'A figure formatted in the row\'s currency ("$1,234.50").' })
  formatted(@Root() balance: BalanceType, @Arg("figure", () => BalanceFigureEnum) figure: BalanceFigureEnum): string {
    return formattedFigure(balance, figure);
  }

  @FieldResolver(() => SafeIntResolver, { description: "A figure in minor units, signed." })
  cents(@Root() balance: BalanceType, @Arg("figure", () => BalanceFigureEnum) figure: BalanceFigureEnum): number {
    return figureCents(balance, figure);
  }
}

const formattedFigure = (balance: BalanceType, figure: BalanceFigureEnum) => formatMoney(balance[figure], balance.currency);
const figureCents = (balance: BalanceType, figure: BalanceFigureEnum) => toSignedMinorUnits(balance[figure], balance.currency);

/**
 * Balance's `formatted` and `cents` resolved by plain synchronous functions, past TypeGraphQL's
 * handler. A REST page of balances asks for both of every figure: 3,000 fields for 100 rows. The
 * handler collects each call's arguments through an async validation (promises on every field,
 * each one tracked by async hooks), which cost several times the page's SQL; the figures need none
 * of it (an enum argument graphql-js has coerced already, no middleware, no field authorization).
 * The field resolvers above declare the fields and do the same.
 */
export function resolveBalanceFiguresDirectly(schema: GraphQLSchema): void {
  const fields = (schema.getType("Balance") as GraphQLObjectType<BalanceType>).getFields();
  const direct =
    (figureOf: (balance: BalanceType, figure: BalanceFigureEnum) => unknown): GraphQLFieldResolver<BalanceType, unknown> =>
    (balance, args: { figure?: BalanceFigureEnum }) =>
      figureOf(balance, args.figure!);
  fields.formatted.resolve = direct(formattedFigure);
  fields.cents.resolve = direct(figureCents);
}

@Resolver(() => AccountType)
export class AccountHistoryResolver {
  @FieldResolver(() => [BalancePointType], {
    description:
      "The balance at the end of each interval from `from` (default: a year before `to`) to `to` (default: today); none before the account's first day.",
  })
  balanceHistory(
    @Ctx() { services, actor }: RequestContext,
    @Root() account: AccountRow,
    @Arg("from", () => CalendarDateScalar, { nullable: true }) from?: string,
    @Arg("to", () => CalendarDateScalar, { nullable: true }) to?: string,
    @Arg("interval", () => SeriesIntervalEnum, { defaultValue: SeriesIntervalEnum.MONTH }) interval?: SeriesIntervalEnum,
  ) {
    return services.balances.history(actor!, account.id, from, to, interval ?? SeriesIntervalEnum.MONTH);
  }
}

@Resolver(() => ValuationType)
export class ValuationResolver {
  @Authorized()
  @Query(() => ValuationPageType, { description: "The family's valuations, anchors included, newest first." })
  async valuations(
    @Ctx() { services, actor }: RequestContext,
    @Arg("filter", () => ValuationFilterInput, { nullable: true }) filter?: ValuationFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ): Promise<ValuationPageType> {
    const { items, pagination } = await services.valuations.list(actor!, filter ?? {}, page, perPage);
    return { items: items.map(toValuation), pagination };
  }

  @Authorized()
  @Query(() => ValuationType)
  async valuation(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<ValuationType> {
    return toValuation(await services.valuations.get(actor!, id));
  }

  @Authorized()
  @Mutation(() => CreateValuationPayload, {
    description:
      "Records the account's balance at the end of a day (a reconciliation); a day that already has a valuation gets it updated.",
  })
  async createValuation(
    @Ctx() { services, actor }: RequestContext,
    @Arg("input", () => ValuationInput) input: ValuationInput,
    @Arg("upsert", () => Boolean, { nullable: true }) upsert?: boolean,
  ): Promise<CreateValuationPayload> {
    const { valuation, created } = await services.valuations.create(actor!, input);
    return { valuation: toValuation(valuation), created, upserted: Boolean(upsert ?? input.upsert) && !created };
  }

  @Authorized()
  @Mutation(() => ValuationType)
  async updateValuation(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => ValuationInput) input: ValuationInput,
  ): Promise<ValuationType> {
    return toValuation(await services.valuations.update(actor!, id, input));
  }

  @Authorized()
  @Mutation(() => ValuationType, { description: "Removes a reconciliation (anchors stay); returns it." })
  async deleteValuation(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<ValuationType> {
    return toValuation(await services.valuations.delete(actor!, id));
  }

  @FieldResolver(() => String, { description: 'The amount formatted in its currency ("$1,234.50").' })
  formattedAmount(@Root() valuation: ValuationType): string {
    return formatMoney(valuation.amount, valuation.currency);
  }
}
