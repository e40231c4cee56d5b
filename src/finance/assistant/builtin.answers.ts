import Decimal from "decimal.js";
import { formatMoney } from "../money";
import {
  currentMonth,
  describe,
  findDeadline,
  findPeriods,
  monthsIn,
  MONTH_NAMES,
  previous,
  weeksIn,
  wholeMonthsSince,
  type Period,
} from "./builtin.periods";
import type { FamilyContext } from "./provider";
import type { ToolRunner } from "./tools";
import type { Subject } from "./vocabulary";
import {
  type Asked,
  capitalize,
  familyTotals,
  filterArgs,
  type GroupEntry,
  named,
  otherCurrencies,
  plural,
  refused,
  subjectPhrase,
  SUGGESTIONS,
  type TransactionEntry,
} from "./builtin.wording";

/**
 * The built-in assistant's answers, one function per kind of question: each calls the tools a model
 * would call and words the result. Which answer a question gets is builtin.provider.ts's to decide.
 */

// ---------------------------------------------------------------------------------------------------
// Answers

export async function total(asked: Asked, context: FamilyContext, tools: ToolRunner, period: Period, counting: boolean): Promise<string> {
  const type = asked.direction;
  const result = await tools.call("get_transactions", { ...filterArgs(asked, period, type), order: "largest", per_page: 3 });
  const problem = refused(result);
  if (problem) return problem;
  const entry = familyTotals(result, context.currency);
  const where = subjectPhrase(asked);
  const when = describe(period);
  if (!entry || entry.count === 0)
    return type === "expense" ? `I found no spending${where} ${when}.` : `I found no income${where} ${when}.`;
  const amount = formatMoney(type === "expense" ? entry.expense : entry.income, context.currency);
  const count = plural(entry.count, "transaction");
  if (counting) return `You had **${count}**${type === "income" ? " of income" : " of spending"}${where} ${when}, totalling ${amount}.`;
  const lines =
    type === "expense"
      ? [`You spent **${amount}**${where} ${when}, across ${count}.`]
      : [`Your income${where} ${when} was **${amount}**, across ${count}.`];
  const largest = (result.transactions as TransactionEntry[]).filter((row) => row.currency === context.currency);
  if (largest.length > 1) {
    lines.push("", "The largest were:");
    for (const row of largest) lines.push(`- ${row.date} · ${row.name}: ${formatMoney(row.amount, row.currency)}`);
  }
  lines.push(...otherCurrencies(result, context.currency, type));
  return lines.join("\n");
}

export async function average(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  let period = asked.period;
  if (!period) {
    // No period named: every whole month of the family's history.
    const first = await tools.call("get_transactions", { order: "oldest", per_page: 1 });
    const oldest = (first.transactions as TransactionEntry[])[0];
    if (!oldest) return "You have no transactions yet.";
    period = wholeMonthsSince(oldest.date, context.today);
    if (period.start > period.end) period = { ...period, end: context.today };
  }
  const type = asked.direction;
  const result = await tools.call("get_transactions", { ...filterArgs(asked, period, type), per_page: 1 });
  const problem = refused(result);
  if (problem) return problem;
  const entry = familyTotals(result, context.currency);
  const sum = new Decimal(entry ? (type === "expense" ? entry.expense : entry.income) : 0);
  const units = asked.per === "week" ? weeksIn(period) : monthsIn(period);
  const unit = asked.per;
  const mean = sum.dividedBy(units).toDecimalPlaces(2);
  const verb = type === "expense" ? "spent" : "earned";
  return (
    `On average you ${verb} **${formatMoney(mean.toFixed(2), context.currency)}** per ${unit}${subjectPhrase(asked)} ` +
    `${describe(period)}: ${formatMoney(sum.toFixed(2), context.currency)} over ${plural(units, unit)}.`
  );
}

