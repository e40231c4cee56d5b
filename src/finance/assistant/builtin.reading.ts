import type { GroupBy } from "./finance.repository";
import { normalizeText, SYNONYM_PHRASES, type FamilyVocabulary, type Subject } from "./vocabulary";
import { findDeadline, findPeriods, relativeUnit, type Deadline, type Period, type PeriodUnit } from "./builtin.periods";

/**
 * Reads a question into what it asks. Every word is accounted for: it names the kind of question, a
 * period, one of the family's categories/merchants/tags/accounts, a search word, or is one of the small
 * words every question has. Whatever is left is reported as not understood, so an answer never covers
 * a broader question than the one asked.
 */
export type QuestionKind =
  | "total"
  | "count"
  | "average"
  | "compare"
  | "top"
  | "extremes"
  | "income_statement"
  | "balances"
  | "net_worth"
  | "recurring"
  | "bills"
  | "last_paid"
  | "how_often"
  | "search"
  | "recent"
  | "trend"
  | "portfolio"
  | "invested"
  | "gain";

/** The questions about investments: their subjects are securities, named by ticker, not the family's names. */
export const INVESTMENT_KINDS: readonly QuestionKind[] = ["portfolio", "invested", "gain"];

export type Reading = {
  kind: QuestionKind | null;
  direction: "expense" | "income";
  subjects: Subject[];
  periods: Period[];
  /** "bills due before the 15th": the last day a question about what is due covers (bills only). */
  due: Deadline | null;
  /** "the month before" and friends: a period relative to the previous question's. */
  before: { unit: PeriodUnit | null } | null;
  count: number | null;
  groupBy: GroupBy | null;
  per: "month" | "week";
  order: "largest" | "smallest";
  search: string | null;
  /** "over $50", "under 20 dollars": a bound on the size of each transaction. */
  amount: { operator: "greater_than" | "less_than" | "at_least" | "at_most"; value: string } | null;
  history: boolean;
  /** "more than last month": the one period named is what the current one is compared with. */
  baseline: boolean;
  /** "Uber vs Lyft": a comparison between subjects in one period rather than between periods. */
  compareSubjects: boolean;
  /** Securities named in a question about investments ("VTI", "apple"), as asked: the tools match them. */
  tickers: string[];
  /** Phrases that matched nothing the assistant knows. */
  unknown: string[];
  /** True when the question reads as a follow-up ("what about …", "and …"). */
  followUp: boolean;
};

/** Words every question has, that add nothing to what it asks. */
const SMALL_WORDS = new Set(
  (
    "a an the i im ive me my mine we our us you your it its is was were are be been being am do does did doing done have has had " +
    "how what whats which who whom when where why that this these those there here of on at in into for to from by with within " +
    "about and or vs versus per each every all any some much many so far up down out off over under than then as just only also " +
    "please can could would should will shall may might tell show give list see get let know find me total overall altogether " +
    "spend spent spending spends expense expenses expenditure cost costs costed paid pay pays paying buy bought purchase purchases " +
    "purchased transaction transactions payment payments charge charges charged money amount amounts dollars bucks " +
    "income earn earned earning earnings made make received receive got gain gains " +
    "sum summary much go went going use used using put " +
    "like look looking doing did ok okay hey hi hello thanks thank whole entire altogether currently current now right " +
    "thing things something stuff anything everything"
  ).split(" "),
);

type KindRule = { kind: QuestionKind; pattern: RegExp };

