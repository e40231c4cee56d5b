import Decimal from "decimal.js";
import { z } from "zod";
import { convertTotals, rateBook, rateOn } from "../exchange-rates";
import { parseAmount, toAmountString } from "../money";
import type { TransactionFilter } from "../transactions";
import { magnitude } from "../transactions";
import type { GroupBy } from "./finance.repository";
import type { SubjectKind } from "./vocabulary";
import { getBalancesOn, getNetWorthChange } from "./ledger.tools";
import { getRecurringTransactions } from "./planning.tools";
import { getHoldings, summarizeTrades } from "./investment.tools";
import type { ToolData, ToolDefinition, ToolScope } from "./tool-definition";

export type { ToolData, ToolDefinition, ToolScope };

/**
 * The functions a model may call. Each one's parameters are a zod schema: it validates what the model
 * sends and is also the JSON schema the model is shown. Every tool reads one family's data only: the
 * family comes from the chat's owner, never from the arguments.
 */
export type ToolCallRecord = { name: string; arguments: Record<string, unknown>; result: Record<string, unknown> };

const isoDate = z.iso.date().describe("YYYY-MM-DD");
const names = (what: string) => z.array(z.string().min(1)).max(50).optional().describe(`${what} names, matched case-insensitively`);

const filterParameters = {
  search: z.string().max(200).optional().describe("Text to find in the transaction name, notes or merchant"),
  start_date: isoDate.optional().describe("First day included, YYYY-MM-DD"),
  end_date: isoDate.optional().describe("Last day included, YYYY-MM-DD"),
  amount: z
    .object({
      value: z.union([z.string(), z.number()]).describe("Amount to compare the absolute transaction amount with"),
      operator: z.enum(["equal", "greater_than", "less_than", "at_least", "at_most"]),
    })
    .optional(),
  type: z
    .enum(["income", "expense"])
    .optional()
    .describe("Only money in (income) or money out (expense); transfers between own accounts are neither"),
  accounts: names("Account"),
  categories: names("Category"),
  merchants: names("Merchant"),
  tags: names("Tag"),
};

const getTransactionsParameters = z.object({
  ...filterParameters,
  order: z.enum(["newest", "oldest", "largest", "smallest"]).optional().describe("Sort order; default newest"),
  page: z.number().int().min(1).optional(),
  per_page: z.number().int().min(1).max(50).optional().describe("Default 20"),
});

const summarizeTransactionsParameters = z.object({
  ...filterParameters,
  group_by: z
    .enum(["category", "merchant", "tag", "account", "month", "week"])
    .describe("Totals per category, merchant, tag, account, calendar month (YYYY-MM) or week (its Monday)"),
  limit: z.number().int().min(1).max(100).optional().describe("Groups returned, largest expense first; default 20"),
});

const getRecurringParameters = z.object({
  months: z.number().int().min(3).max(24).optional().describe("Months of history to look through, ending today; default 6"),
});

const getAccountsParameters = z.object({});

const getBalanceSheetParameters = z.object({
  months: z.number().int().min(1).max(24).optional().describe("Months of history, ending with the current month; default 12"),
});

const getIncomeStatementParameters = z.object({
  start_date: isoDate.optional().describe("First day included; default the first day of the current month"),
  end_date: isoDate.optional().describe("Last day included; default today"),
});

const money = (value: Decimal.Value) => toAmountString(new Decimal(value));