export async function compare(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  if (asked.compareSubjects) return compareSubjects(asked, context, tools);
  const [first, other] = comparedPeriods(asked, context.today);
  const type = asked.direction;
  const figures: Decimal[] = [];
  for (const period of [first, other]) {
    const result = await tools.call("get_transactions", { ...filterArgs(asked, period, type), per_page: 1 });
    const problem = refused(result);
    if (problem) return problem;
    const entry = familyTotals(result, context.currency);
    figures.push(new Decimal(entry ? (type === "expense" ? entry.expense : entry.income) : 0));
  }
  const money = (value: Decimal) => formatMoney(value.toFixed(2), context.currency);
  const verb = type === "expense" ? "spent" : "earned";
  const difference = figures[0].minus(figures[1]);
  const direction = difference.isZero()
    ? "the same as"
    : difference.isPositive()
      ? `${money(difference.abs())} more than`
      : `${money(difference.abs())} less than`;
  const percent = figures[1].isZero()
    ? ""
    : ` (${difference.dividedBy(figures[1]).times(100).toDecimalPlaces(1).abs().toFixed(1)}% ${difference.isNegative() ? "less" : "more"})`;
  return (
    `You ${verb} **${money(figures[0])}**${subjectPhrase(asked)} ${describe(first)} and **${money(figures[1])}** ${describe(other)}: ` +
    `${direction === "the same as" ? "the same" : `${direction.replace(/ than$/, "")}${percent}`}.`
  );
}

/**
 * The two periods of a comparison: the two named; or the one named and the one before it; or, when the
 * one named follows "than" ("more than last month"), the current period of its kind and that one.
 */
function comparedPeriods(asked: Asked, today: string): [Period, Period] {
  if (asked.periods.length >= 2) return [asked.periods[0], asked.periods[1]];
  const named = asked.period ?? currentMonth(today);
  if (!asked.baseline || !["week", "month", "quarter", "year"].includes(named.unit)) return [named, previous(named)];
  const [current] = findPeriods(`this ${named.unit}`, today);
  return [current.period, named];
}

/** "Uber vs Lyft this year": each subject's figure in the same period, largest first. */
async function compareSubjects(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const period = asked.period ?? currentMonth(context.today);
  const type = asked.direction;
  const rows: Array<{ subject: Subject; amount: Decimal; count: number }> = [];
  for (const subject of asked.subjects) {
    const result = await tools.call("get_transactions", { ...filterArgs({ ...asked, subjects: [subject] }, period, type), per_page: 1 });
    const problem = refused(result);
    if (problem) return problem;
    const entry = familyTotals(result, context.currency);
    rows.push({ subject, amount: new Decimal(entry ? (type === "expense" ? entry.expense : entry.income) : 0), count: entry?.count ?? 0 });
  }
  rows.sort((a, b) => b.amount.comparedTo(a.amount));
  const money = (value: Decimal) => formatMoney(value.toFixed(2), context.currency);
  const [first, second] = rows;
  const verb = type === "expense" ? "spent" : "earned";
  return [
    `${capitalize(describe(period))} you ${verb} more ${preposition(first.subject)} **${named(first.subject)}** than ${preposition(second.subject)} ${named(second.subject)}:`,
    "",
    ...rows.map((row) => `- ${named(row.subject)}: **${money(row.amount)}** (${plural(row.count, "transaction")})`),
  ].join("\n");
}

const preposition = (subject: Subject) => (subject.kind === "merchant" ? "at" : subject.kind === "account" ? "from" : "on");

