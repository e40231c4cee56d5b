import { formatMoney } from "../money";
import type { Period } from "./builtin.periods";
import type { Reading } from "./builtin.reading";
import type { Subject } from "./vocabulary";

/**
 * What the built-in assistant's answers share: the tools' result shapes, the arguments they are
 * called with, and the wording of subjects, amounts and counts.
 */

export type TotalsEntry = {
  currency: string;
  income: string;
  expense: string;
  count: number;
  first_date: string | null;
  last_date: string | null;
};
export type TransactionEntry = { date: string; name: string; amount: string; type: string; currency: string; category: string | null };
export type GroupEntry = { key: string; income: string; expense: string; count: number };

/** A question as answered: its reading with the follow-up context filled in. */
export type Asked = Reading & { period: Period | null; currency: string; setAside: string[] };

export const EXAMPLES = [
  "How much did I spend on groceries last month?",
  "How much did I spend at Starbucks and Chipotle this year?",
  "What's my average monthly spending on dining out?",
  "Which merchant did I spend the most at this year?",
  "Did I spend more this month than last month?",
  "What were my 5 largest expenses in March?",
  "Income vs expenses last month",
  "What subscriptions do I have?",
  "When did I last pay Netflix?",
  "What is my net worth?",
];

export const SUGGESTIONS = ["I can answer questions like:", "", ...EXAMPLES.map((example) => `- ${example}`)].join("\n");

// ---------------------------------------------------------------------------------------------------
// Tool arguments and wording

export function filterArgs(asked: Asked, period: Period | null, type: "income" | "expense" | null): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  if (type) args.type = type;
  if (period) Object.assign(args, { start_date: period.start, end_date: period.end });
  const byKind = (kind: Subject["kind"]) => asked.subjects.filter((subject) => subject.kind === kind).map((subject) => subject.name);
  const names = { accounts: byKind("account"), categories: byKind("category"), merchants: byKind("merchant"), tags: byKind("tag") };
  for (const [key, value] of Object.entries(names)) if (value.length) args[key] = value;
  if (asked.search) args.search = asked.search;
  if (asked.amount) args.amount = asked.amount;
  return args;
}

export const named = (subject: Subject) =>
  `${subject.name}${subject.matched && normalizeName(subject.name) !== subject.matched ? ` (matched '${subject.matched}')` : ""}`;
export const normalizeName = (name: string) => name.toLowerCase();

export function subjectList(subjects: Subject[]): string {
  return subjects.map(named).join(", ");
}

/** " on Groceries at Starbucks and Chipotle tagged Essential from Everyday Checking mentioning 'trip'" */
export function subjectPhrase(asked: Asked): string {
  const of = (kind: Subject["kind"]) => asked.subjects.filter((subject) => subject.kind === kind).map(named);
  const join = (items: string[]) => (items.length > 1 ? `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}` : items[0]);
  const parts: string[] = [];
  if (of("category").length) parts.push(`on ${join(of("category"))}`);
  if (of("merchant").length) parts.push(`at ${join(of("merchant"))}`);
  if (of("tag").length) parts.push(`tagged ${join(of("tag"))}`);
  if (of("account").length) parts.push(`from ${join(of("account"))}`);
  if (asked.search) parts.push(`mentioning "${asked.search}"`);
  if (asked.amount) parts.push(`${AMOUNT_WORDS[asked.amount.operator]} ${formatMoney(asked.amount.value, asked.currency)}`);
  return parts.length ? ` ${parts.join(" ")}` : "";
}

export const AMOUNT_WORDS = {
  greater_than: "in amounts over",
  less_than: "in amounts under",
  at_least: "in amounts of at least",
  at_most: "in amounts of at most",
};

export function familyTotals(result: Record<string, unknown>, currency: string): TotalsEntry | undefined {
  return (result.totals as TotalsEntry[] | undefined)?.find((entry) => entry.currency === currency);
}

export function otherCurrencies(result: Record<string, unknown>, currency: string, type: "income" | "expense"): string[] {
  const others = ((result.totals as TotalsEntry[] | undefined) ?? []).filter((entry) => entry.currency !== currency);
  return others.map(
    (entry) => `Also ${formatMoney(type === "expense" ? entry.expense : entry.income, entry.currency)} in ${entry.currency}.`,
  );
}

export const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
export const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A tool's refusal (an unknown name the model would have sent) read back honestly. */
export function refused(result: Record<string, unknown>): string | null {
  return typeof result.error === "string" ? `I couldn't answer that: ${result.error}.` : null;
}
