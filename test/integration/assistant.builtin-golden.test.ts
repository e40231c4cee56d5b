import { QueryTypes } from "sequelize";
import { BuiltinProvider } from "../../src/finance/assistant/builtin.provider";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { seedDemo } from "../../src/app/cli/demo";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * The golden questions of the built-in assistant, over the demo family. Every figure an answer must
 * contain is computed here by its own SQL over the same data (never typed in); periods are computed by
 * PostgreSQL from today. Questions it cannot answer must say what was not understood and carry no
 * figure. The provider is called directly with real tools on the real database: the chat round trip is
 * covered by assistant-builtin.test.ts.
 */
let app: TestApp;
let familyId: string;
let vocabulary: FamilyVocabulary;
const today = new Date().toISOString().slice(0, 10);

const usd = (amount: string | number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(Number(amount));

const TODAY = `'${today}'::date`;
const NOT_TRANSFER = `NOT EXISTS (SELECT 1 FROM transfers x WHERE t.id IN (x.outflow_transaction_id, x.inflow_transaction_id))`;
const range = (start: string, end: string) => `t.date >= (${start})::date AND t.date <= (${end})::date`;
const R = {
  today: range(TODAY, TODAY),
  yesterday: range(`${TODAY} - 1`, `${TODAY} - 1`),
  thisWeek: range(`date_trunc('week', ${TODAY})`, TODAY),
  lastWeek: range(`date_trunc('week', ${TODAY}) - interval '7 days'`, `date_trunc('week', ${TODAY}) - interval '1 day'`),
  thisMonth: range(`date_trunc('month', ${TODAY})`, TODAY),
  lastMonth: range(`date_trunc('month', ${TODAY}) - interval '1 month'`, `date_trunc('month', ${TODAY}) - interval '1 day'`),
  monthBefore: range(`date_trunc('month', ${TODAY}) - interval '2 months'`, `date_trunc('month', ${TODAY}) - interval '1 month 1 day'`),
  thisQuarter: range(`date_trunc('quarter', ${TODAY})`, TODAY),
  lastQuarter: range(`date_trunc('quarter', ${TODAY}) - interval '3 months'`, `date_trunc('quarter', ${TODAY}) - interval '1 day'`),
  thisYear: range(`date_trunc('year', ${TODAY})`, TODAY),
  lastYear: range(`date_trunc('year', ${TODAY}) - interval '1 year'`, `date_trunc('year', ${TODAY}) - interval '1 day'`),
  last3Months: range(`date_trunc('month', ${TODAY}) - interval '3 months'`, `date_trunc('month', ${TODAY}) - interval '1 day'`),
  last30Days: range(`${TODAY} - 29`, TODAY),
  last2Weeks: range(`${TODAY} - 13`, TODAY),
  all: "true",
};

/** The month `monthsAgo` before this one: its English name, year and SQL range. */
function monthAgo(monthsAgo: number) {
  const now = new Date(`${today}T00:00:00Z`);
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsAgo, 1));
  const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0));
  const name = start.toLocaleString("en-US", { month: "long", timeZone: "UTC" });
  const iso = (date: Date) => date.toISOString().slice(0, 10);
  return { name, year: start.getUTCFullYear(), range: range(`'${iso(start)}'`, `'${iso(end)}'`), start: iso(start), end: iso(end) };
}
const thisYear = Number(today.slice(0, 4));

const category = (name: string) => `EXISTS (SELECT 1 FROM categories c WHERE c.id = t.category_id AND c.name = '${name}')`;
const merchant = (...names: string[]) =>
  `EXISTS (SELECT 1 FROM merchants m WHERE m.id = t.merchant_id AND m.name IN (${names.map((n) => `'${n.replace(/'/g, "''")}'`).join(", ")}))`;
const tag = (name: string) =>
  `EXISTS (SELECT 1 FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id WHERE tt.transaction_id = t.id AND g.name = '${name}')`;
const account = (name: string) => `EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.account_id AND a.name = '${name}')`;
const EXPENSE = `t.amount >= 0 AND ${NOT_TRANSFER}`;
const INCOME = `t.amount < 0 AND ${NOT_TRANSFER}`;