/** Spending (or income) per month or week, in order: the last 12 whole months when no period is named. */
export async function trend(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const unit = asked.groupBy === "week" ? "week" : "month";
  const period = asked.period ?? findPeriods(unit === "week" ? "last 12 weeks" : "last 12 months", context.today)[0].period;
  const type = asked.direction;
  const result = await tools.call("summarize_transactions", { ...filterArgs(asked, period, type), group_by: unit, limit: 100 });
  const problem = refused(result);
  if (problem) return problem;
  const groups = [...(result.groups as GroupEntry[])].sort((a, b) => a.key.localeCompare(b.key));
  const figure = (group: GroupEntry) => new Decimal(type === "expense" ? group.expense : group.income);
  const sum = groups.reduce((total, group) => total.plus(figure(group)), new Decimal(0));
  const money = (value: Decimal) => formatMoney(value.toFixed(2), context.currency);
  const what = type === "expense" ? "spending" : "income";
  if (groups.length === 0) return `I found no ${what}${subjectPhrase(asked)} ${describe(period)}.`;
  return [
    `Your ${what}${subjectPhrase(asked)} by ${unit} ${describe(period)}, **${money(sum)}** in all:`,
    "",
    ...groups.map((group) => `- ${unit === "month" ? monthLabel(group.key) : `week of ${group.key}`}: ${money(figure(group))}`),
  ].join("\n");
}

export async function top(asked: Asked, context: FamilyContext, tools: ToolRunner, period: Period): Promise<string> {
  const groupBy = asked.groupBy ?? "merchant";
  const count = Math.min(asked.count ?? 5, 20);
  const type = asked.direction;
  const result = await tools.call("summarize_transactions", { ...filterArgs(asked, period, type), group_by: groupBy, limit: count });
  const problem = refused(result);
  if (problem) return problem;
  const groups = (result.groups as GroupEntry[]).filter((group) => new Decimal(type === "expense" ? group.expense : group.income).gt(0));
  const noun = { merchant: "merchant", category: "category", tag: "tag", account: "account", month: "month", week: "week" }[groupBy];
  if (groups.length === 0)
    return `I found no ${type === "expense" ? "spending" : "income"}${subjectPhrase(asked)} by ${noun} ${describe(period)}.`;
  const amount = (group: GroupEntry) => formatMoney(type === "expense" ? group.expense : group.income, context.currency);
  const lead = groups[0];
  const verb = type === "expense" ? "spent the most" : "earned the most";
  const lines = [
    `The ${noun} you ${verb}${groupBy === "merchant" ? " at" : " on"}${subjectPhrase(asked)} ${describe(period)} is **${lead.key}**: ${amount(lead)} across ${plural(lead.count, "transaction")}.`,
  ];
  if (groups.length > 1) {
    lines.push("", `Top ${groups.length}:`);
    groups.forEach((group, index) => lines.push(`${index + 1}. ${group.key}: ${amount(group)} (${plural(group.count, "transaction")})`));
  }
  return lines.join("\n");
}

export async function extremes(asked: Asked, tools: ToolRunner, period: Period): Promise<string> {
  const count = Math.min(asked.count ?? 5, 20);
  const type = asked.direction;
  const result = await tools.call("get_transactions", { ...filterArgs(asked, period, type), order: asked.order, per_page: count });
  const problem = refused(result);
  if (problem) return problem;
  const rows = result.transactions as TransactionEntry[];
  const what = type === "expense" ? "expenses" : "income transactions";
  if (rows.length === 0) return `I found no ${what}${subjectPhrase(asked)} ${describe(period)}.`;
  return [
    `Your ${asked.order} ${what}${subjectPhrase(asked)} ${describe(period)}:`,
    "",
    ...rows.map(
      (row, index) =>
        `${index + 1}. **${formatMoney(row.amount, row.currency)}** · ${row.name}${row.category ? ` (${row.category})` : ""}, ${row.date}`,
    ),
  ].join("\n");
}

export async function recent(asked: Asked, tools: ToolRunner): Promise<string> {
  const args: Record<string, unknown> = {
    ...filterArgs(asked, asked.period, null),
    order: "newest",
    per_page: Math.min(asked.count ?? 10, 20),
  };
  const result = await tools.call("get_transactions", args);
  const problem = refused(result);
  if (problem) return problem;
  const rows = result.transactions as TransactionEntry[];
  const when = asked.period ? ` ${describe(asked.period)}` : "";
  if (rows.length === 0)
    return asked.period || asked.subjects.length
      ? `I found no transactions${subjectPhrase(asked)}${when}.`
      : "You have no transactions yet.";
  return [
    `Your ${rows.length} most recent transactions${subjectPhrase(asked)}${when}:`,
    "",
    "| Date | Name | Amount |",
    "| --- | --- | ---: |",
    ...rows.map((row) => `| ${row.date} | ${row.name} | ${row.type === "income" ? "+" : "−"}${formatMoney(row.amount, row.currency)} |`),
  ].join("\n");
}

