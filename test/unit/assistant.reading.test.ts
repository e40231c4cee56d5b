import { findPeriods, previous } from "../../src/finance/assistant/builtin.periods";
import { read } from "../../src/finance/assistant/builtin.reading";
import type { VocabularyEntry } from "../../src/finance/assistant/finance.repository";
import { FamilyVocabulary, normalizeText } from "../../src/finance/assistant/vocabulary";

/** How the built-in assistant reads periods and subjects, on a fixed Wednesday. */
const TODAY = "2026-03-18";

const entries: VocabularyEntry[] = [
  ["category", "Groceries"],
  ["category", "Food & Drink"],
  ["category", "Transportation"],
  ["merchant", "Starbucks"],
  ["merchant", "Chipotle"],
  ["merchant", "Blue Bottle Coffee"],
  ["merchant", "Trader Joe's"],
  ["tag", "Vacation"],
  ["account", "Everyday Checking"],
].map(([kind, name], index) => ({ kind: kind as VocabularyEntry["kind"], name, id: `00000000-0000-4000-8000-00000000000${index}` }));
const vocabulary = new FamilyVocabulary(entries);

describe("periods", () => {
  test.each([
    ["today", "2026-03-18", "2026-03-18"],
    ["yesterday", "2026-03-17", "2026-03-17"],
    ["this week", "2026-03-16", "2026-03-18"],
    ["last week", "2026-03-09", "2026-03-15"],
    ["this month", "2026-03-01", "2026-03-18"],
    ["last month", "2026-02-01", "2026-02-28"],
    ["this quarter", "2026-01-01", "2026-03-18"],
    ["last quarter", "2025-10-01", "2025-12-31"],
    ["this year", "2026-01-01", "2026-03-18"],
    ["year to date", "2026-01-01", "2026-03-18"],
    ["last year", "2025-01-01", "2025-12-31"],
    ["last 7 days", "2026-03-12", "2026-03-18"],
    ["past 2 weeks", "2026-03-05", "2026-03-18"],
    ["last 3 months", "2025-12-01", "2026-02-28"],
    ["in march", "2026-03-01", "2026-03-18"],
    ["in april", "2025-04-01", "2025-04-30"],
    ["october 2024", "2024-10-01", "2024-10-31"],
    ["in may", "2025-05-01", "2025-05-31"],
    ["in 2025", "2025-01-01", "2025-12-31"],
    ["since january", "2026-01-01", "2026-03-18"],
    ["since 2025-06-15", "2025-06-15", "2026-03-18"],
    ["between november and february", "2025-11-01", "2026-02-28"],
    ["from 2025-01-10 to 2025-02-20", "2025-01-10", "2025-02-20"],
  ])("%s is %s to %s", (text, start, end) => {
    const [found] = findPeriods(normalizeText(`spent ${text}`), TODAY);
    expect(found.period).toMatchObject({ start, end });
  });

  test("a bare 'may' is a verb, an amount is not a year, a year to come is no period", () => {
    expect(findPeriods(normalizeText("may i see my spending"), TODAY)).toEqual([]);
    expect(findPeriods(normalizeText("transactions over $2000"), TODAY)).toEqual([]);
    expect(findPeriods(normalizeText("in 2031"), TODAY)).toEqual([]);
  });

  test("two periods in one question come in the order asked", () => {
    const found = findPeriods(normalizeText("this month vs last month"), TODAY);
    expect(found.map((entry) => entry.period.name)).toEqual(["this month", "last month"]);
  });

  test("the period before is of the same kind", () => {
    const [lastMonth] = findPeriods("last month", TODAY);
    expect(previous(lastMonth.period)).toMatchObject({ start: "2026-01-01", end: "2026-01-31" });
    const [lastYear] = findPeriods("last year", TODAY);
    expect(previous(lastYear.period)).toMatchObject({ start: "2024-01-01", end: "2024-12-31" });
  });
});