async function value(sql: string): Promise<string> {
  const [row] = await app.runtime.sequelize.query<{ value: string | null }>(sql, { bind: [familyId], type: QueryTypes.SELECT });
  return row.value ?? "0";
}
const spent = (where: string, when: string) =>
  value(`SELECT coalesce(sum(t.amount), 0) AS value FROM transactions t WHERE t.family_id = $1 AND ${EXPENSE} AND ${where} AND ${when}`);
const earned = (where: string, when: string) =>
  value(`SELECT coalesce(sum(-t.amount), 0) AS value FROM transactions t WHERE t.family_id = $1 AND ${INCOME} AND ${where} AND ${when}`);
const counted = (kind: string, where: string, when: string) =>
  value(`SELECT count(*) AS value FROM transactions t WHERE t.family_id = $1 AND ${kind} AND ${where} AND ${when}`);

/** Asks the built-in assistant; earlier questions of the same chat come first. */
async function ask(...questions: string[]): Promise<string> {
  const tools = new ToolRunner(
    { familyId, currency: "USD", today, vocabulary },
    {
      finance: app.runtime.services.repositories.finance,
      accounts: app.runtime.services.repositories.accounts,
    },
  );
  const history = questions.flatMap((content, index) => [
    { role: "user" as const, content },
    ...(index < questions.length - 1 ? [{ role: "assistant" as const, content: "(answer)" }] : []),
  ]);
  const { content } = await new BuiltinProvider().respond({
    model: "builtin",
    history,
    context: { currency: "USD", today, vocabulary },
    tools,
    onDelta: () => undefined,
  });
  return content;
}

beforeAll(async () => {
  app = await startTestApp();
  const demo = await seedDemo(app.runtime.sequelize, app.runtime.services);
  familyId = demo.family_id;
  vocabulary = new FamilyVocabulary(await app.runtime.services.repositories.finance.vocabulary(familyId));
}, 60_000);
afterAll(() => app.stop());

type Figure = () => Promise<string>;
/** A question and what its answer must contain: figures (as **$x**) and phrases. */
type Golden = [question: string | string[], figures: Figure[], phrases?: Array<string | RegExp | Figure>];

const m2 = monthAgo(2);
const m3 = monthAgo(3);
const m5 = monthAgo(5);
const m4 = monthAgo(4);