export async function search(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const result = await tools.call("get_transactions", { ...filterArgs(asked, asked.period, null), order: "newest", per_page: 10 });
  const problem = refused(result);
  if (problem) return problem;
  const rows = result.transactions as TransactionEntry[];
  const entry = familyTotals(result, context.currency);
  const when = asked.period ? ` ${describe(asked.period)}` : "";
  if (!entry || rows.length === 0) return `I found no transactions${subjectPhrase(asked)}${when}.`;
  const money = (value: string) => formatMoney(value, context.currency);
  return [
    `I found **${plural(Number(result.total_count), "transaction")}**${subjectPhrase(asked)}${when}: ${money(entry.expense)} spent and ${money(entry.income)} received.`,
    "",
    ...rows.map((row) => `- ${row.date} · ${row.name}: ${row.type === "income" ? "+" : "−"}${formatMoney(row.amount, row.currency)}`),
  ].join("\n");
}

export async function lastPaid(asked: Asked, tools: ToolRunner): Promise<string> {
  if (!asked.subjects.length && !asked.search) return `Which merchant, category or payment do you mean? ${SUGGESTIONS}`;
  const result = await tools.call("get_transactions", {
    ...filterArgs(asked, asked.period, asked.direction),
    order: "newest",
    per_page: 1,
  });
  const problem = refused(result);
  if (problem) return problem;
  const [row] = result.transactions as TransactionEntry[];
  if (!row) return `I found no payments${subjectPhrase(asked)}${asked.period ? ` ${describe(asked.period)}` : ""}.`;
  return `Your last payment${subjectPhrase(asked)} was on **${row.date}**: ${formatMoney(row.amount, row.currency)} (${row.name}).`;
}

export async function howOften(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  if (!asked.subjects.length && !asked.search) return `How often what? Name a merchant, category or tag. ${SUGGESTIONS}`;
  const result = await tools.call("get_transactions", { ...filterArgs(asked, asked.period, asked.direction), per_page: 1 });
  const problem = refused(result);
  if (problem) return problem;
  const entry = familyTotals(result, context.currency);
  if (!entry || entry.count === 0 || !entry.first_date || !entry.last_date)
    return `I found no payments${subjectPhrase(asked)}${asked.period ? ` ${describe(asked.period)}` : ""}.`;
  const span: Period = asked.period ?? { start: entry.first_date, end: entry.last_date, name: "between your first and last", unit: "span" };
  const months = monthsIn(span);
  const perMonth = new Decimal(entry.count).dividedBy(months).toDecimalPlaces(1).toFixed(1);
  return (
    `You paid${subjectPhrase(asked)} **${plural(entry.count, "time")}** ${describe(span)}, about ${perMonth} times a month ` +
    `(${formatMoney(entry.expense, context.currency)} in all); the last time on ${entry.last_date}.`
  );
}

export async function balances(tools: ToolRunner, subjects: Subject[]): Promise<string> {
  const result = await tools.call("get_accounts", {});
  const wanted = new Set(subjects.filter((subject) => subject.kind === "account").map((subject) => subject.name));
  const accounts = (result.accounts as Array<{ name: string; balance: string; currency: string; classification: string }>).filter(
    (account) => wanted.size === 0 || wanted.has(account.name),
  );
  if (accounts.length === 0) return "You have no accounts yet.";
  const lines = [wanted.size ? "Balance:" : "Your account balances:", ""];
  for (const account of accounts)
    lines.push(
      `- ${account.name}: **${formatMoney(account.balance, account.currency)}**${account.classification === "liability" ? " owed" : ""}`,
    );
  return lines.join("\n");
}

