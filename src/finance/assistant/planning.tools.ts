import Decimal from "decimal.js";
import { z } from "zod";
import { toAmountString } from "../money";
import type { PlannedRecurringRow } from "../planning";
import type { ToolDefinition } from "./tool-definition";

/**
 * The tool that reads the family's recurring transactions (docs/planning.md): the bills, subscriptions
 * and salaries entered by hand or detected from history, and the bills due before a day, read by the
 * same query as GraphQL `upcomingBills`.
 */
const money = (value: Decimal.Value) => toAmountString(new Decimal(value));
// Not tools.ts' own: that module imports this one, so its values are not there yet when this one loads.
const isoDate = z.iso.date();
const MAX_RESULTS = 200;

const getRecurringTransactionsParameters = z.object({
  status: z.enum(["active", "inactive", "all"]).optional().describe("Which recurring transactions; default active"),
  due_before: isoDate
    .optional()
    .describe(
      "Only the bills (active, money out) expected from today through this day, YYYY-MM-DD, soonest first: " +
        "the month's last day for 'bills due this month'",
    ),
});

function entry(row: PlannedRecurringRow) {
  const amount = new Decimal(row.amount);
  return {
    name: row.name ?? row.merchantName ?? "(no name)",
    amount: money(amount.abs()),
    direction: amount.isNegative() ? "income" : "expense",
    currency: row.currency.trim(),
    status: row.status,
    next_expected_date: row.nextExpectedDate,
    expected_day_of_month: row.expectedDayOfMonth,
    last_occurrence_date: row.lastOccurrenceDate,
    occurrence_count: row.occurrenceCount,
    is_manual: row.manual,
    account: row.accountName,
    ...(row.expectedAmountMin !== null && row.expectedAmountMax !== null
      ? { expected_amount_range: [money(new Decimal(row.expectedAmountMin).abs()), money(new Decimal(row.expectedAmountMax).abs())] }
      : {}),
  };
}

/** Money out of the active rows, per currency: what the listed bills cost together. */
function moneyOutByCurrency(rows: PlannedRecurringRow[]): Record<string, string> {
  const totals = new Map<string, Decimal>();
  for (const row of rows) {
    const amount = new Decimal(row.amount);
    if (row.status !== "active" || amount.lte(0)) continue;
    const currency = row.currency.trim();
    totals.set(currency, (totals.get(currency) ?? new Decimal(0)).plus(amount));
  }
  return Object.fromEntries([...totals].sort(([a], [b]) => a.localeCompare(b)).map(([currency, sum]) => [currency, money(sum)]));
}

export const getRecurringTransactions: ToolDefinition<typeof getRecurringTransactionsParameters> = {
  description:
    "The user's recurring transactions (subscriptions, recurring bills, salaries), entered by hand or detected from three months " +
    "of history, with the expected amount, day of month and next expected date. Use it for 'what are my subscriptions?'. With " +
    "due_before it answers 'what bills are due this month / before the 15th?': the active money-out ones expected from today " +
    "through that day, soonest first. Amounts are positive; direction says money out (expense) or in (income). " +
    "money_out_by_currency sums the active money-out rows listed. recurring_known counts every recurring transaction stored: " +
    "0 means none has been entered or detected yet.",
  parameters: getRecurringTransactionsParameters,
  async run(args, scope, data) {
    if (args.due_before && args.due_before < scope.today) return { error: `due_before is before today (${scope.today})` };
    const known = (await data.finance.storedRecurring(scope.familyId, null, 0)).total;
    const status = args.due_before ? "active" : (args.status ?? "active");
    const { rows, total } = args.due_before
      ? await data.finance.upcomingBills(scope.familyId, scope.today, args.due_before).then((all) => ({ rows: all, total: all.length }))
      : await data.finance.storedRecurring(scope.familyId, status === "all" ? null : status, MAX_RESULTS);
    const listed = rows.slice(0, MAX_RESULTS);
    return {
      as_of_date: scope.today,
      ...(args.due_before ? { due_from: scope.today, due_before: args.due_before } : { status }),
      total_results: total,
      truncated: total > listed.length,
      recurring_transactions: listed.map(entry),
      money_out_by_currency: moneyOutByCurrency(listed),
      recurring_known: known,
    };
  },
};