const TOTALS: Golden[] = [
  ["How much did I spend on groceries last month?", [() => spent(category("Groceries"), R.lastMonth)], ["on Groceries last month ("]],
  ["How much did I spend on groceries this month?", [() => spent(category("Groceries"), R.thisMonth)]],
  ["How much did I spend on groceries this year?", [() => spent(category("Groceries"), R.thisYear)]],
  ["How much did I spend on groceries last year?", [() => spent(category("Groceries"), R.lastYear)]],
  [
    "How much did I spend on dining out last month?",
    [() => spent(category("Food & Drink"), R.lastMonth)],
    ["Food & Drink (matched 'dining out')"],
  ],
  [
    "How much did I spend eating out this year?",
    [() => spent(category("Food & Drink"), R.thisYear)],
    ["Food & Drink (matched 'eating out')"],
  ],
  [`What did I spend at restaurants in ${m2.name}?`, [() => spent(category("Food & Drink"), m2.range)], [`${m2.start} to ${m2.end}`]],
  [
    "How much did I spend on coffee last month?",
    [() => spent(merchant("Blue Bottle Coffee"), R.lastMonth)],
    ["Blue Bottle Coffee (matched 'coffee')"],
  ],
  ["How much did I spend at Starbucks last month?", [() => spent(merchant("Starbucks"), R.lastMonth)]],
  [
    "How much did I spend at Starbucks and Chipotle this year?",
    [() => spent(merchant("Starbucks", "Chipotle"), R.thisYear)],
    ["at Starbucks and Chipotle"],
  ],
  ["How much did I spend at Amazon this year?", [() => spent(merchant("Amazon"), R.thisYear)], ["at Amazon this year"]],
  [`How much did I spend at Amazon in ${thisYear - 1}?`, [() => spent(merchant("Amazon"), R.lastYear)]],
  ["Whole Foods spending in the last 3 months", [() => spent(merchant("Whole Foods"), R.last3Months)]],
  ["How much have I spent on Uber in the past 30 days?", [() => spent(merchant("Uber"), R.last30Days)]],
  ["How much did I spend on gas last month?", [() => spent(category("Transportation"), R.lastMonth)], ["Transportation (matched 'gas')"]],
  ["How much did I spend on essential things last month?", [() => spent(tag("Essential"), R.lastMonth)], ["tagged Essential"]],
  ["How much did my vacation cost this year?", [() => spent(tag("Vacation"), R.thisYear)]],
  ["How much did I spend on my rewards credit card last month?", [() => spent(account("Rewards Credit Card"), R.lastMonth)]],
  ["How much did I spend last month?", [() => spent("true", R.lastMonth)]],
  ["What did I spend last week?", [() => spent("true", R.lastWeek)]],
  ["How much did I spend this quarter?", [() => spent("true", R.thisQuarter)]],
  ["How much did I spend last quarter?", [() => spent("true", R.lastQuarter)]],
  ["How much have I spent since January?", [() => spent("true", R.thisYear)]],
  [
    `How much did I spend on groceries between ${m4.name} and ${m2.name}?`,
    [() => spent(category("Groceries"), range(`'${m4.start}'`, `'${m2.end}'`))],
  ],
  [
    `How much did I spend at Starbuks in ${m3.name} ${m3.year}?`,
    [() => spent(merchant("Starbucks"), m3.range)],
    ["Starbucks (matched 'starbuks')"],
  ],
  ["grocery spending last month", [() => spent(category("Groceries"), R.lastMonth)]],
  ["How much did I pay in rent last year?", [() => spent(category("Rent"), R.lastYear)]],
  [`How much were my utilities in ${m5.name}?`, [() => spent(category("Utilities"), m5.range)]],
  ["How much did I spend on healthcare in the last 2 weeks?", [() => spent(category("Healthcare"), R.last2Weeks)]],
  ["What was my income last month?", [() => earned("true", R.lastMonth)]],
  ["How much salary did I get this year?", [() => earned(category("Salary"), R.thisYear)]],
  ["How much interest did I earn last year?", [() => earned(category("Interest"), R.lastYear)]],
  [`How much did I earn in ${thisYear - 1}?`, [() => earned("true", R.lastYear)]],
  ["How much income did I receive this quarter?", [() => earned("true", R.thisQuarter)]],
];

const spendCount = (where: string, when: string) => counted(EXPENSE, where, when);

/** The latest 1 March that has begun, as PostgreSQL reads it from today. */
const MARCH_FIRST = `make_date(extract(year FROM ${TODAY})::int - CASE WHEN ${TODAY} < make_date(extract(year FROM ${TODAY})::int, 3, 1) THEN 1 ELSE 0 END, 3, 1)`;

/**
 * An investment account's holdings' value at the end of a day: a provider's newest snapshot on or before
 * it, or, on a manual account, its trades' holdings that day: each security's quantity at the newest price
 * on or before the day, else its newest trade's price (a day's sells after its buys), to 4 places.
 */
const holdingsAt = (day: string) =>
  `(coalesce((SELECT sum(h.value) FROM holdings h WHERE h.account_id = a.id
                AND h.date = (SELECT max(h2.date) FROM holdings h2 WHERE h2.account_id = a.id AND h2.date <= ${day})), 0)
    + coalesce((SELECT sum(round(q.held * coalesce(
                  (SELECT p.price FROM security_prices p WHERE p.security_id = q.security_id AND p.currency = a.currency AND p.date <= ${day}
                    ORDER BY p.date DESC LIMIT 1),
                  (SELECT t.price FROM trades t WHERE t.account_id = a.id AND t.security_id = q.security_id AND t.date <= ${day}
                    ORDER BY t.date DESC, t.qty < 0 DESC, t.created_at DESC, t.id DESC LIMIT 1)), 4))
                  FROM (SELECT t.security_id, sum(t.qty) AS held FROM trades t WHERE t.account_id = a.id AND t.date <= ${day} GROUP BY t.security_id) q), 0))`;