/** Each (wanted) account's balance at the end of the period's last day, from the ledger's daily balances. */
export async function balancesOn(tools: ToolRunner, subjects: Subject[], period: Period): Promise<string> {
  const result = await tools.call("get_balances_on", { date: period.end });
  const wanted = new Set(subjects.filter((subject) => subject.kind === "account").map((subject) => subject.name));
  const accounts = (result.accounts as Array<{ name: string; balance: string | null; currency: string; classification: string }>).filter(
    (account) => wanted.size === 0 || wanted.has(account.name),
  );
  if (accounts.length === 0) return "You have no accounts yet.";
  const day = period.start === period.end ? `on ${period.end}` : `at the end of ${period.end} (${period.name})`;
  const lines = [wanted.size === 1 ? `Balance ${day}:` : `Your account balances ${day}:`, ""];
  for (const account of accounts)
    lines.push(
      account.balance === null
        ? `- ${account.name}: no history yet`
        : `- ${account.name}: **${formatMoney(account.balance, account.currency)}**${account.classification === "liability" ? " owed" : ""}`,
    );
  return lines.join("\n");
}

/** Net worth at the start and end of the period and how it moved. */
export async function netWorthChange(context: FamilyContext, tools: ToolRunner, period: Period): Promise<string> {
  const result = await tools.call("get_net_worth_change", { start_date: period.start, end_date: period.end });
  const money = (value: unknown) => formatMoney(String(value), context.currency);
  const start = result.start as { date: string; net_worth: string };
  const end = result.end as { date: string; net_worth: string };
  const change = new Decimal(String(result.change));
  const moved = change.isZero() ? "did not change" : `went ${change.isNegative() ? "down" : "up"} by **${money(change.abs().toFixed())}**`;
  return (
    `Your net worth ${moved} ${describe(period)}: from ${money(start.net_worth)} at the end of ${start.date} ` +
    `to **${money(end.net_worth)}** at the end of ${end.date}.` +
    currencyNotes(context.currency, result.end as CurrencyNotes, result.start as CurrencyNotes)
  );
}

export type CurrencyNotes = {
  converted?: Array<{ currency: string; rate: string; date: string }>;
  unconverted_accounts?: Array<{ name: string; balance: string; currency: string }>;
};

/** What a total in the family currency converted, and what it left out for want of a rate: never silently mixed. */
export function currencyNotes(currency: string, ...parts: CurrencyNotes[]): string {
  const converted = new Map(parts.flatMap((part) => part.converted ?? []).map((rate) => [rate.currency, rate]));
  const left = new Map(parts.flatMap((part) => part.unconverted_accounts ?? []).map((account) => [account.name, account]));
  let notes = "";
  if (converted.size)
    notes += ` Converted into ${currency}: ${[...converted.values()].map((rate) => `${rate.currency} at ${rate.rate} (rate of ${rate.date})`).join(", ")}.`;
  if (left.size)
    notes +=
      ` Not included, for want of an exchange rate into ${currency}: ` +
      `${[...left.values()].map((account) => `${account.name} (${formatMoney(account.balance, account.currency)})`).join(", ")}.`;
  return notes;
}

export async function netWorth(context: FamilyContext, tools: ToolRunner, history: boolean): Promise<string> {
  const result = await tools.call("get_balance_sheet", { months: 12 });
  const months = result.history as Array<{ month: string; net_worth: string }>;
  const money = (value: unknown) => formatMoney(String(value), context.currency);
  const lines = [
    `Your net worth is **${money(result.net_worth)}**: assets of ${money(result.assets)} minus liabilities of ${money(result.liabilities)}.` +
      currencyNotes(context.currency, result as CurrencyNotes),
  ];
  if (months.length > 1) {
    const first = months[0];
    const change = new Decimal(String(result.net_worth)).minus(first.net_worth);
    lines.push(
      `That is ${change.isNegative() ? "down" : "up"} ${money(change.abs().toFixed())} since the end of ${monthLabel(first.month)}.`,
    );
  }
  if (history) {
    lines.push("", "Net worth at each month end:", "");
    for (const row of months) lines.push(`- ${monthLabel(row.month)}: ${money(row.net_worth)}`);
    return lines.join("\n");
  }
  return lines.join(" ");
}