const getTransactions: ToolDefinition<typeof getTransactionsParameters> = {
  description:
    "Search the user's transactions (transfers between their own accounts excluded). Returns one page of transactions, " +
    "newest first unless ordered otherwise, and the totals of income and expense over every matching transaction.",
  parameters: getTransactionsParameters,
  async run(args, scope, data) {
    const filter = toFilter(args, scope);
    if ("error" in filter) return filter;
    const perPage = args.per_page ?? 20;
    const page = args.page ?? 1;
    const { rows, total, totals } = await data.finance.transactions(
      scope.familyId,
      filter.filter,
      args.order ?? "newest",
      perPage,
      (page - 1) * perPage,
    );
    return {
      ...matchedNames(filter.matched),
      transactions: rows.map((row) => ({
        date: row.date,
        name: row.name,
        amount: money(magnitude(row.amount)),
        type: row.kind,
        currency: row.currency.trim(),
        account: row.account,
        category: row.category,
        merchant: row.merchant,
        tags: row.tags ?? [],
      })),
      total_count: total,
      page,
      per_page: perPage,
      total_pages: Math.ceil(total / perPage),
      totals: totals.map((row) => ({
        currency: row.currency.trim(),
        income: money(row.income),
        expense: money(row.expense),
        net: money(new Decimal(row.income).minus(row.expense)),
        count: row.count,
        first_date: row.firstDate,
        last_date: row.lastDate,
      })),
    };
  },
};

const summarizeTransactions: ToolDefinition<typeof summarizeTransactionsParameters> = {
  description:
    "Totals of income and expense per category, merchant, tag, account, month or week for the matching transactions in the " +
    "family currency, largest expense first (transfers between own accounts excluded). Use it for top-N questions, " +
    "averages per month or week and trends.",
  parameters: summarizeTransactionsParameters,
  async run(args, scope, data) {
    const filter = toFilter(args, scope);
    if ("error" in filter) return filter;
    const groups = await data.finance.groups(scope.familyId, scope.currency, filter.filter, args.group_by as GroupBy);
    return {
      ...matchedNames(filter.matched),
      currency: scope.currency,
      group_by: args.group_by,
      group_count: groups.length,
      groups: groups.slice(0, args.limit ?? 20).map((group) => ({
        key: group.key,
        income: money(group.income),
        expense: money(group.expense),
        count: group.count,
      })),
    };
  },
};

const getRecurringPayments: ToolDefinition<typeof getRecurringParameters> = {
  description:
    "Recurring payments and subscriptions: money out to the same merchant (or under the same name) about once a month " +
    "for about the same amount, in at least 3 of the recent months. Family currency only.",
  parameters: getRecurringParameters,
  async run(args, scope, data) {
    const months = args.months ?? 6;
    const rows = await data.finance.recurring(scope.familyId, scope.currency, scope.today, months);
    const monthly = rows.reduce((sum, row) => sum.plus(row.lastAmount), new Decimal(0));
    return {
      currency: scope.currency,
      months_searched: months,
      recurring: rows.map((row) => ({
        name: row.name,
        category: row.category,
        months_seen: row.months,
        last_date: row.lastDate,
        last_amount: money(row.lastAmount),
        average_amount: money(row.averageAmount),
      })),
      monthly_total: money(monthly),
    };
  },
};

const getAccounts: ToolDefinition<typeof getAccountsParameters> = {
  description: "List the user's accounts with their current balances, types and currencies.",
  parameters: getAccountsParameters,
  async run(_args, scope, data) {
    const accounts = await data.accounts.list(scope.familyId);
    return {
      accounts: accounts.map((account) => ({
        name: account.name,
        type: account.accountType,
        classification: account.classification,
        balance: money(account.balance),
        currency: account.currency.trim(),
      })),
    };
  },
};

