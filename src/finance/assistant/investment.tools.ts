import Decimal from "decimal.js";
import { z } from "zod";
import { convertTotals, rateBook, rateOn } from "../exchange-rates";
import type { HeldRow } from "../investments";
import { INVESTED_ACCOUNT_TYPES } from "../ledger";
import { toAmountString } from "../money";
import type { ToolData, ToolDefinition, ToolScope } from "./tool-definition";

/**
 * The tools that read investments (docs/investments.md): what the family's investment accounts hold
 * and are worth on a day (the ledger's balances, cash plus holdings, and the holdings behind them),
 * and what its trades put in and took out. Securities are named by ticker (or name); one the family
 * neither holds nor trades is refused with the ones it has, never read as "all of them".
 */
const money = (value: Decimal.Value) => toAmountString(new Decimal(value));
// Not tools.ts' own: that module imports this one, so its values are not there yet when this one loads.
const isoDate = z.iso.date();
const tickers = z
  .array(z.string().trim().min(1).max(64))
  .max(20)
  .optional()
  .describe("Securities by ticker (AAPL, or AAPL|XNAS) or name, as the family holds or trades them; all of them when absent");

const getHoldingsParameters = z.object({
  date: isoDate.optional().describe("The day whose end the holdings are valued at, YYYY-MM-DD; default today"),
  tickers,
});

const summarizeTradesParameters = z.object({
  tickers,
  start_date: isoDate.optional().describe("First trade day included, YYYY-MM-DD; default the first trade"),
  end_date: isoDate.optional().describe("Last trade day included, YYYY-MM-DD; default today"),
});

type Security = { id: string; ticker: string | null; name: string | null };

/** The family's securities the asked tickers name, or an error naming those it has. */
async function resolveSecurities(asked: string[] | undefined, scope: ToolScope, data: ToolData) {
  if (!asked?.length) return { securities: null };
  const known = await data.finance.securities(scope.familyId);
  const found: Security[] = [];
  const missing: string[] = [];
  for (const wanted of asked) {
    const key = wanted.split("|")[0].trim().toLowerCase();
    const byTicker = known.filter((security) => security.ticker?.toLowerCase() === key);
    const byName = known.filter((security) => security.name?.toLowerCase() === key);
    const byWord = known.filter((security) => ` ${security.name?.toLowerCase() ?? ""} `.includes(` ${key} `));
    const matched = [byTicker, byName, byWord].find((list) => list.length > 0);
    if (matched) found.push(...matched.filter((security) => !found.some((seen) => seen.id === security.id)));
    else missing.push(wanted);
  }
  if (missing.length === 0) return { securities: found };
  const names = [...new Set(known.map((security) => security.ticker ?? security.name ?? security.id))];
  const have = names.length ? `they are: ${names.join(", ")}` : "it has none";
  return {
    error:
      `Unknown securities: ${missing.map((ticker) => `"${ticker}"`).join(", ")} ` +
      `${missing.length === 1 ? "is not one" : "are not ones"} the family holds or trades (${have})`,
    unknown_securities: missing,
    known_securities: names,
  };
}

const label = (security: { ticker: string | null; securityName: string | null }) => security.ticker ?? security.securityName ?? "security";

function holdingEntry(row: HeldRow) {
  const cost = row.costBasis === null ? null : new Decimal(row.costBasis);
  const quantity = new Decimal(row.quantity);
  const gain = cost === null ? null : new Decimal(row.value).minus(cost);
  return {
    account: row.account,
    ticker: label(row),
    name: row.securityName,
    quantity: quantity.toFixed(),
    price: row.price === null ? null : money(row.price),
    value: money(row.value),
    currency: row.currency,
    cost_basis: cost === null ? null : money(cost),
    average_cost: cost === null || quantity.isZero() ? null : money(cost.dividedBy(quantity).toDecimalPlaces(4, Decimal.ROUND_HALF_UP)),
    unrealized_gain: gain === null ? null : money(gain),
    unrealized_gain_percent:
      gain === null || cost!.isZero() ? null : gain.dividedBy(cost!).times(100).toDecimalPlaces(1, Decimal.ROUND_HALF_UP).toFixed(1),
    valued_on: row.date,
  };
}

/** Value, cost basis and unrealised gain of the holdings listed, per currency (those without a cost basis apart). */
function gainTotals(rows: HeldRow[]) {
  const totals = new Map<string, { value: Decimal; cost: Decimal; quantity: Decimal }>();
  let withoutCostBasis = 0;
  for (const row of rows) {
    if (row.costBasis === null) {
      withoutCostBasis += 1;
      continue;
    }
    const entry = totals.get(row.currency) ?? { value: new Decimal(0), cost: new Decimal(0), quantity: new Decimal(0) };
    totals.set(row.currency, {
      value: entry.value.plus(row.value),
      cost: entry.cost.plus(row.costBasis),
      quantity: entry.quantity.plus(row.quantity),
    });
  }
  const byCurrency = Object.fromEntries(
    [...totals].map(([currency, { value, cost, quantity }]) => [
      currency,
      {
        quantity: quantity.toFixed(),
        value: money(value),
        cost_basis: money(cost),
        unrealized_gain: money(value.minus(cost)),
        unrealized_gain_percent: cost.isZero() ? null : value.minus(cost).dividedBy(cost).times(100).toDecimalPlaces(1).toFixed(1),
      },
    ]),
  );
  return { gain_by_currency: byCurrency, holdings_without_cost_basis: withoutCostBasis };
}

