import Decimal from "decimal.js";
import { formatMoney } from "../money/money";
import type { AssistantProvider, AssistantRequest, FamilyContext } from "./provider";
import type { ToolRunner } from "./tools";

/**
 * The assistant that needs no model server: it recognises the common questions in plain English,
 * answers them by calling the same tools a model would (so the stored tool calls are real), and says
 * so plainly when it does not understand. Deterministic: the same question on the same data gives the
 * same answer.
 */
export class BuiltinProvider implements AssistantProvider {
  async respond(request: AssistantRequest): Promise<{ content: string }> {
    const question = request.history[request.history.length - 1]?.content ?? "";
    // Nothing to stream: the answer is complete the moment it exists.
    return { content: await answer(question, request.context, request.tools) };
  }
}

type Period = { start: string; end: string; label: string };

type TotalsEntry = { currency: string; income: string; expense: string; net: string; count: number };
type TransactionEntry = { date: string; name: string; amount: string; type: string; currency: string; category: string | null };

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const MONTH_NAMES = MONTHS.map((month) => month.charAt(0).toUpperCase() + month.slice(1));

const EXAMPLES = [
  "How much did I spend on groceries last month?",
  "How much did I spend at Amazon this year?",
  "What was my income in March?",
  "What were my largest expenses this month?",
  "Show my recent transactions",
  "What are my account balances?",
  "What is my net worth?",
  "Income vs expenses last month",
];

export const NOT_UNDERSTOOD = [
  "Sorry, I don't understand that question. I am the built-in assistant and I can answer questions like:",
  "",
  ...EXAMPLES.map((example) => `- ${example}`),
].join("\n");

async function answer(question: string, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const text = normalize(question);
  const has = (pattern: RegExp) => pattern.test(text);
  const period = parsePeriod(text, context.today);

  if (has(/\bnet worth\b|\bassets\b|\bliabilit(y|ies)\b|\bbalance sheet\b|\bwhat (am i|i am) worth\b/)) return netWorth(context, tools);
  if (
    has(
      /\bincome (vs|versus|and|against|compared to) (expenses?|spending)\b|\bsavings rate\b|\bcash ?flow\b|\bnet income\b|\bincome statement\b|\b(spending|expenses?) by category\b|\bbreakdown\b|\bhow much did i save\b/,
    )
  )
    return incomeStatement(context, tools, period ?? currentMonth(context.today));
  if (has(/\b(largest|biggest|top|most expensive|highest)\b/) && has(/\b(expenses?|purchases?|transactions?|spending|payments?|costs?)\b/))
    return largestExpenses(tools, period ?? currentMonth(context.today), countIn(text) ?? 5);
  if (has(/\b(recent|latest|newest)\b.*\btransactions?\b|\blast \d+ transactions?\b|\b(show|list)( me)? my transactions\b/))
    return recentTransactions(tools, period, countIn(text) ?? 10);
  if (has(/\bbalances?\b|\bmy accounts\b|\bhow much (money )?do i have\b|\bwhat accounts\b/)) return balances(tools);
  const categories = matches(text, context.categories, categoryVariants);
  const merchants = matches(text, context.merchants, (name) => [normalize(name).trim()]);
  if (has(/\b(spend|spent|spending|expenses?|cost|costs|paid|pay)\b/) && !has(/\bpaid me\b/))
    return totals(context, tools, "expense", period ?? currentMonth(context.today), categories, merchants);
  if (has(/\b(income|earn|earned|earnings|made|received|paid me|salary)\b/))
    return totals(context, tools, "income", period ?? currentMonth(context.today), categories, merchants);
  return NOT_UNDERSTOOD;
}

// ---------------------------------------------------------------------------------------------------
// Answers

async function totals(
  context: FamilyContext,
  tools: ToolRunner,
  type: "income" | "expense",
  period: Period,
  categories: string[],
  merchants: string[],
): Promise<string> {
  const args: Record<string, unknown> = { type, start_date: period.start, end_date: period.end, order: "largest", per_page: 3 };
  if (categories.length) args.categories = categories;
  if (merchants.length) args.merchants = merchants;
  const result = await tools.call("get_transactions", args);
  const entry = familyTotals(result, context.currency);
  const subject = [categories.length ? `on ${categories.join(" and ")}` : "", merchants.length ? `at ${merchants.join(" and ")}` : ""]
    .filter(Boolean)
    .join(" ");
  const where = subject ? ` ${subject}` : "";
  if (!entry || entry.count === 0)
    return type === "expense" ? `I found no spending${where} ${period.label}.` : `I found no income${where} ${period.label}.`;
  const amount = formatMoney(type === "expense" ? entry.expense : entry.income, context.currency);
  const count = `${entry.count} transaction${entry.count === 1 ? "" : "s"}`;
  const lines =
    type === "expense"
      ? [`You spent **${amount}**${where} ${period.label}, across ${count}.`]
      : [`Your income${where} ${period.label} was **${amount}**, across ${count}.`];
  const largest = (result.transactions as TransactionEntry[]).filter((row) => row.currency === context.currency);
  if (largest.length > 1) {
    lines.push("", type === "expense" ? "The largest were:" : "The largest were:");
    for (const row of largest) lines.push(`- ${row.date} · ${row.name}: ${formatMoney(row.amount, row.currency)}`);
  }
  lines.push(...otherCurrencies(result, context.currency, type));
  return lines.join("\n");
}

