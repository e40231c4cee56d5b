import { formatMoney } from "../money";
import { currentMonth, describe, previous } from "./builtin.periods";
import { INVESTMENT_KINDS, read, type QuestionKind, type Reading } from "./builtin.reading";
import { gain, invested, portfolio } from "./builtin.investments";
import type { AssistantProvider, AssistantRequest, FamilyContext } from "./provider";
import {
  average,
  balances,
  balancesOn,
  bills,
  compare,
  extremes,
  howOften,
  incomeStatement,
  lastPaid,
  netWorth,
  netWorthChange,
  recent,
  recurring,
  search,
  top,
  total,
  trend,
} from "./builtin.answers";
import { AMOUNT_WORDS, named, subjectList, SUGGESTIONS, type Asked } from "./builtin.wording";
import type { ToolRunner } from "./tools";

/**
 * The assistant that needs no model server: it reads the common questions in plain English, answers
 * them by calling the same tools a model would (so the stored tool calls are real), and says plainly
 * what it did not understand rather than answering a broader question. Deterministic: the same
 * conversation on the same data gives the same answer.
 */
export class BuiltinProvider implements AssistantProvider {
  async respond(request: AssistantRequest): Promise<{ content: string }> {
    const questions = request.history.filter((message) => message.role === "user").map((message) => message.content);
    // Nothing to stream: the answer is complete the moment it exists.
    return { content: await answer(questions, request.context, request.tools) };
  }
}

export const NOT_UNDERSTOOD = `Sorry, I don't understand that question. I am the built-in assistant and ${SUGGESTIONS.charAt(0).toLowerCase()}${SUGGESTIONS.slice(1)}`;

/** Reads the conversation's questions in order, so a follow-up borrows what the previous one asked. */
function understand(questions: string[], context: FamilyContext): Asked | null {
  let last = null as Asked | null;
  let current = null as Asked | null;
  for (const question of questions.slice(-6)) {
    const { reading, setAside } = readMessage(question, context);
    current = { ...reading, period: reading.periods[0] ?? null, currency: context.currency, setAside };
    const prior: Asked | null = last;
    const borrows =
      prior !== null &&
      (reading.followUp || (reading.kind === null && (reading.subjects.length > 0 || reading.periods.length > 0 || reading.before)));
    if (prior && borrows) {
      // "And AAPL?" after a question about investments names a security, which only that kind reads.
      const securities = prior.kind !== null && INVESTMENT_KINDS.includes(prior.kind) && reading.kind === null;
      current = {
        ...prior,
        subjects: reading.subjects.length ? reading.subjects : prior.subjects,
        unknown: securities ? [] : reading.unknown,
        tickers: securities ? (reading.unknown.length ? reading.unknown : prior.tickers) : reading.tickers,
        search: reading.search ?? prior.search,
        periods: reading.periods.length ? reading.periods : prior.periods,
        period:
          reading.periods[0] ??
          (reading.before && prior.period ? previous(prior.period, reading.before.unit ?? prior.period.unit) : prior.period),
        kind: reading.kind ?? prior.kind,
        setAside,
      };
    }
    if (current.kind) last = current;
  }
  return current;
}

/**
 * One message may hold several sentences ("How much did I spend on groceries? I want to budget
 * better."). The first one that asks something the assistant recognises is answered; the others are
 * named in the reply as left out, never silently dropped.
 */
function readMessage(message: string, context: FamilyContext): { reading: Reading; setAside: string[] } {
  const sentences = message
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter(Boolean);
  const readings = sentences.map((sentence) => read(sentence, context.vocabulary, context.today));
  const chosen = readings.findIndex(
    (reading) => reading.kind || reading.subjects.length || reading.periods.length || reading.search || reading.before,
  );
  if (sentences.length < 2 || chosen < 0) return { reading: read(message, context.vocabulary, context.today), setAside: [] };
  return { reading: readings[chosen], setAside: sentences.filter((_sentence, index) => index !== chosen) };
}

async function answer(questions: string[], context: FamilyContext, tools: ToolRunner): Promise<string> {
  const asked = understand(questions, context);
  if (!asked) return NOT_UNDERSTOOD;
  const reply = await answerAsked(asked, context, tools);
  if (reply === NOT_UNDERSTOOD) return reply;
  const notes: string[] = [];
  const unused = asked.unknown.length ? [] : unusedParts(asked);
  if (unused.length) notes.push(`This answer does not narrow to ${unused.join(" or ")}: it covers ${COVERS[asked.kind!]}.`);
  if (asked.setAside.length)
    notes.push(`I answer one question per message, so I left out ${asked.setAside.map((sentence) => `"${sentence}"`).join(" and ")}.`);
  return notes.length ? `${reply}\n\n${notes.join(" ")}` : reply;
}