describe("subjects", () => {
  const names = (question: string) => read(question, vocabulary, TODAY).subjects.map((subject) => subject.name);
  const unknown = (question: string) => read(question, vocabulary, TODAY).unknown;

  test.each([
    ["How much did I spend on groceries?", ["Groceries"]],
    ["How much did I spend on GROCERY?", ["Groceries"]],
    ["How much did I spend at trader joes?", ["Trader Joe's"]],
    ["How much did I spend at Starbucks and Chipotle?", ["Starbucks", "Chipotle"]],
    ["How much did I spend at starbuks?", ["Starbucks"]],
    ["How much did I spend on coffee?", ["Blue Bottle Coffee"]],
    ["How much did I spend eating out?", ["Food & Drink"]],
    ["How much did I spend on restaurants?", ["Food & Drink"]],
    ["How much did I spend on fuel?", ["Transportation"]],
    ["How much did I spend on my vacation from everyday checking?", ["Everyday Checking", "Vacation"]],
  ])("%s names %j", (question, expected) => {
    expect(names(question).sort()).toEqual([...expected].sort());
    expect(unknown(question)).toEqual([]);
  });

  test("a subject that matches nothing is reported, with the closest names", () => {
    expect(unknown("How much did I spend on my pets last month?")).toEqual(["pets"]);
    expect(vocabulary.closest("starbox", 1)).toEqual(["Starbucks"]);
  });

  test.each([
    ["What's my average monthly spending on groceries?", "average"],
    ["Which merchant did I spend the most at this year?", "top"],
    ["Did I spend more this month than last month?", "compare"],
    ["What were my 5 largest expenses?", "extremes"],
    ["When did I last pay Chipotle?", "last_paid"],
    ["How often do I go to Starbucks?", "how_often"],
    ["What subscriptions do I have?", "recurring"],
    ["How much did I spend on subscriptions?", "total"],
    ["What is my net worth?", "net_worth"],
    ["Income vs expenses last month", "income_statement"],
    ["Spending by month this year", "trend"],
    ["How much did I earn and spend last month?", "income_statement"],
    ["What's my net worth trend?", "net_worth"],
  ])("%s is a question of kind %s", (question, kind) => {
    expect(read(question, vocabulary, TODAY).kind).toBe(kind);
  });
});

describe("what is due: bills up to a deadline, read forward from today", () => {
  test.each([
    ["What bills are due this month?", "2026-03-31", "this month"],
    ["Upcoming bills", "2026-03-31", "this month"],
    ["Which bills are due before the 20th?", "2026-03-19", "before 2026-03-20"],
    ["Which bills are due before the 15th?", "2026-04-14", "before 2026-04-15"], // the 15th has passed: next month's
    ["What bills are due by the 18th?", "2026-03-18", "by 2026-03-18"], // today, included
    ["Bills due until April 3", "2026-04-03", "until 2026-04-03"],
    ["Bills due this week", "2026-03-22", "this week"], // to Sunday
    ["What's due next week?", "2026-03-29", "next week"],
    ["Payments due in the next 10 days", "2026-03-28", "in the next 10 days"],
  ])("%s: through %s (%s)", (question, date, name) => {
    const reading = read(question, vocabulary, TODAY);
    expect(reading.kind).toBe("bills");
    expect(reading.due).toEqual({ date, name });
    expect(reading.unknown).toEqual([]);
  });

  test("subscriptions without a deadline are still the recurring payments", () => {
    expect(read("What subscriptions do I have?", vocabulary, TODAY)).toMatchObject({ kind: "recurring", due: null });
  });
});

describe("investments: the portfolio, a gain, what was invested, and the securities named", () => {
  test.each([
    ["What is my portfolio worth?", "portfolio", []],
    ["What are my holdings?", "portfolio", []],
    ["What is my VTI position worth?", "portfolio", ["vti"]],
    ["What is my gain on AAPL?", "gain", ["aapl"]],
    ["What are my unrealised gains?", "gain", []],
    ["How much am I up on Apple?", "gain", ["apple"]],
    ["How much did I invest in VTI this year?", "invested", ["vti"]],
    ["How much have I invested in total?", "invested", []],
  ])("%s is a question of kind %s about %j", (question, kind, tickers) => {
    const reading = read(question, vocabulary, TODAY);
    expect(reading).toMatchObject({ kind, tickers, unknown: [] });
  });

  test("the period is read as for any question: the portfolio at its end, what was invested across it", () => {
    expect(read("What was my portfolio worth at the end of last year?", vocabulary, TODAY)).toMatchObject({
      kind: "portfolio",
      periods: [expect.objectContaining({ start: "2025-01-01", end: "2025-12-31" })],
      tickers: [],
    });
  });

  test("a gain needs something to be on: a gain of income elsewhere is not about investments", () => {
    expect(read("What did I gain last month?", vocabulary, TODAY).kind).not.toBe("gain");
    expect(read("How much did I spend at Starbucks?", vocabulary, TODAY).tickers).toEqual([]);
  });
});
