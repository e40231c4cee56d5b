import type { GraphQLResolveInfo } from "graphql";
import { Arg, Authorized, Ctx, FieldResolver, ID, Info, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { formatMoney, railsDecimal } from "../money";
import { withSelectedRelations } from "../transactions";
import type { SecurityPriceRow, SecurityRow, TradeRow } from "./investment.repository";
import { PRICES_PER_CALL_MAX } from "./security-price.service";
import {
  InvestmentActivityType,
  SecurityFilterInput,
  SecurityPageType,
  SecurityPriceFilterInput,
  SecurityPriceInput,
  SecurityPricePageType,
  SecurityPricesRecordedType,
  SecurityPriceType,
  SecurityType,
  TradeFilterInput,
  TradeInput,
  TradePageType,
  TradeType,
} from "./investment.type";

function toSecurity(row: SecurityRow): SecurityType {
  return row;
}

function toPrice(row: SecurityPriceRow): SecurityPriceType {
  const { securityId, ticker, name, exchangeOperatingMic, ...rest } = row;
  return { ...rest, security: { id: securityId, ticker, name, exchangeOperatingMic } };
}

function toTrade(row: TradeRow): TradeType {
  return {
    id: row.id,
    date: row.date,
    amount: row.amount,
    currency: row.currency,
    name: row.name,
    notes: row.notes,
    qty: row.qty,
    price: row.price,
    fee: row.fee,
    investmentActivityLabel: row.investmentActivityLabel,
    account: { id: row.accountId, name: row.accountName, accountType: row.accountType },
    security: { id: row.securityId, ticker: row.ticker, name: row.securityName, exchangeOperatingMic: null },
    category: row.categoryId && row.categoryName ? { id: row.categoryId, name: row.categoryName } : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Securities and their prices, as the family sees them (those it holds or trades). */
@Resolver(() => SecurityType)
export class SecurityResolver {
  @Authorized()
  @Query(() => SecurityPageType, { description: "Securities the family's accounts hold or trade, by ticker." })
  async securities(
    @Ctx() { services, actor }: RequestContext,
    @Arg("filter", () => SecurityFilterInput, { nullable: true }) filter?: SecurityFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ): Promise<SecurityPageType> {
    const { items, pagination } = await services.trades.securities(actor!, filter ?? {}, page, perPage);
    return { items: items.map(toSecurity), pagination };
  }

  @Authorized()
  @Query(() => SecurityType)
  async security(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<SecurityType> {
    return toSecurity(await services.trades.security(actor!, id));
  }

  @Authorized()
  @Query(() => SecurityPricePageType, { description: "Prices of the securities the family holds or trades, newest day first." })
  async securityPrices(
    @Ctx() { services, actor }: RequestContext,
    @Arg("filter", () => SecurityPriceFilterInput, { nullable: true }) filter?: SecurityPriceFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ): Promise<SecurityPricePageType> {
    const { items, pagination } = await services.trades.prices(actor!, filter ?? {}, page, perPage);
    return { items: items.map(toPrice), pagination };
  }

  @Authorized()
  @Query(() => SecurityPriceType)
  async securityPrice(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<SecurityPriceType> {
    return toPrice(await services.trades.price(actor!, id));
  }
}

@Resolver(() => SecurityPriceType)
export class SecurityPriceResolver {
  @Authorized()
  @Mutation(() => SecurityPricesRecordedType, {
    description: `Records security prices (one per security, day and currency: a second replaces the first), at most ${PRICES_PER_CALL_MAX} per call, all or none; every manual investment account holding a security is revalued from the earliest day its price changed. Instance administrators only: prices are shared by every family.`,
  })
  async recordSecurityPrices(
    @Ctx() { services, actor }: RequestContext,
    @Arg("prices", () => [SecurityPriceInput]) prices: SecurityPriceInput[],
  ): Promise<SecurityPricesRecordedType> {
    const recorded = await services.securityPrices.recordFromApi(actor!, prices);
    return { ...recorded, prices: recorded.prices.map(toPrice) };
  }

  @FieldResolver(() => String, { description: 'The price formatted in its currency ("$150.25").' })
  formattedPrice(@Root() price: SecurityPriceType): string {
    return formatMoney(price.price, price.currency);
  }

  @FieldResolver(() => String, { description: 'The price with four decimals ("150.2500"), as upstream\'s price_amount.' })
  priceAmount(@Root() price: SecurityPriceType): string {
    return Number.isNaN(Number(price.price)) ? price.price : fixed4(price.price);
  }
}

function fixed4(value: string): string {
  const [whole, fraction = ""] = value.split(".");
  return `${whole}.${(fraction + "0000").slice(0, 4)}`;
}

/** Trades on the family's investment accounts (docs/investments.md). */
@Resolver(() => TradeType)
export class TradeResolver {
  @Authorized()
  @Query(() => TradePageType, { description: "The family's trades, newest first." })
  async trades(
    @Ctx() { services, actor }: RequestContext,
    @Arg("filter", () => TradeFilterInput, { nullable: true }) filter?: TradeFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ): Promise<TradePageType> {
    const { items, pagination } = await services.trades.trades(actor!, filter ?? {}, page, perPage);
    return { items: items.map(toTrade), pagination };
  }

  @Authorized()
  @Query(() => TradeType)
  async trade(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<TradeType> {
    return toTrade(await services.trades.trade(actor!, id));
  }

  @Authorized()
  @Mutation(() => TradeType, {
    description: "Records a trade (a buy, a sell, a dividend, interest, a fee…); the account's cash, holdings and balances follow at once.",
  })
  async createTrade(@Ctx() { services, actor }: RequestContext, @Arg("input", () => TradeInput) input: TradeInput): Promise<TradeType> {
    return toTrade(await services.trades.create(actor!, input));
  }

  @Authorized()
  @Mutation(() => InvestmentActivityType, {
    description:
      "Upstream's POST /trades: any of its types. A deposit or a withdrawal is a transaction on the account (a transfer with transferAccountId); every other type a trade.",
  })
  async createInvestmentActivity(
    @Ctx() context: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Arg("input", () => TradeInput) input: TradeInput,
  ): Promise<InvestmentActivityType> {
    const { services, actor } = context;
    const movement = await services.trades.cashMovement(actor!, input);
    if (!movement) return { trade: toTrade(await services.trades.create(actor!, input)), transaction: null, transfer: null };
    if (movement.transaction) {
      const { transaction } = await services.transactions.create(actor!, movement.transaction);
      const [built] = await withSelectedRelations(context, info, [["transaction"]], [transaction]);
      return { trade: null, transaction: built, transfer: null };
    }
    const { id, outflow, inflow } = await services.transactions.createTransfer(actor!, movement.transfer);
    const [outflowType, inflowType] = await withSelectedRelations(
      context,
      info,
      [
        ["transfer", "outflow"],
        ["transfer", "inflow"],
      ],
      [outflow, inflow],
    );
    return { trade: null, transaction: null, transfer: { id, outflow: outflowType, inflow: inflowType } };
  }

  @Authorized()
  @Mutation(() => TradeType)
  async updateTrade(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => TradeInput) input: TradeInput,
  ): Promise<TradeType> {
    return toTrade(await services.trades.update(actor!, id, input));
  }

  @Authorized()
  @Mutation(() => TradeType, { description: "Removes a trade; returns it." })
  async deleteTrade(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string): Promise<TradeType> {
    return toTrade(await services.trades.delete(actor!, id));
  }

  @FieldResolver(() => String, { description: 'The amount formatted in its currency ("$1,500.00").' })
  formattedAmount(@Root() trade: TradeType): string {
    return formatMoney(trade.amount, trade.currency);
  }

  @FieldResolver(() => String, { description: 'The price formatted in its currency ("$150.00").' })
  formattedPrice(@Root() trade: TradeType): string {
    return formatMoney(trade.price, trade.currency);
  }

  @FieldResolver(() => String, { description: 'The signed quantity as upstream\'s JSON writes a decimal ("10.0", "-4.0", "1.5").' })
  formattedQty(@Root() trade: TradeType): string {
    return railsDecimal(trade.qty);
  }
}
