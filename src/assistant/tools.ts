import Decimal from "decimal.js";
import { z } from "zod";
import type { AccountRepository } from "../accounts/account.repository";
import { parseAmount, toAmountString } from "../money/money";
import type { FinanceRepository } from "./finance.repository";

/**
 * The functions a model may call. Each one's parameters are a zod schema: it validates what the model
 * sends and is also the JSON schema the model is shown. Every tool reads one family's data only: the
 * family comes from the chat's owner, never from the arguments.
 */
export type ToolScope = { familyId: string; currency: string; today: string };

export type ToolCallRecord = { name: string; arguments: Record<string, unknown>; result: Record<string, unknown> };

const isoDate = z.iso.date().describe("YYYY-MM-DD");
const names = (what: string) => z.array(z.string().min(1)).max(50).optional().describe(`${what} names, matched case-insensitively`);

const getTransactionsParameters = z.object({
  search: z.string().max(200).optional().describe("Text to find in the transaction name, notes or merchant"),
  start_date: isoDate.optional().describe("First day included, YYYY-MM-DD"),
  end_date: isoDate.optional().describe("Last day included, YYYY-MM-DD"),
  amount: z
    .object({
      value: z.union([z.string(), z.number()]).describe("Amount to compare the absolute transaction amount with"),
      operator: z.enum(["equal", "greater_than", "less_than", "at_least", "at_most"]),
    })
    .optional(),
  type: z.enum(["income", "expense"]).optional().describe("Only money in (income) or money out (expense)"),
  accounts: names("Account"),
  categories: names("Category"),
  merchants: names("Merchant"),
  tags: names("Tag"),
  order: z.enum(["newest", "oldest", "largest"]).optional().describe("Sort order; default newest"),
  page: z.number().int().min(1).optional(),
  per_page: z.number().int().min(1).max(50).optional().describe("Default 20"),
});

const getAccountsParameters = z.object({});

const getBalanceSheetParameters = z.object({
  months: z.number().int().min(1).max(24).optional().describe("Months of history, ending with the current month; default 12"),
});

const getIncomeStatementParameters = z.object({
  start_date: isoDate.optional().describe("First day included; default the first day of the current month"),
  end_date: isoDate.optional().describe("Last day included; default today"),
});

type ToolDefinition<Schema extends z.ZodType> = {
  description: string;
  parameters: Schema;
  run(args: z.infer<Schema>, scope: ToolScope, data: ToolData): Promise<Record<string, unknown>>;
};

export type ToolData = { finance: FinanceRepository; accounts: AccountRepository };

const money = (value: Decimal.Value) => toAmountString(new Decimal(value));

const getTransactions: ToolDefinition<typeof getTransactionsParameters> = {
  description:
    "Search the user's transactions (transfers between their own accounts excluded). Returns one page of transactions, " +
    "newest first unless ordered otherwise, and the totals of income and expense over every matching transaction.",
  parameters: getTransactionsParameters,
  async run(args, scope, data) {
    const amount = args.amount ? parseAmount(args.amount.value) : null;
    if (amount && !amount.ok) return { error: `amount.value ${amount.reason}` };
    const perPage = args.per_page ?? 20;
    const page = args.page ?? 1;
    const { rows, total, totals } = await data.finance.transactions(
      scope.familyId,
      {
        search: args.search,
        startDate: args.start_date,
        endDate: args.end_date,
        amount: amount?.ok ? { value: toAmountString(amount.value), operator: args.amount!.operator } : undefined,
        type: args.type,
        accounts: args.accounts,
        categories: args.categories,
        merchants: args.merchants,
        tags: args.tags,
      },
      args.order ?? "newest",
      perPage,
      (page - 1) * perPage,
    );
    return {
      transactions: rows.map((row) => ({
        date: row.date,
        name: row.name,
        amount: money(new Decimal(row.amount).abs()),
        type: new Decimal(row.amount).isNegative() ? "income" : "expense",
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
      })),
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
  description: "The user's assets, liabilities and net worth today, and their month-end history. Covers accounts in the family currency.",
  parameters: getBalanceSheetParameters,
  async run(args, scope, data) {
    const [history, accounts] = await Promise.all([
      data.finance.balanceHistory(scope.familyId, scope.currency, scope.today, args.months ?? 12),
      data.accounts.list(scope.familyId),
    ]);
    const current = history[history.length - 1];
    const netWorth = (row: { assets: string; liabilities: string }) => money(new Decimal(row.assets).minus(row.liabilities));
    return {
      currency: scope.currency,
      assets: money(current.assets),
      liabilities: money(current.liabilities),
      net_worth: netWorth(current),
      history: history.map((row) => ({
        month: row.month,
        assets: money(row.assets),
        liabilities: money(row.liabilities),
        net_worth: netWorth(row),
      })),
      accounts_in_other_currencies: accounts
        .filter((account) => account.currency.trim() !== scope.currency)
        .map((account) => ({ name: account.name, balance: money(account.balance), currency: account.currency.trim() })),
    };
  },
};

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
  get_accounts: getAccounts,
  get_balance_sheet: getBalanceSheet,
  get_income_statement: getIncomeStatement,
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

function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