/**
 * An account's balance at the end of a day, from its own data: its newest valuation on or before the
 * day (the opening anchor, or the house's and the car's newer values) moved by every transaction and
 * trade after it up to the day (money out lowers an asset and raises what a liability owes), and an
 * investment's by how its holdings' value moved since.
 */
const balanceOn = (accountName: string | null, day: string) =>
  `SELECT sum(CASE WHEN a.classification = 'asset' THEN 1 ELSE -1 END * (v.amount + coalesce((SELECT sum(CASE WHEN a.classification = 'asset' THEN -t.amount ELSE t.amount END)
            FROM (SELECT account_id, date, amount FROM transactions UNION ALL SELECT account_id, date, amount FROM trades) t
           WHERE t.account_id = a.id AND t.date > v.date AND t.date <= ${day}), 0)
          + CASE WHEN a.account_type IN ('investment', 'crypto') THEN ${holdingsAt(day)} - ${holdingsAt("v.date")} ELSE 0 END)) AS value
     FROM accounts a
     JOIN LATERAL (SELECT v.date, v.amount FROM valuations v WHERE v.account_id = a.id AND v.date <= ${day} ORDER BY v.date DESC LIMIT 1) v ON true
    WHERE a.family_id = $1 ${accountName ? `AND a.name = '${accountName}'` : ""}`;