async function largestExpenses(tools: ToolRunner, period: Period, count: number): Promise<string> {
  const result = await tools.call("get_transactions", {
    type: "expense",
    start_date: period.start,
    end_date: period.end,
    order: "largest",
    per_page: Math.min(count, 20),
  });
  const rows = result.transactions as TransactionEntry[];
  if (rows.length === 0) return `I found no expenses ${period.label}.`;
  return [
    `Your largest expenses ${period.label}:`,
    "",
    ...rows.map(
      (row, index) =>
        `${index + 1}. **${formatMoney(row.amount, row.currency)}** · ${row.name}${row.category ? ` (${row.category})` : ""}, ${row.date}`,
    ),
  ].join("\n");
}

async function recentTransactions(tools: ToolRunner, period: Period | null, count: number): Promise<string> {
  const args: Record<string, unknown> = { order: "newest", per_page: Math.min(count, 20) };
  if (period) Object.assign(args, { start_date: period.start, end_date: period.end });
  const result = await tools.call("get_transactions", args);
  const rows = result.transactions as TransactionEntry[];
  if (rows.length === 0) return period ? `I found no transactions ${period.label}.` : "You have no transactions yet.";
  return [
    `Your ${rows.length} most recent transactions${period ? ` ${period.label}` : ""}:`,
    "",
    "| Date | Name | Amount |",
    "| --- | --- | ---: |",
    ...rows.map((row) => `| ${row.date} | ${row.name} | ${row.type === "income" ? "+" : "−"}${formatMoney(row.amount, row.currency)} |`),
  ].join("\n");
}

async function balances(tools: ToolRunner): Promise<string> {
  const result = await tools.call("get_accounts", {});
  const accounts = result.accounts as Array<{ name: string; balance: string; currency: string; classification: string }>;
  if (accounts.length === 0) return "You have no accounts yet.";
  const lines = ["Your account balances:", ""];
  for (const account of accounts)
    lines.push(
      `- ${account.name}: **${formatMoney(account.balance, account.currency)}**${account.classification === "liability" ? " owed" : ""}`,
    );
  return lines.join("\n");
}

async function netWorth(context: FamilyContext, tools: ToolRunner): Promise<string> {
  const result = await tools.call("get_balance_sheet", { months: 12 });
  const history = result.history as Array<{ month: string; net_worth: string }>;
  const money = (value: unknown) => formatMoney(String(value), context.currency);
  const lines = [
    `Your net worth is **${money(result.net_worth)}**: assets of ${money(result.assets)} minus liabilities of ${money(result.liabilities)}.`,
  ];
  if (history.length > 1) {
    const first = history[0];
    const change = new Decimal(String(result.net_worth)).minus(first.net_worth);
    const direction = change.isNegative() ? "down" : "up";
    lines.push(`That is ${direction} ${money(change.abs().toFixed())} since the end of ${monthLabel(first.month)}.`);
  }
  return lines.join(" ");
}

async function incomeStatement(context: FamilyContext, tools: ToolRunner, period: Period): Promise<string> {
  const result = await tools.call("get_income_statement", { start_date: period.start, end_date: period.end });
  const money = (value: unknown) => formatMoney(String(value), context.currency);
  const income = result.income as { total: string };
  const expense = result.expense as { total: string; by_category: Array<{ category: string; amount: string }> };
  const lines = [
    `${capitalize(period.label)} you earned **${money(income.total)}** and spent **${money(expense.total)}**, ` +
      `so your net income is **${money(result.net_income)}**` +
      (result.savings_rate === null ? "." : ` (a savings rate of ${String(result.savings_rate)}%).`),
  ];
  if (expense.by_category.length) {
    lines.push("", "Spending by category:");
    for (const row of expense.by_category) lines.push(`- ${row.category}: ${money(row.amount)}`);
  }
  return lines.join("\n");
}

function familyTotals(result: Record<string, unknown>, currency: string): TotalsEntry | undefined {
  return (result.totals as TotalsEntry[] | undefined)?.find((entry) => entry.currency === currency);
}

