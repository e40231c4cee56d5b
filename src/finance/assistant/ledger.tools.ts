import Decimal from "decimal.js";
import { z } from "zod";
import { convertTotals, rateBook, rateOn, type RateBook } from "../exchange-rates";
import { toAmountString } from "../money";
import type { BalanceOnRow } from "./finance.repository";
import type { ToolDefinition } from "./tool-definition";

/**
 * The tools that read the ledger's daily balances (docs/ledger.md): what each account held at the end
 * of a day, and how net worth moved between two days. The same rows as the balance sheet and /balances.
 */
const money = (value: Decimal.Value) => toAmountString(new Decimal(value));
// Not tools.ts' own: that module imports this one, so its values are not there yet when this one loads.
const isoDate = z.iso.date();

const getBalancesOnParameters = z.object({
  date: isoDate.describe("The day whose end-of-day balances are wanted, YYYY-MM-DD"),
});

const getNetWorthChangeParameters = z.object({
  start_date: isoDate.describe("First day of the period; net worth is taken at the end of the day before it"),
  end_date: isoDate.describe("Last day of the period; net worth is taken at the end of it"),
});

export const getBalancesOn: ToolDefinition<typeof getBalancesOnParameters> = {
  description:
    "Each account's balance at the end of a given day (null before the account's history starts), with its type and currency. " +
    "Liabilities are amounts owed, positive.",
  parameters: getBalancesOnParameters,
  async run(args, scope, data) {
    const rows = await data.finance.balancesOn(scope.familyId, args.date);
    return {
      date: args.date,
      accounts: rows.map((row) => ({
        name: row.name,
        type: row.accountType,
        classification: row.classification,
        balance: row.balance === null ? null : money(row.balance),
        currency: row.currency.trim(),
      })),
    };
  },
};

/**
 * Net worth in the family currency from these balances on `date`: another currency converted with the
 * newest rate on or before the day, an account without one left out and listed.
 */
function netWorthOf(rows: BalanceOnRow[], currency: string, book: RateBook, date: string) {
  const held = rows.flatMap((row) =>
    row.balance === null ? [] : [{ ...row, currency: row.currency.trim(), balance: String(row.balance) }],
  );
  return convertTotals(currency, held, (other) => rateOn(book, other, date));
}

export const getNetWorthChange: ToolDefinition<typeof getNetWorthChangeParameters> = {
  description:
    "Net worth (assets minus liabilities) at the start and at the end of a period, and the change, from the daily balances, in the " +
    "family currency: other currencies converted with the newest rate the family set on or before each day; accounts without one " +
    "are listed in unconverted_accounts and not counted.",
  parameters: getNetWorthChangeParameters,
  async run(args, scope, data) {
    if (args.start_date > args.end_date) return { error: "start_date is after end_date" };
    const before = new Date(Date.parse(`${args.start_date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const [start, end] = await Promise.all([before, args.end_date].map((date) => data.finance.balancesOn(scope.familyId, date)));
    const book = rateBook(await data.finance.exchangeRates(scope.familyId, scope.currency, args.end_date));
    const shape = (date: string, rows: BalanceOnRow[]) => {
      const totals = netWorthOf(rows, scope.currency, book, date);
      return {
        date,
        assets: money(totals.assets),
        liabilities: money(totals.liabilities),
        net_worth: money(totals.netWorth),
        converted: totals.conversions,
        unconverted_accounts: totals.unconverted.map((row) => ({ name: row.name, balance: money(row.balance), currency: row.currency })),
      };
    };
    const from = shape(before, start);
    const to = shape(args.end_date, end);
    return { currency: scope.currency, start: from, end: to, change: money(new Decimal(to.net_worth).minus(from.net_worth)) };
  },
};