export const getHoldings: ToolDefinition<typeof getHoldingsParameters> = {
  description:
    "The family's investment accounts at the end of a day (default today), from the ledger: each account's balance (cash plus " +
    "holdings), its cash and its holdings' value, and the portfolio's total in the family currency (other currencies converted " +
    "with the newest rate on or before the day; accounts without one listed in unconverted_accounts). Then each holding: " +
    "quantity, price, value, cost basis, average cost and unrealised gain (value minus cost basis), with their totals per " +
    "currency in gain_by_currency. Use it for 'what is my portfolio worth?' and 'what is my gain on AAPL?'. With tickers, " +
    "only those securities' holdings (a security sold out has none); the accounts and portfolio figures stay whole.",
  parameters: getHoldingsParameters,
  async run(args, scope, data) {
    const date = args.date ?? scope.today;
    const asked = await resolveSecurities(args.tickers, scope, data);
    if ("error" in asked) return asked;
    const ids = asked.securities ? asked.securities.map((security) => security.id) : null;
    const [balances, held, rates] = await Promise.all([
      data.finance.balancesOn(scope.familyId, date),
      data.finance.holdingsOn(scope.familyId, date, ids),
      data.finance.exchangeRates(scope.familyId, scope.currency, date),
    ]);
    const accounts = balances
      .filter((row) => (INVESTED_ACCOUNT_TYPES as readonly string[]).includes(row.accountType))
      .map((row) => ({ ...row, currency: row.currency.trim() }));
    const book = rateBook(rates);
    const total = (pick: (row: (typeof accounts)[number]) => string | null) =>
      convertTotals(
        scope.currency,
        accounts.flatMap((row) => (row.balance === null ? [] : [{ ...row, classification: "asset", balance: pick(row) ?? "0" }])),
        (currency) => rateOn(book, currency, date),
      );
    const [value, holdingsValue, cash] = [total((row) => row.balance), total((row) => row.holdingsValue), total((row) => row.cash)];
    return {
      as_of_date: date,
      currency: scope.currency,
      ...(asked.securities ? { securities: asked.securities.map((security) => security.ticker ?? security.name) } : {}),
      investment_accounts: accounts.map((row) => ({
        name: row.name,
        type: row.accountType,
        currency: row.currency,
        balance: row.balance === null ? null : money(row.balance),
        cash: row.cash === null ? null : money(row.cash),
        holdings_value: row.holdingsValue === null ? null : money(row.holdingsValue),
      })),
      portfolio: { value: value.assets, holdings_value: holdingsValue.assets, cash: cash.assets },
      converted: value.conversions,
      unconverted_accounts: value.unconverted.map((row) => ({ name: row.name, balance: money(row.balance), currency: row.currency })),
      holdings: held.map(holdingEntry),
      ...gainTotals(held),
    };
  },
};

export const summarizeTrades: ToolDefinition<typeof summarizeTradesParameters> = {
  description:
    "What the family's trades (buys and sells on its investment accounts) put in and took out, per security: buys, quantity " +
    "bought and bought_amount (the cash paid, fees included), sells, quantity sold and sold_amount (the cash received, after " +
    "fees), fees, and net_invested (bought_amount minus sold_amount). Use it for 'how much did I invest in VTI this year?'. " +
    "Amounts are in each trade's currency; totals_by_currency sums them.",
  parameters: summarizeTradesParameters,
  async run(args, scope, data) {
    if (args.start_date && args.end_date && args.start_date > args.end_date) return { error: "start_date is after end_date" };
    const asked = await resolveSecurities(args.tickers, scope, data);
    if ("error" in asked) return asked;
    const rows = await data.finance.tradeTotals(scope.familyId, {
      securityIds: asked.securities?.map((security) => security.id),
      startDate: args.start_date,
      endDate: args.end_date ?? scope.today,
    });
    const totals = new Map<string, { bought: Decimal; sold: Decimal; fees: Decimal }>();
    for (const row of rows) {
      const entry = totals.get(row.currency) ?? { bought: new Decimal(0), sold: new Decimal(0), fees: new Decimal(0) };
      totals.set(row.currency, {
        bought: entry.bought.plus(row.boughtAmount),
        sold: entry.sold.plus(row.soldAmount),
        fees: entry.fees.plus(row.fees),
      });
    }
    return {
      start_date: args.start_date ?? null,
      end_date: args.end_date ?? scope.today,
      ...(asked.securities ? { securities_asked: asked.securities.map((security) => security.ticker ?? security.name) } : {}),
      securities: rows.map((row) => ({
        ticker: label(row),
        name: row.securityName,
        currency: row.currency,
        buys: row.buys,
        bought_quantity: row.boughtQuantity,
        bought_amount: money(row.boughtAmount),
        sells: row.sells,
        sold_quantity: row.soldQuantity,
        sold_amount: money(row.soldAmount),
        fees: money(row.fees),
        net_invested: money(row.netAmount),
        first_trade: row.firstDate,
        last_trade: row.lastDate,
      })),
      totals_by_currency: Object.fromEntries(
        [...totals].map(([currency, { bought, sold, fees }]) => [
          currency,
          { bought_amount: money(bought), sold_amount: money(sold), fees: money(fees), net_invested: money(bought.minus(sold)) },
        ]),
      ),
    };
  },
};