const getBalanceSheet: ToolDefinition<typeof getBalanceSheetParameters> = {
  description:
    "The user's assets, liabilities and net worth today, and their month-end history, in the family currency. Accounts in another " +
    "currency are converted with the newest exchange rate the family set on or before the day; those without one are listed in " +
    "unconverted_accounts and not counted.",
  parameters: getBalanceSheetParameters,
  async run(args, scope, data) {
    const accounts = await data.accounts.list(scope.familyId);
    const currencies = [...new Set([scope.currency, ...accounts.map((account) => account.currency.trim())])];
    const [book, histories] = await Promise.all([
      data.finance.exchangeRates(scope.familyId, scope.currency, scope.today).then(rateBook),
      data.finance.balanceHistory(scope.familyId, currencies, scope.today, args.months ?? 12),
    ]);
    // Each month end in the family currency, every currency converted with the rate in force that day (today for this month).
    const history = histories[0].map((own, index) => {
      const day = monthEnd(own.month) < scope.today ? monthEnd(own.month) : scope.today;
      const holdings = currencies.flatMap((currency, which) => [
        { currency, classification: "asset", balance: String(histories[which][index].assets) },
        { currency, classification: "liability", balance: String(histories[which][index].liabilities) },
      ]);
      return { month: own.month, totals: convertTotals(scope.currency, holdings, (currency) => rateOn(book, currency, day)) };
    });
    const current = history[history.length - 1].totals;
    const left = new Set(current.unconverted.map((holding) => holding.currency));
    return {
      currency: scope.currency,
      assets: money(current.assets),
      liabilities: money(current.liabilities),
      net_worth: money(current.netWorth),
      converted: current.conversions,
      history: history.map(({ month, totals }) => ({
        month,
        assets: money(totals.assets),
        liabilities: money(totals.liabilities),
        net_worth: money(totals.netWorth),
        ...(totals.unconverted.length
          ? { unconverted_currencies: [...new Set(totals.unconverted.map((holding) => holding.currency))] }
          : {}),
      })),
      unconverted_accounts: accounts
        .filter((account) => left.has(account.currency.trim()))
        .map((account) => ({
          name: account.name,
          classification: account.classification,
          balance: money(account.balance),
          currency: account.currency.trim(),
        })),
    };
  },
};

/** The last day of a "YYYY-MM" month. */
function monthEnd(month: string): string {
  const [year, index] = month.split("-").map(Number);
  return new Date(Date.UTC(year, index, 0)).toISOString().slice(0, 10);
}

const getIncomeStatement: ToolDefinition<typeof getIncomeStatementParameters> = {
  description:
    "Income and expense by category for a period, net income and savings rate (percent of income kept). " +
    "Transfers between the user's own accounts are excluded. Covers transactions in the family currency.",
  parameters: getIncomeStatementParameters,
  async run(args, scope, data) {
    const startDate = args.start_date ?? `${scope.today.slice(0, 7)}-01`;
    const endDate = args.end_date ?? scope.today;
    const rows = await data.finance.byCategory(scope.familyId, scope.currency, startDate, endDate);
    const side = (kind: "income" | "expense") => {
      const categories = rows.filter((row) => row.kind === kind);
      const total = categories.reduce((sum, row) => sum.plus(row.amount), new Decimal(0));
      return { total, by_category: categories.map((row) => ({ category: row.category, amount: money(row.amount), count: row.count })) };
    };
    const income = side("income");
    const expense = side("expense");
    const net = income.total.minus(expense.total);
    return {
      currency: scope.currency,
      start_date: startDate,
      end_date: endDate,
      income: { total: money(income.total), by_category: income.by_category },
      expense: { total: money(expense.total), by_category: expense.by_category },
      net_income: money(net),
      savings_rate: income.total.isZero() ? null : net.dividedBy(income.total).times(100).toDecimalPlaces(1).toFixed(1),
    };
  },
};

export const TOOLS = {
  get_transactions: getTransactions,
  summarize_transactions: summarizeTransactions,
  get_recurring_payments: getRecurringPayments,
  get_accounts: getAccounts,
  get_balance_sheet: getBalanceSheet,
  get_income_statement: getIncomeStatement,
  get_balances_on: getBalancesOn,
  get_net_worth_change: getNetWorthChange,
  get_recurring_transactions: getRecurringTransactions,
  get_holdings: getHoldings,
  summarize_trades: summarizeTrades,
} as const;

export type ToolName = keyof typeof TOOLS;

/** The tools as OpenAI-style function definitions. */
export function toolDefinitions(): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
  return Object.entries(TOOLS).map(([name, tool]) => {
    const { $schema: _schema, ...parameters } = z.toJSONSchema(tool.parameters as z.ZodType) as Record<string, unknown>;
    return { name, description: tool.description, parameters };
  });
}