/** Phrases that decide the kind of question, most specific first. Their words are consumed. */
const KIND_RULES: KindRule[] = [
  { kind: "net_worth", pattern: /\bnet worth\b|\bbalance sheet\b|\bassets\b|\bliabilit(?:y|ies)\b|\bwhat (?:am i|i am) worth\b/ },
  { kind: "trend", pattern: /\bby (?:month|week)\b|\b(?:month|week) by (?:month|week)\b|\b(?:monthly|weekly) breakdown\b|\btrend\b/ },
  {
    kind: "income_statement",
    pattern:
      /\bincome (?:vs|versus|and|against|compared to|compared with) (?:expenses?|spending)\b|\bsavings? rate\b|\bcash ?flow\b|\bnet income\b|\bincome statement\b|\b(?:spending|expenses?) by category\b|\bbreakdown\b|\bhow much (?:did|do|have) (?:i|we) save[d]?\b/,
  },
  {
    kind: "last_paid",
    pattern: /\bwhen (?:did|was) (?:i|we) last\b|\bwhen was the last time\b|\blast time (?:i|we)\b|\bwhen did (?:i|we)\b/,
  },
  { kind: "how_often", pattern: /\bhow (?:often|frequently)\b|\bhow many times\b/ },
  { kind: "count", pattern: /\bhow many\b|\bnumber of\b|\bcount\b/ },
  {
    kind: "average",
    pattern:
      /\baverage\b|\bavg\b|\bon average\b|\btypical(?:ly)?\b|\bmean\b|\bper (?:month|week)\b|\ba (?:month|week)\b|\bmonthly\b|\bweekly\b|\b(?:each|every) (?:month|week)\b/,
  },
  {
    kind: "top",
    pattern:
      /\b(?:top|which|what) (?:\d{1,2} )?(?:merchants?|stores?|shops?|places?|categor(?:y|ies)|tags?|accounts?)\b|\b(?:most|biggest) (?:by|per) (?:merchant|category|tag|account)\b|\bwhere did (?:i|we) spend the most\b|\bspend the most (?:at|on)\b|\bspent the most (?:at|on)\b|\b(?:biggest|largest|top|highest|main) (?:expense |spending |income )?(?:categor(?:y|ies)|merchants?|stores?|tags?)\b/,
  },
  {
    kind: "extremes",
    pattern:
      /\b(?:largest|biggest|most expensive|highest|smallest|cheapest|lowest|least expensive|top|\d{1,2} (?:largest|biggest|smallest))(?: \d{1,2})? (?:expenses?|purchases?|transactions?|payments?|costs?|charges?|spending|incomes?|deposits?)\b/,
  },
  {
    kind: "compare",
    pattern: /\bcompared? (?:to|with)\b|\bcompare\b|\bvs\b|\bversus\b|\bmore than\b|\bless than\b|\bthan\b|\bdifference between\b/,
  },
  {
    kind: "recent",
    pattern:
      /\b(?:recent|latest|newest)\b(?: \d{1,2})?(?: transactions?)?|\blast \d{1,2} transactions?\b|\b(?:show|list|find|display)(?: me)?(?: all)?(?: my| the)? transactions\b/,
  },
  {
    kind: "balances",
    pattern:
      /\bbalances?\b|\bhow much (?:money |cash )?(?:do|have) (?:i|we) (?:have|got)\b|\bhow much do (?:i|we) owe\b|\bwhat accounts\b|\bmy accounts\b/,
  },
];

const RECURRING =
  /\b(?:recurring|repeating|regular) (?:payments?|bills?|charges?|expenses?|transactions?)\b|\b(?:what|which|list|show)(?: me)?(?: are)?(?: all)? (?:my |the )?(?:subscriptions|recurring|bills)\b|\bsubscriptions? (?:do|have) (?:i|we)\b|\brecurring\b/;

/** What is due: bills, subscriptions or payments expected from today on. */
const BILLS =
  /\b(?:bills?|payments?|subscriptions?|charges?|rent)\b(?: [a-z]+){0,2} due\b|\bdue (?:this|next|before|by|until|till|through|in|today|tomorrow)\b|\bupcoming (?:bills?|payments?|charges?|subscriptions?)\b|\bbills? (?:coming up|to pay|left to pay)\b/;

/** "How much did I invest in VTI", "my gain on AAPL", "what is my portfolio worth": read before the kinds about spending. */
const INVESTED = /\b(?:invest|invested|investing)\b/;
const GAIN = /\b(?:unreali[sz]ed|gains?|loss(?:es)?|profits?|returns?)\b/;
const GAIN_ON = /\b(?:gains?|loss(?:es)?|profits?|returns?|up|down) (?:on|in|from|with)\b/;
const PORTFOLIO = /\bportfolio\b|\binvestments?\b|\bholdings?\b|\bstocks?\b|\bshares?\b|\bpositions?\b|\bsecurit(?:y|ies)\b/;
const INVESTMENT_WORDS =
  /\b(?:invest|invested|investing|unreali[sz]ed|gains?|loss(?:es)?|profits?|returns?|portfolio|investments?|holdings?|stocks?|shares?|positions?|securit(?:y|ies)|worth|value|valued|up|down|cost basis|average cost|end of|as of|so far)\b/g;