const KINDS: Golden[] = [
  ["What was my checking balance on 1 March?", [() => value(balanceOn("Everyday Checking", MARCH_FIRST))], ["Balance on "]],
  [
    "How did my net worth change this year?",
    [
      async () =>
        Math.abs(
          Number(await value(balanceOn(null, TODAY))) - Number(await value(balanceOn(null, `date_trunc('year', ${TODAY})::date - 1`))),
        ).toFixed(2),
      () => value(balanceOn(null, TODAY)),
    ],
    [/went (up|down) by/],
  ],
  [
    "How many transactions did I have at Starbucks last month?",
    [() => spent(merchant("Starbucks"), R.lastMonth)],
    [async () => `**${await spendCount(merchant("Starbucks"), R.lastMonth)} transaction`],
  ],
  [
    "What's my average monthly spending on groceries?",
    [async () => (Number(await spent(category("Groceries"), `t.date < date_trunc('month', ${TODAY})`)) / 17).toFixed(2)],
    ["over 17 months"],
  ],
  [
    "What is my average monthly spending on dining out this year?",
    [async () => (Number(await spent(category("Food & Drink"), R.thisYear)) / Number(today.slice(5, 7))).toFixed(2)],
  ],
  [
    "How much do I spend on rent per month?",
    [async () => (Number(await spent(category("Rent"), `t.date < date_trunc('month', ${TODAY})`)) / 17).toFixed(2)],
  ],
  [
    "What is my average monthly income?",
    [async () => (Number(await earned("true", `t.date < date_trunc('month', ${TODAY})`)) / 17).toFixed(2)],
  ],
  [
    "Average weekly spending at Starbucks last month",
    [
      async () =>
        (
          Number(await spent(merchant("Starbucks"), R.lastMonth)) /
          Math.ceil(new Date(Date.UTC(thisYear, Number(today.slice(5, 7)) - 1, 0)).getUTCDate() / 7)
        ).toFixed(2),
    ],
    ["per week"],
  ],
  ["Did I spend more this month than last month?", [() => spent("true", R.thisMonth), () => spent("true", R.lastMonth)]],
  [
    "Groceries this month vs last month",
    [() => spent(category("Groceries"), R.thisMonth), () => spent(category("Groceries"), R.lastMonth)],
  ],
  [
    "Did I spend more on dining out this year than last year?",
    [() => spent(category("Food & Drink"), R.thisYear), () => spent(category("Food & Drink"), R.lastYear)],
  ],
  ["Compare my spending last month with the month before", [() => spent("true", R.lastMonth), () => spent("true", R.monthBefore)]],
  [
    "How much did I spend at Amazon this year compared to last year?",
    [() => spent(merchant("Amazon"), R.thisYear), () => spent(merchant("Amazon"), R.lastYear)],
  ],
  [
    "Which merchant did I spend the most at this year?",
    [() => topOf("merchant", R.thisYear, "amount")],
    [() => topOf("merchant", R.thisYear, "key")],
  ],
  [
    "Top 3 categories last month",
    [() => topOf("category", R.lastMonth, "amount")],
    [() => topOf("category", R.lastMonth, "key"), "Top 3:"],
  ],
  ["What are my top 5 merchants last year?", [() => topOf("merchant", R.lastYear, "amount")]],
  ["Which tag did I spend the most on this year?", [() => topOf("tag", R.thisYear, "amount")]],
  ["Which category did I spend the most on this month?", [() => topOf("category", R.thisMonth, "amount")]],
  ["Where did I spend the most last month?", [() => topOf("merchant", R.lastMonth, "amount")]],
  [`What were my 5 largest expenses in ${m2.name}?`, [() => extreme("max", "true", m2.range)]],
  ["What were my biggest expenses last month?", [() => extreme("max", "true", R.lastMonth)], ["1. **"]],
  ["What were my smallest expenses last month?", [() => extreme("min", "true", R.lastMonth)]],
  ["What was my largest purchase at Amazon this year?", [() => extreme("max", merchant("Amazon"), R.thisYear)]],
  ["3 biggest transactions on travel last year", [() => extreme("max", category("Travel"), R.lastYear)]],
  ["Income vs expenses last month", [() => earned("true", R.lastMonth), () => spent("true", R.lastMonth)], ["net income"]],
  ["What is my savings rate this year?", [() => earned("true", R.thisYear), () => spent("true", R.thisYear)], ["savings rate of"]],
  ["Cash flow last quarter", [() => earned("true", R.lastQuarter), () => spent("true", R.lastQuarter)]],
  [
    "How much did I save last month?",
    [async () => (Number(await earned("true", R.lastMonth)) - Number(await spent("true", R.lastMonth))).toFixed(2)],
  ],
  [
    "What are my account balances?",
    [() => value(`SELECT balance AS value FROM accounts WHERE family_id = $1 AND name = 'Brokerage'`)],
    ["Everyday Checking"],
  ],
  [
    "What is my net worth?",
    [
      () =>
        value(`SELECT sum(CASE WHEN classification = 'asset' THEN balance ELSE -balance END) AS value FROM accounts WHERE family_id = $1`),
    ],
  ],
  [
    "How has my net worth changed over time?",
    [
      () =>
        value(`SELECT sum(CASE WHEN classification = 'asset' THEN balance ELSE -balance END) AS value FROM accounts WHERE family_id = $1`),
    ],
    ["Net worth at each month end"],
  ],
  [
    "What is the balance of my high-yield savings?",
    [() => value(`SELECT balance AS value FROM accounts WHERE family_id = $1 AND name = 'High-Yield Savings'`)],
  ],
  [
    "What subscriptions do I have?",
    [() => latest(merchant("Netflix")), () => latest(merchant("Spotify"))],
    ["Netflix", "Spotify", "Apple", "Monthly rent"],
  ],
  ["List my recurring payments", [() => latest(merchant("Netflix"))], ["recurring payment"]],
  ["When did I last pay Netflix?", [() => latest(merchant("Netflix"))], [() => latestDate(merchant("Netflix"))]],
  ["When did I last buy something at Costco?", [() => latest(merchant("Costco"))], [() => latestDate(merchant("Costco"))]],
  [
    "How often do I go to Starbucks?",
    [() => spent(merchant("Starbucks"), R.all)],
    [async () => `**${await spendCount(merchant("Starbucks"), R.all)} time`],
  ],
  [
    "How many times did I pay for Uber this year?",
    [() => spent(merchant("Uber"), R.thisYear)],
    [async () => `**${await spendCount(merchant("Uber"), R.thisYear)} time`],
  ],
  [
    'Show transactions mentioning "Summer trip"',
    [],
    [async () => `**${await counted("true", "t.notes ILIKE '%Summer trip%'", R.all)} transaction`],
  ],
  [
    "Find transactions containing payroll",
    [],
    [async () => `**${await counted(NOT_TRANSFER, "t.name ILIKE '%payroll%'", R.all)} transaction`],
  ],
  [
    "Transactions with 'reimbursement' last year",
    [],
    [async () => `**${await counted(NOT_TRANSFER, "t.name ILIKE '%reimbursement%'", R.lastYear)} transaction`],
  ],
  [
    "Show my recent transactions",
    [],
    [
      async () =>
        `| ${await value(`SELECT t.name AS value FROM transactions t WHERE t.family_id = $1 AND ${NOT_TRANSFER} ORDER BY t.date DESC, t.created_at DESC, t.id DESC LIMIT 1`)} |`,
    ],
  ],
  ["Show my last 5 transactions", [], ["Your 5 most recent transactions"]],
  ["How much did I spend today?", [], [/spen[dt].*today \(/]],
  ["How much did I spend yesterday?", [], [/yesterday \(/]],
  ["Spending this week", [], [/this week \(/]],
];

/** Everyday phrasings. */
const PHRASINGS: Golden[] = [
  ["How much did I spend on food last month?", [() => spent(category("Food & Drink"), R.lastMonth)], ["Food & Drink (matched 'food')"]],
  [
    "how much do I spend on amazon each month",
    [async () => (Number(await spent(merchant("Amazon"), `t.date < date_trunc('month', ${TODAY})`)) / 17).toFixed(2)],
  ],
  ["What was my biggest purchase this year?", [() => extreme("max", "true", R.thisYear)], [/^Your largest expenses[^\n]*\n\n1\. [^\n]*$/]],
  ["how much money did i make this year", [() => earned("true", R.thisYear)], ["Your income this year"]],
  [
    "how much do i have in savings",
    [() => value(`SELECT balance AS value FROM accounts WHERE family_id = $1 AND name = 'High-Yield Savings'`)],
    [/^Balance:\n\n- High-Yield Savings: [^\n]*$/],
  ],
  ["spending on uber vs lyft this year", [() => spent(merchant("Uber"), R.thisYear), () => spent(merchant("Lyft"), R.thisYear)]],
  [
    "How much did I spend on transportation over $50 last month?",
    [() => spent(`${category("Transportation")} AND t.amount > 50`, R.lastMonth)],
    ["in amounts over $50.00"],
  ],
  ["Groceries purchases under 20 dollars this year", [() => spent(`${category("Groceries")} AND t.amount < 20`, R.thisYear)]],
  [
    "How much did I spend on groceries last month? I want to budget better.",
    [() => spent(category("Groceries"), R.lastMonth)],
    ['I answer one question per message, so I left out "I want to budget better."'],
  ],
  [
    "What was my net worth last year?",
    // Read from the daily balances: where it stood when last year ended, and how it moved during it.
    [() => value(balanceOn(null, `date_trunc('year', ${TODAY})::date - 1`))],
    ["last year (", "at the end of"],
  ],
  [
    "What is the balance of my checking account at Starbucks?",
    [() => value(`SELECT balance AS value FROM accounts WHERE family_id = $1 AND name = 'Everyday Checking'`)],
    ["does not narrow to Starbucks: it covers account balances as of today"],
  ],
  ["How much did I get paid last month?", [() => earned("true", R.lastMonth)], ["Your income last month"]],
  ["What's my biggest expense category?", [() => topOf("category", R.thisMonth, "amount")], [() => topOf("category", R.thisMonth, "key")]],
  [
    "How much do I owe on my credit card?",
    [() => value(`SELECT balance AS value FROM accounts WHERE family_id = $1 AND name = 'Rewards Credit Card'`)],
    ["owed"],
  ],
  [
    "List transactions over $500",
    [
      () =>
        value(
          `SELECT abs(t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND ${NOT_TRANSFER} AND abs(t.amount) > 500 ORDER BY t.date DESC, t.created_at DESC, t.id DESC LIMIT 1`,
        ),
    ],
    ["in amounts over $500.00"],
  ],
  [
    "Am I spending more on groceries than last month?",
    [() => spent(category("Groceries"), R.thisMonth), () => spent(category("Groceries"), R.lastMonth)],
    [/this month \(.*last month \(/],
  ],
  ["Did I spend more than last year?", [() => spent("true", R.thisYear), () => spent("true", R.lastYear)]],
  ["How much cash do I have?", [() => value(`SELECT balance AS value FROM accounts WHERE family_id = $1 AND name = 'Everyday Checking'`)]],
  ["Spending by month this year", [() => spent("true", R.lastMonth), () => spent("true", R.thisYear)], [/by month this year \(/]],
  [
    "Groceries month by month",
    [
      () => spent(category("Groceries"), R.lastMonth),
      () =>
        spent(
          category("Groceries"),
          range(`date_trunc('month', ${TODAY}) - interval '12 months'`, `date_trunc('month', ${TODAY}) - interval '1 day'`),
        ),
    ],
    ["in the last 12 months ("],
  ],
  [
    "Income by month last year",
    [() => earned("true", range(`date_trunc('year', ${TODAY}) - interval '1 month'`, `date_trunc('year', ${TODAY}) - interval '1 day'`))],
    [`December ${thisYear - 1}`],
  ],
];

const FOLLOW_UPS: Golden[] = [
  [
    ["What subscriptions do I have?", "What about Chipotle?"],
    [() => latest(merchant("Netflix"))],
    ["This answer does not narrow to Chipotle"],
  ],
  [["How much did I spend on groceries last month?", "And the month before?"], [() => spent(category("Groceries"), R.monthBefore)]],
  [
    ["How much did I spend at Starbucks this year?", "What about Chipotle?"],
    [() => spent(merchant("Chipotle"), R.thisYear)],
    ["at Chipotle"],
  ],
  [["What was my income last month?", "And last year?"], [() => earned("true", R.lastYear)]],
  [["Which merchant did I spend the most at this year?", "and last year?"], [() => topOf("merchant", R.lastYear, "amount")]],
  [["How much did I spend on dining out this year?", "how about groceries?"], [() => spent(category("Groceries"), R.thisYear)]],
];

/** Each not-understood question, the word the answer must name, and no dollar figure anywhere. */
const NOT_UNDERSTOOD: Array<[string | string[], string]> = [
  ["What is the balance of my piggy bank?", '"piggy'],
  ["What is my net worth in bitcoin?", '"bitcoin"'],
  ["Income vs expenses for my boat last month", '"boat"'],
  ["What subscriptions do I have for the gym?", '"gym"'],
  ["Show my recent transactions at Foobar", '"foobar"'],
  ["What were my smallest expenses on horses this year?", '"horses"'],
  [["How much did I spend at Starbucks this year?", "What about the moon?"], '"moon"'],
  ["How much did I spend on my pets last month?", '"pets"'],
  ["How much did I spend on hobbies this year?", '"hobbies"'],
  ["How much did I spend on unicorns at Starbucks?", '"unicorns"'],
  ["What's my average monthly spending on gardening?", '"gardening"'],
  ["What were my largest expenses at Foobar Inc last month?", '"foobar'],
  ["When did I last pay the plumber?", '"plumber"'],
  ["How often do I buy lottery tickets?", '"lottery'],
  ["Compare my spending on yachts this year with last year", '"yachts"'],
  ["Which merchant did I spend the most at for my dog?", '"dog"'],
  ["How many times did I go bowling this year?", '"bowling"'],
  ["What's the weather like tomorrow?", "I don't understand"],
  ["Tell me a joke", "I don't understand"],
  ["Did I spend more than $500 on dining this month?", '"$500"'],
  ["What did I spend on travel last summer?", 'I couldn\'t read "summer" as a period I know'],
  ["How much did I spend in the first week of March?", 'I couldn\'t read "first week" as a period I know'],
];

async function topOf(by: "merchant" | "category" | "tag", when: string, what: "amount" | "key"): Promise<string> {
  const join = {
    merchant: "JOIN merchants g ON g.id = t.merchant_id",
    category: "JOIN categories g ON g.id = t.category_id",
    tag: "JOIN transaction_tags gt ON gt.transaction_id = t.id JOIN tags g ON g.id = gt.tag_id",
  }[by];
  const [row] = await app.runtime.sequelize.query<{ key: string; amount: string }>(
    `SELECT g.name AS key, sum(t.amount) AS amount FROM transactions t ${join} WHERE t.family_id = $1 AND ${EXPENSE} AND ${when}
      GROUP BY g.name ORDER BY sum(t.amount) DESC LIMIT 1`,
    { bind: [familyId], type: QueryTypes.SELECT },
  );
  return row[what];
}

const extreme = (fn: "max" | "min", where: string, when: string) =>
  value(`SELECT ${fn}(t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND ${EXPENSE} AND ${where} AND ${when}`);
const latest = (where: string) =>
  value(
    `SELECT t.amount AS value FROM transactions t WHERE t.family_id = $1 AND ${EXPENSE} AND ${where} ORDER BY t.date DESC, t.created_at DESC LIMIT 1`,
  );
const latestDate = (where: string) =>
  value(`SELECT to_char(max(t.date), 'YYYY-MM-DD') AS value FROM transactions t WHERE t.family_id = $1 AND ${EXPENSE} AND ${where}`);

async function check([question, figures, phrases = []]: Golden): Promise<void> {
  const questions = Array.isArray(question) ? question : [question];
  const content = await ask(...questions);
  for (const figure of figures) expect(content).toMatch(new RegExp(escape(usd(await figure()))));
  for (const phrase of phrases) {
    if (typeof phrase === "function") expect(content).toContain(await phrase());
    else if (typeof phrase === "string") expect(content).toContain(phrase);
    else expect(content).toMatch(phrase);
  }
  expect(content).not.toMatch(/couldn't find|don't understand/);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const label = (golden: Golden) => (Array.isArray(golden[0]) ? golden[0].join(" → ") : golden[0]);

describe("golden questions on the demo family", () => {
  test.each(TOTALS.map((golden) => [label(golden), golden] as const))("totals: %s", async (_label, golden) => check(golden));
  test.each(KINDS.map((golden) => [label(golden), golden] as const))("kinds: %s", async (_label, golden) => check(golden));
  test.each(PHRASINGS.map((golden) => [label(golden), golden] as const))("phrasing: %s", async (_label, golden) => check(golden));
  test.each(FOLLOW_UPS.map((golden) => [label(golden), golden] as const))("follow-up: %s", async (_label, golden) => check(golden));
  test.each(NOT_UNDERSTOOD.map(([question, named]) => [[question].flat().join(" → "), question, named] as const))(
    "not understood, no figure: %s",
    async (_label, question, named) => {
      const content = await ask(...[question].flat());
      expect(content).toContain(named);
      // No figure, apart from a figure of the question it quotes back.
      expect(content.replace(named, "")).not.toMatch(/\$\d/);
    },
  );
});

describe("tool arguments name the family's own things", () => {
  const tools = () =>
    new ToolRunner(
      { familyId, currency: "USD", today, vocabulary },
      {
        finance: app.runtime.services.repositories.finance,
        accounts: app.runtime.services.repositories.accounts,
      },
    );

  test("an unknown name is refused with the closest names, never widened to everything", async () => {
    const result = await tools().call("get_transactions", { type: "expense", categories: ["Pets"] });
    expect(result).toEqual({ error: expect.stringMatching(/^Unknown names: no category named "Pets" \(closest: .+\)$/) });
  });

  test("a synonym or a typo is read as the family's name and says so", async () => {
    const result = await tools().call("get_transactions", {
      type: "expense",
      categories: ["dining out"],
      merchants: ["Starbuks"],
      per_page: 1,
    });
    expect(result.names_matched).toEqual([
      { asked: "dining out", kind: "category", names: ["Food & Drink"] },
      { asked: "Starbuks", kind: "merchant", names: ["Starbucks"] },
    ]);
    const expected = await spent(`${category("Food & Drink")} AND ${merchant("Starbucks")}`, R.all);
    expect(Number((result.totals as Array<{ expense: string }>)[0].expense)).toBeCloseTo(Number(expected), 2);
  });

  test("summaries group by month with exact sums", async () => {
    const result = await tools().call("summarize_transactions", {
      type: "expense",
      group_by: "month",
      start_date: monthAgo(1).start,
      end_date: monthAgo(1).end,
    });
    const groups = result.groups as Array<{ key: string; expense: string }>;
    expect(groups).toHaveLength(1);
    expect(Number(groups[0].expense)).toBeCloseTo(Number(await spent("true", R.lastMonth)), 2);
  });
});
