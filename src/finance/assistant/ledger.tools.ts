import Decimal from "decimal.js";
import { z } from "zod";
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

/** Net worth in the family currency from these balances: assets less liabilities, other currencies left out. */
function netWorthOf(rows: BalanceOnRow[], currency: string): { assets: Decimal; liabilities: Decimal } {
  let assets = new Decimal(0);
  let liabilities = new Decimal(0);
  for (const row of rows) {
    if (row.currency.trim() !== currency || row.balance === null) continue;
    if (row.classification === "liability") liabilities = liabilities.plus(row.balance);
    else assets = assets.plus(row.balance);
  }
  return { assets, liabilities };
}

export const getNetWorthChange: ToolDefinition<typeof getNetWorthChangeParameters> = {
  description:
    "Net worth (assets minus liabilities) at the start and at the end of a period, and the change, from the daily balances. " +
    "Covers accounts in the family currency.",
  parameters: getNetWorthChangeParameters,
  async run(args, scope, data) {
    if (args.start_date > args.end_date) return { error: "start_date is after end_date" };
    const before = new Date(Date.parse(`${args.start_date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const [start, end] = await Promise.all([before, args.end_date].map((date) => data.finance.balancesOn(scope.familyId, date)));
    const shape = (date: string, rows: BalanceOnRow[]) => {
      const { assets, liabilities } = netWorthOf(rows, scope.currency);
      return { date, assets: money(assets), liabilities: money(liabilities), net_worth: money(assets.minus(liabilities)) };
    };
    const from = shape(before, start);
    const to = shape(args.end_date, end);
    return { currency: scope.currency, start: from, end: to, change: money(new Decimal(to.net_worth).minus(from.net_worth)) };
  },
};