/** Which question about investments this is, if any: a gain needs a security or the portfolio to be about. */
function investmentKind(view: string): QuestionKind | null {
  if (INVESTED.test(view)) return "invested";
  if (GAIN_ON.test(view) || (GAIN.test(view) && (PORTFOLIO.test(view) || /\bunreali[sz]ed\b/.test(view)))) return "gain";
  if (PORTFOLIO.test(view)) return "portfolio";
  return null;
}

const SPENDING = /\b(?:spend|spent|spending|expenses?|cost|costs|paid|pay|buy|bought|purchases?|charges?|expenditure)\b/;
/** Being paid is income, though "paid" alone is money out. */
const GOT_PAID = /\b(?:get|got|getting|gets|been|was|were|am|are|is) paid\b|\bpaid me\b|\bpaid us\b/;
const INCOME =
  /\b(?:income|incomes|earn|earned|earnings|made|make|makes|making|received|paid me|salary|salaries|paycheck|deposits?|interest)\b/;

/** Search words: "transactions mentioning refund", "with 'trip' in the notes", a quoted word. */
const SEARCH =
  /\b(?:mentioning|mention|mentions|containing|contain|contains|matching|match|with the words?|named|called|labeled|labelled|saying|that say|that says|with text|notes say|notes saying)\s+(.+?)(?=\s+(?:in (?:the )?(?:name|notes|description)|last|this|since|between|in|during)\b|$)/;

const AMOUNT =
  /\b(over|above|more than|greater than|at least|under|below|less than|at most)\s+\$?(\d[\d,]*(?:\.\d{1,2})?)(?:\s+(?:dollars|bucks))?(?![\d-])/;
const TRANSACTION_NOUN = /\b(?:transactions?|purchases?|payments?|charges?|expenses?)\b/;
const AMOUNT_OPERATORS: Record<string, NonNullable<Reading["amount"]>["operator"]> = {
  over: "greater_than",
  above: "greater_than",
  "more than": "greater_than",
  "greater than": "greater_than",
  "at least": "at_least",
  under: "less_than",
  below: "less_than",
  "less than": "less_than",
  "at most": "at_most",
};