export async function incomeStatement(context: FamilyContext, tools: ToolRunner, period: Period): Promise<string> {
  const result = await tools.call("get_income_statement", { start_date: period.start, end_date: period.end });
  const money = (value: unknown) => formatMoney(String(value), context.currency);
  const income = result.income as { total: string };
  const expense = result.expense as { total: string; by_category: Array<{ category: string; amount: string }> };
  const lines = [
    `${capitalize(describe(period))} you earned **${money(income.total)}** and spent **${money(expense.total)}**, ` +
      `so your net income is **${money(result.net_income)}**` +
      (result.savings_rate === null ? "." : ` (a savings rate of ${String(result.savings_rate)}%).`),
  ];
  if (expense.by_category.length) {
    lines.push("", "Spending by category:");
    for (const row of expense.by_category) lines.push(`- ${row.category}: ${money(row.amount)}`);
  }
  return lines.join("\n");
}

export async function recurring(context: FamilyContext, tools: ToolRunner): Promise<string> {
  const result = await tools.call("get_recurring_payments", { months: 6 });
  const rows = result.recurring as Array<{ name: string; last_amount: string; last_date: string; months_seen: number }>;
  if (rows.length === 0) return "I found no recurring payments in the last 6 months.";
  const money = (value: string) => formatMoney(value, context.currency);
  return [
    `You have **${plural(rows.length, "recurring payment")}** (charged about once a month for about the same amount, in the last 6 months), ` +
      `about **${money(String(result.monthly_total))}** a month:`,
    "",
    ...rows.map((row) => `- ${row.name}: ${money(row.last_amount)}, last on ${row.last_date} (seen in ${row.months_seen} months)`),
  ].join("\n");
}

type BillEntry = { name: string; amount: string; currency: string; next_expected_date: string; account: string | null };

/** The bills (active recurring money out) due from today through the deadline asked, soonest first: what `upcomingBills` lists. */
export async function bills(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const due = asked.due ?? findDeadline("", context.today).deadline;
  const result = await tools.call("get_recurring_transactions", { due_before: due.date });
  const problem = refused(result);
  if (problem) return problem;
  const rows = result.recurring_transactions as BillEntry[];
  const known = Number(result.recurring_known);
  const when = `due ${due.name} (${context.today === due.date ? context.today : `${context.today} to ${due.date}`})`;
  if (known === 0)
    return (
      "I don't know of any recurring bills yet: none has been entered or detected. Bills are detected from three months of " +
      "history (a payment to the same merchant for the same amount around the same day each month), or entered by hand."
    );
  if (rows.length === 0)
    return `No bills are ${when}. You have ${plural(known, "recurring transaction")} in all, none of them a bill expected in that time.`;
  const totals = Object.entries(result.money_out_by_currency as Record<string, string>).map(([currency, sum]) =>
    formatMoney(sum, currency),
  );
  return [
    `**${plural(rows.length, "bill")}** ${rows.length === 1 ? "is" : "are"} ${when}, **${totals.join(" and ")}** in all:`,
    "",
    ...rows.map(
      (row) =>
        `- ${row.next_expected_date} · ${row.name}: ${formatMoney(row.amount, row.currency)}${row.account ? ` (${row.account})` : ""}`,
    ),
  ].join("\n");
}

function monthLabel(month: string): string {
  const [year, index] = month.split("-").map(Number);
  return `${MONTH_NAMES[index - 1]} ${year}`;
}