/** What the answers that cannot be narrowed cover instead. */
const COVERS: Partial<Record<QuestionKind, string>> = {
  net_worth: "all your accounts, today and at each month end",
  income_statement: "all your income and spending in the period",
  recurring: "all your recurring payments of the last 6 months",
  bills: "every bill due in that time",
  balances: "account balances as of today",
  portfolio: "all your investment accounts",
  gain: "all your investment accounts",
  invested: "trades on all your investment accounts",
};

/** Parts of the question an answer of its kind cannot use: said plainly rather than dropped silently. */
function unusedParts(asked: Asked): string[] {
  if (!asked.kind || !(asked.kind in COVERS)) return [];
  const subjects = asked.subjects.filter((subject) => !(asked.kind === "balances" && subject.kind === "account"));
  const parts = subjects.map(named);
  if (asked.search) parts.push(`"${asked.search}"`);
  if (asked.amount)
    parts.push(
      `amounts ${AMOUNT_WORDS[asked.amount.operator].replace(/^in amounts /, "")} ${formatMoney(asked.amount.value, asked.currency)}`,
    );
  // Balances and net worth are read on the period's last day (net worth's change across it).
  // Portfolio questions read the period's last day, and what was invested the whole period.
  if (asked.period && !["income_statement", "balances", "net_worth", ...INVESTMENT_KINDS].includes(asked.kind))
    parts.push(describe(asked.period));
  return parts;
}

async function answerAsked(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  // Nothing recognised at all: not a question about the family's money that this assistant knows.
  if (!asked.kind && !asked.subjects.length && !asked.period && !asked.search) return NOT_UNDERSTOOD;
  if (asked.unknown.length) return notFound(asked, context);
  switch (asked.kind) {
    case "net_worth":
      return asked.period ? netWorthChange(context, tools, asked.period) : netWorth(context, tools, asked.history);
    case "income_statement":
      return incomeStatement(context, tools, asked.period ?? currentMonth(context.today));
    case "balances":
      return asked.period ? balancesOn(tools, asked.subjects, asked.period) : balances(tools, asked.subjects);
    case "recurring":
      return recurring(context, tools);
    case "bills":
      return bills(asked, context, tools);
    case "portfolio":
      return portfolio(asked, context, tools);
    case "gain":
      return gain(asked, context, tools);
    case "invested":
      return invested(asked, context, tools);
    case "extremes":
      return extremes(asked, tools, asked.period ?? currentMonth(context.today));
    case "recent":
      return recent(asked, tools);
    case "trend":
      return trend(asked, context, tools);
    case "top":
      return top(asked, context, tools, asked.period ?? currentMonth(context.today));
    case "average":
      return average(asked, context, tools);
    case "compare":
      return compare(asked, context, tools);
    case "last_paid":
      return lastPaid(asked, tools);
    case "how_often":
      return howOften(asked, context, tools);
    case "count":
      return total(asked, context, tools, asked.period ?? currentMonth(context.today), true);
    case "search":
      return search(asked, context, tools);
    case "total":
      return total(asked, context, tools, asked.period ?? currentMonth(context.today), false);
    default:
      if (asked.subjects.length || asked.period) return total(asked, context, tools, asked.period ?? currentMonth(context.today), false);
      return NOT_UNDERSTOOD;
  }
}

const TIME_WORDS =
  /\b(?:days?|weeks?|weekends?|months?|quarters?|years?|first|second|third|half|mornings?|nights?|summer|winter|spring|fall|autumn|season|christmas|holidays?)\b/;

/** The honesty rule: words that matched nothing get named, with the closest names, and no figure. */
function notFound(asked: Asked, context: FamilyContext): string {
  const lines = asked.unknown.map((phrase) => {
    if (/^\$?[\d.,]+$/.test(phrase)) return `I couldn't tell what "${phrase}" refers to here.`;
    if (TIME_WORDS.test(phrase))
      return `I couldn't read "${phrase}" as a period I know (today, last week, last month, March 2025, since January, between March and May, …).`;
    const closest = context.vocabulary.closest(phrase, 3);
    return `I couldn't find "${phrase}" among your categories, merchants, tags or accounts${closest.length ? ` (the closest are ${closest.join(", ")})` : ""}.`;
  });
  if (asked.subjects.length) lines.push(`I did recognise ${subjectList(asked.subjects)}.`);
  lines.push(
    "",
    "So I can't give you a figure for that question. Try naming one of your own categories, merchants, tags or accounts; " + SUGGESTIONS,
  );
  return lines.join("\n");
}