export function read(question: string, vocabulary: FamilyVocabulary, today: string): Reading {
  const reading: Reading = {
    kind: null,
    direction: "expense",
    subjects: [],
    periods: [],
    due: null,
    before: null,
    count: null,
    groupBy: null,
    per: "month",
    order: "largest",
    search: null,
    amount: null,
    history: false,
    compareSubjects: false,
    baseline: false,
    tickers: [],
    unknown: [],
    followUp: false,
  };
  // A quoted word is searched for exactly as written.
  const quoted = /["\u201c\u201d']([^"\u201c\u201d']{2,60})["\u201c\u201d']/.exec(question.replace(/(\w)'(\w)/g, "$1$2"));
  const words = new Words(normalizeText(question));
  const full = words.text;
  if (quoted) {
    reading.search = quoted[1].trim();
    words.consume(new RegExp(`\\b${escape(normalizeText(quoted[1]))}\\b`));
    words.consume(/\b(?:in (?:the )?(?:name|notes|description)|with|mentioning|containing|matching|named|called|the words?|word)\b/g);
  } else {
    const search = SEARCH.exec(full);
    if (search) {
      reading.search = search[1].trim();
      words.consume(new RegExp(`\\b${escape(search[0])}\\b`));
      words.consume(/\bin (?:the )?(?:name|notes|description)\b/);
    }
  }

  // "over $50" before anything else: "more than" with a figure is a bound, not a comparison.
  const amount = AMOUNT.exec(words.view());
  // "more than $500" bounds each transaction only when the question is about transactions; "did I
  // spend more than $500 on dining" asks about a total, which this reading does not answer.
  const bound = amount && (/^(?:over|above|under|below)$/.test(amount[1]) || TRANSACTION_NOUN.test(full));
  if (amount && bound) {
    reading.amount = { operator: AMOUNT_OPERATORS[amount[1]], value: amount[2].replace(/,/g, "") };
    words.consume(new RegExp(escape(amount[0])));
  }

  reading.followUp = /^(?:and|what about|how about|same for|and what about|and for|what of|ok and|now)\b/.test(full);
  // What is due looks forward from today, so its deadline is read before any (backward-looking) period.
  if (BILLS.test(full)) {
    reading.kind = "bills";
    const { deadline, text } = findDeadline(words.view(), today);
    reading.due = deadline;
    if (text) words.consume(new RegExp(escape(text)));
    words.consume(/\b(?:bills?|due|upcoming|coming up|subscriptions?|charges?|payments?|rent|to pay|left|still|recurring)\b/g);
  }
  const before = relativeUnit(words.view());
  if (before) {
    reading.before = { unit: before.unit };
    words.consume(new RegExp(escape(before.text)));
  }
  for (const found of findPeriods(words.view(), today)) {
    reading.periods.push(found.period);
    if (new RegExp(`\\b(?:than|vs|versus|compared (?:to|with)|against) (?:in |during |the )?${escape(found.text)}`).test(full))
      reading.baseline = true;
    words.consume(new RegExp(escape(found.text)));
  }

  const spending = SPENDING.test(full.replace(GOT_PAID, " "));
  if (!reading.kind && RECURRING.test(full) && !/\bhow much\b/.test(full)) {
    reading.kind = "recurring";
    words.consume(/\b(?:recurring|repeating|regular|subscriptions?|bills?)\b/g);
  }
  if (/\bhistory\b|\bover time\b|\btrend\b|\bchanged?\b|\bgrown\b|\bgrow\b/.test(full)) reading.history = true;

  // The family's own names, longest first, before anything else can claim their words.
  const entries = [...vocabulary.entries].sort((a, b) => b.name.length - a.name.length);
  for (const entry of entries) {
    if (words.consumeName(entry.name)) reading.subjects.push({ ...entry });
  }

  for (const phrase of SYNONYM_PHRASES) {
    if (!` ${words.view()} `.includes(` ${phrase} `)) continue;
    const found = vocabulary.synonyms(phrase);
    if (found.length && words.consume(new RegExp(`\\b${escape(phrase)}\\b`)))
      reading.subjects.push(...found.map((entry) => ({ ...entry, matched: phrase })));
  }

  if (!reading.kind) {
    reading.kind = investmentKind(words.view());
    if (reading.kind) words.consume(INVESTMENT_WORDS);
  }
  if (!reading.kind) {
    for (const rule of KIND_RULES) {
      if (words.consume(rule.pattern)) {
        reading.kind = rule.kind;
        break;
      }
    }
  }
  const count =
    /\b(?:top|last|largest|biggest|smallest|recent|latest|first) (\d{1,2})\b|\b(\d{1,2}) (?:largest|biggest|smallest|most|recent|latest|top)\b/.exec(
      full,
    );
  if (count) {
    reading.count = Number(count[1] ?? count[2]);
    words.consume(new RegExp(`\\b${reading.count}\\b`));
  }
  if (/\b(?:smallest|cheapest|lowest|least)\b/.test(full)) reading.order = "smallest";
  if (/\b(?:per|a|each|every) week\b|\bweekly\b/.test(full)) reading.per = "week";
  // "my biggest purchase": one transaction, unless a number says otherwise.
  if (reading.kind === "extremes" && reading.count === null && /\b(?:expense|purchase|transaction|payment|charge)\b(?!s)/.test(full))
    reading.count = 1;
  const group = /\b(merchant|store|shop|place|categor(?:y|ie)|tag|account)s?\b/.exec(full);
  if (reading.kind === "trend") reading.groupBy = /\bweek/.test(full) ? "week" : "month";
  else if (group) {
    const noun = group[1];
    reading.groupBy = noun.startsWith("categor") ? "category" : noun === "tag" ? "tag" : noun === "account" ? "account" : "merchant";
    words.consume(/\b(?:merchants?|stores?|shops?|places?|categor(?:y|ies)|tags?|accounts?)\b/g);
  }
  if ((INCOME.test(full) || GOT_PAID.test(full)) && !spending) reading.direction = "income";
  // "How much did I earn and spend?" asks for both sides: the income statement.
  if (!reading.kind && spending && /\b(?:earn|earned|earnings|income|made|make|received)\b/.test(full)) reading.kind = "income_statement";
  if (!reading.kind) {
    if (/\b(?:how much|total|what did i|what have i)\b/.test(full) && (spending || INCOME.test(full))) reading.kind = "total";
    else if (spending || INCOME.test(full) || GOT_PAID.test(full)) reading.kind = "total";
    else if (reading.amount) reading.kind = "recent";
    else if (reading.search) reading.kind = "search";
  }
  // "Show transactions mentioning X" lists what matches the word, with its totals.
  if (reading.search && reading.kind === "recent") reading.kind = "search";
  words.consume(
    /\b(?:average|avg|typical|typically|monthly|weekly|mean|most|least|largest|biggest|smallest|highest|lowest|top|last|ever|often|save|saved|saving|history|over time|trend|change|changed|grown|grow|net|worth|vs|versus|compare|compared|more|less|than|did|spend|most money|the)\b/g,
  );
  words.consume(/\b(?:what about|how about|same for|what of|and)\b/g);
  // Units of time are understood only where they say how to count ("per month", "how many times");
  // elsewhere ("the first week of March") they are part of a period this reading does not know.
  words.consume(
    /\b(?:per|a|each|every|by|over|in) (?:months?|weeks?|years?|days?)\b|\b(?:months?|weeks?) by (?:months?|weeks?)\b|\btimes?\b|\bfirst \d{1,2}\b/g,
  );

  // What is left: each run of unclaimed words is read as one of the family's names, or reported.
  for (const phrase of words.leftovers(SMALL_WORDS)) {
    // About investments, what is left names securities: the tools match them against the family's.
    if (reading.kind && INVESTMENT_KINDS.includes(reading.kind)) {
      reading.tickers.push(...phrase.split(" "));
      continue;
    }
    const whole = vocabulary.resolve(phrase);
    if (whole.length) {
      reading.subjects.push(...whole);
      continue;
    }
    // Word by word: what resolves is a subject; if nothing does, the run is reported as one phrase.
    const runWords = phrase.split(" ");
    const found = runWords.map((word) => (/^\$?[\d.,]+$/.test(word) ? [] : vocabulary.resolve(word)));
    if (found.every((entries) => entries.length === 0)) {
      reading.unknown.push(phrase);
      continue;
    }
    runWords.forEach((word, index) => (found[index].length ? reading.subjects.push(...found[index]) : reading.unknown.push(word)));
  }
  reading.subjects = dedupe(reading.subjects);
  reading.compareSubjects =
    reading.kind === "compare" &&
    reading.periods.length < 2 &&
    reading.subjects.length >= 2 &&
    !/\bthan (?:last|the|previous|this)\b/.test(full);
  return reading;
}

function dedupe(subjects: Subject[]): Subject[] {
  const seen = new Set<string>();
  return subjects.filter((subject) => !seen.has(subject.id) && seen.add(subject.id));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The words of a question and which of them have been understood. */
class Words {
  private readonly words: string[];
  private readonly used: boolean[];

  constructor(readonly text: string) {
    this.words = text ? text.split(" ") : [];
    this.used = this.words.map(() => false);
  }

  /** The question with understood words blanked out, so later patterns cannot match across them. */
  view(): string {
    return this.words.map((word, index) => (this.used[index] ? "_" : word)).join(" ");
  }

  /** Marks the words of every match (or the first, for a non-global pattern) as understood. */
  consume(pattern: RegExp): boolean {
    const view = this.view();
    let matched = false;
    // A non-global pattern keeps no state between calls, so exec on it is safe; matchAll copies a global one.
    const single = pattern.global ? null : pattern.exec(view);
    for (const match of pattern.global ? view.matchAll(pattern) : single ? [single] : []) {
      if (!match[0].trim()) continue;
      matched = true;
      const first = view.slice(0, match.index).split(" ").length - 1;
      const last = view.slice(0, match.index + match[0].length).split(" ").length - 1;
      for (let index = first; index <= last; index++) this.used[index] = true;
    }
    return matched;
  }

  /** Consumes a family name found as whole words, plural-insensitive ("groceries" for "Grocery"). */
  consumeName(name: string): boolean {
    const target = normalizeText(name).split(" ").map(singularWord);
    if (target.length === 0 || target.join(" ").length < 2) return false;
    for (let start = 0; start + target.length <= this.words.length; start++) {
      let fits = true;
      for (let offset = 0; offset < target.length && fits; offset++) {
        const index = start + offset;
        fits = !this.used[index] && singularWord(this.words[index]) === target[offset];
      }
      if (fits) {
        for (let offset = 0; offset < target.length; offset++) this.used[start + offset] = true;
        return true;
      }
    }
    return false;
  }

  /** Runs of words not yet understood, small words left out. */
  leftovers(small: Set<string>): string[] {
    const runs: string[] = [];
    let run: string[] = [];
    this.words.forEach((word, index) => {
      if (this.used[index] || small.has(word)) {
        if (run.length) runs.push(run.join(" "));
        run = [];
      } else run.push(word);
    });
    if (run.length) runs.push(run.join(" "));
    return runs;
  }
}

function singularWord(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("s") && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}