/** Runs tools for one family and records every call, including refused ones, in order. */
export class ToolRunner {
  readonly calls: ToolCallRecord[] = [];

  constructor(
    private readonly scope: ToolScope,
    private readonly data: ToolData,
  ) {}

  /** `rawArguments` is what the model sent: a JSON text, or an object from the builtin assistant. */
  async call(name: string, rawArguments: string | Record<string, unknown>): Promise<Record<string, unknown>> {
    const args = typeof rawArguments === "string" ? parseArguments(rawArguments) : rawArguments;
    const result = args ? await this.run(name, args) : { error: "Arguments are not a JSON object" };
    // Malformed arguments are kept as sent, so the stored call shows what the model did.
    this.calls.push({ name, arguments: args ?? { raw: rawArguments }, result });
    return result;
  }

  private async run(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const tool = (TOOLS as Record<string, ToolDefinition<z.ZodType>>)[name];
    if (!tool) return { error: `Unknown function ${name}` };
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`);
      return { error: `Invalid arguments: ${problems.join("; ")}` };
    }
    return tool.run(parsed.data, this.scope, this.data);
  }
}

type FilterArguments = z.infer<typeof getTransactionsParameters> | z.infer<typeof summarizeTransactionsParameters>;

type NameMatch = { asked: string; kind: SubjectKind; names: string[] };

const NAME_KINDS = [
  ["accounts", "account"],
  ["categories", "category"],
  ["merchants", "merchant"],
  ["tags", "tag"],
] as const;

/**
 * A tool's filter arguments as the one transaction filter. Names are resolved against the family's own
 * (case-, plural- and typo-insensitive, with synonyms); a name that matches nothing is an error naming
 * the closest ones, so the caller can never get figures for something it did not ask about.
 */
function toFilter(args: FilterArguments, scope: ToolScope): { filter: TransactionFilter; matched: NameMatch[] } | { error: string } {
  const amount = args.amount ? parseAmount(args.amount.value) : null;
  if (amount && !amount.ok) return { error: `amount.value ${amount.reason}` };
  const filter: TransactionFilter = { search: args.search, startDate: args.start_date, endDate: args.end_date, type: args.type };
  if (amount?.ok) {
    const value = toAmountString(amount.value.abs());
    const operator = args.amount!.operator;
    if (operator === "equal" || operator === "at_least") filter.minMagnitude = value;
    if (operator === "equal" || operator === "at_most") filter.maxMagnitude = value;
    if (operator === "greater_than") filter.magnitudeAbove = value;
    if (operator === "less_than") filter.magnitudeBelow = value;
  }
  const matched: NameMatch[] = [];
  const problems: string[] = [];
  const ids: Record<SubjectKind, string[]> = { account: [], category: [], merchant: [], tag: [] };
  for (const [argument, kind] of NAME_KINDS) {
    for (const asked of args[argument] ?? []) {
      const found = scope.vocabulary.resolve(asked, kind);
      if (found.length === 0) {
        const closest = scope.vocabulary.closest(asked, 3, kind);
        problems.push(`no ${kind} named "${asked}"${closest.length ? ` (closest: ${closest.join(", ")})` : ""}`);
        continue;
      }
      ids[kind].push(...found.map((entry) => entry.id));
      if (found.some((entry) => entry.name !== asked)) matched.push({ asked, kind, names: found.map((entry) => entry.name) });
    }
  }
  if (problems.length) return { error: `Unknown names: ${problems.join("; ")}` };
  if (ids.account.length) filter.accountIds = ids.account;
  if (ids.category.length) filter.categoryIds = ids.category;
  if (ids.merchant.length) filter.merchantIds = ids.merchant;
  if (ids.tag.length) filter.tagIds = ids.tag;
  return { filter, matched };
}

/** Says which family names the arguments' names were read as, when they were not given exactly. */
function matchedNames(matched: NameMatch[]): Record<string, unknown> {
  return matched.length ? { names_matched: matched } : {};
}

function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