function otherCurrencies(result: Record<string, unknown>, currency: string, type: "income" | "expense"): string[] {
  const others = ((result.totals as TotalsEntry[] | undefined) ?? []).filter((entry) => entry.currency !== currency);
  return others.map(
    (entry) => `Also ${formatMoney(type === "expense" ? entry.expense : entry.income, entry.currency)} in ${entry.currency}.`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Reading the question

function normalize(text: string): string {
  return ` ${text
    .toLowerCase()
    .replace(/[\u2018\u2019']/g, "")
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9\s-]/g, " ")
    .replace(/\s+/g, " ")
    .trim()} `;
}

function categoryVariants(name: string): string[] {
  const base = normalize(name).trim();
  const variants = new Set([base, base.replace(/ies$/, "y"), base.replace(/s$/, ""), `${base}s`]);
  const words = base.split(" ").filter((word) => word.length >= 4 && word !== "and");
  if (words.length > 1) for (const word of words) variants.add(word);
  return [...variants].filter(Boolean);
}

/** Names of the family whose variants appear as whole words in the question, longest first. */
function matches(text: string, names: string[], variantsOf: (name: string) => string[]): string[] {
  return names.filter((name) => variantsOf(name).some((variant) => text.includes(` ${variant} `)));
}

function countIn(text: string): number | null {
  const match =
    /\b(?:top|last|largest|biggest|recent|latest) (\d{1,2})\b/.exec(text) ??
    /\b(\d{1,2}) (?:largest|biggest|most|recent|latest)\b/.exec(text);
  const value = match ? Number(match[1]) : NaN;
  return value >= 1 ? value : null;
}

const isoDate = (date: Date) => date.toISOString().slice(0, 10);
const utc = (year: number, month: number, day: number) => new Date(Date.UTC(year, month, day));

function monthPeriod(year: number, month: number, label: string): Period {
  return { start: isoDate(utc(year, month, 1)), end: isoDate(utc(year, month + 1, 0)), label };
}

function currentMonth(today: string): Period {
  const date = new Date(`${today}T00:00:00Z`);
  return { start: isoDate(utc(date.getUTCFullYear(), date.getUTCMonth(), 1)), end: today, label: "this month" };
}

function monthLabel(month: string): string {
  const [year, index] = month.split("-").map(Number);
  return `${MONTH_NAMES[index - 1]} ${year}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The period a question names, relative to today (UTC), or null when it names none. */
export function parsePeriod(text: string, today: string): Period | null {
  const now = new Date(`${today}T00:00:00Z`);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  const day = now.getUTCDate();
  const range = (start: Date, end: Date, label: string): Period => ({ start: isoDate(start), end: isoDate(end), label });
  if (/\btoday\b/.test(text)) return range(now, now, "today");
  if (/\byesterday\b/.test(text)) return range(utc(year, month, day - 1), utc(year, month, day - 1), "yesterday");
  const days = /\b(?:last|past|previous) (\d{1,3}) days\b/.exec(text);
  if (days) return range(utc(year, month, day - Number(days[1]) + 1), now, `in the last ${days[1]} days`);
  const months = /\b(?:last|past|previous) (\d{1,2}) months\b/.exec(text);
  if (months) {
    const start = utc(year, month - Number(months[1]), 1);
    return range(start, utc(year, month, 0), `in the last ${months[1]} months (${isoDate(start)} to ${isoDate(utc(year, month, 0))})`);
  }
  const weekday = (now.getUTCDay() + 6) % 7;
  if (/\bthis week\b/.test(text)) return range(utc(year, month, day - weekday), now, "this week");
  if (/\b(last|previous) week\b/.test(text))
    return range(utc(year, month, day - weekday - 7), utc(year, month, day - weekday - 1), "last week");
  if (/\b(this month|month to date)\b/.test(text)) return currentMonth(today);
  if (/\b(last|previous) month\b/.test(text)) {
    const start = utc(year, month - 1, 1);
    return monthPeriod(
      start.getUTCFullYear(),
      start.getUTCMonth(),
      `last month (${MONTH_NAMES[start.getUTCMonth()]} ${start.getUTCFullYear()})`,
    );
  }
  if (/\b(this year|year to date|ytd)\b/.test(text)) return range(utc(year, 0, 1), now, `this year`);
  if (/\b(last|previous) year\b/.test(text)) return range(utc(year - 1, 0, 1), utc(year - 1, 11, 31), `last year (${year - 1})`);
  // "in March", "during May 2024", "March 2024"; a bare "may" is more often a verb than a month.
  const monthNames = MONTHS.join("|");
  const named =
    new RegExp(`\\b(?:in|during|for|of) (${monthNames})(?: (\\d{4}))?\\b`).exec(text) ??
    new RegExp(`\\b(${monthNames}) (\\d{4})\\b`).exec(text);
  if (named) {
    const index = MONTHS.indexOf(named[1]);
    // A month without a year is the latest one that has begun.
    const inYear = named[2] ? Number(named[2]) : index <= month ? year : year - 1;
    return monthPeriod(inYear, index, `in ${MONTH_NAMES[index]} ${inYear}`);
  }
  const inYear = /\b(?:in|during) (\d{4})\b/.exec(text);
  if (inYear) return range(utc(Number(inYear[1]), 0, 1), utc(Number(inYear[1]), 11, 31), `in ${inYear[1]}`);
  return null;
}
