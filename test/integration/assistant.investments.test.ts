import { BuiltinProvider } from "../../src/finance/assistant/builtin.provider";
import { OpenAIProvider } from "../../src/finance/assistant/openai.provider";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { upstreamPrice } from "../helpers/ledger-oracle";
import { graphqlClient } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlThroughApp } from "../helpers/sql";

/**
 * The assistant's portfolio answers: what the portfolio is worth, the gain on a security and what was
 * invested in one, by the built-in assistant and through a model server (the OpenAI fake) calling the
 * same tools. Every figure is computed here by SQL of its own from the trades, prices and opening
 * balances (average cost per security, a day's buys first, valued as upstream's calculator values it: at
 * the price of the newest day on or before it with a stored or a trade price, the stored first), never
 * typed in. Another family trading the same and other securities counts for nothing; a
 * ticker the family has never held gets no figure.
 */
let fake: FakeOpenAI;
let app: TestApp;
let family: TestUser;
const today = new Date().toISOString().slice(0, 10);
const year = Number(today.slice(0, 4));
const lastYearEnd = `${year - 1}-12-31`;
const usd = (amount: string | number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(Number(amount));

const sql = sqlThroughApp(() => app.runtime.sequelize);

type Held = { account: string; ticker: string; held: string; cost: string; value: string };

/** The family's holdings at the end of $2, from its trades and the prices alone. */
const HOLDINGS = `
  WITH RECURSIVE ordered AS (
    SELECT t.account_id, t.security_id, t.qty, t.price,
           row_number() OVER (PARTITION BY t.account_id, t.security_id ORDER BY t.date, t.qty < 0, t.created_at, t.id) AS n
      FROM trades t JOIN accounts a ON a.id = t.account_id
     WHERE t.family_id = $1 AND t.date <= $2::date AND a.account_type IN ('investment', 'crypto')
  ),
  walk AS (
    SELECT account_id, security_id, n, qty::numeric AS held, round(qty * price, 4)::numeric AS cost
      FROM ordered WHERE n = 1
    UNION ALL
    SELECT o.account_id, o.security_id, o.n, (w.held + o.qty)::numeric,
           (CASE WHEN o.qty > 0 THEN round(w.cost + o.qty * o.price, 4)
                 WHEN w.held + o.qty = 0 THEN 0
                 ELSE round(w.cost * (w.held + o.qty) / w.held, 4) END)::numeric
      FROM walk w JOIN ordered o ON o.account_id = w.account_id AND o.security_id = w.security_id AND o.n = w.n + 1
  ),
  final AS (SELECT DISTINCT ON (account_id, security_id) * FROM walk ORDER BY account_id, security_id, n DESC)
  SELECT a.name AS account, s.ticker, trim_scale(f.held)::text AS held, f.cost::text AS cost,
         round(f.held * ${upstreamPrice("f.account_id", "f.security_id", "'USD'", "$2::date")}, 4)::text AS value
    FROM final f JOIN accounts a ON a.id = f.account_id JOIN securities s ON s.id = f.security_id
   WHERE f.held <> 0 ORDER BY a.name, s.ticker`;

/** The cash of the family's investment accounts at the end of $2: their opening balances less what their trades took. */
const CASH = `
  SELECT sum(v.amount - coalesce((SELECT sum(t.amount) FROM trades t WHERE t.account_id = a.id AND t.date <= $2::date), 0))::text AS cash
    FROM accounts a JOIN valuations v ON v.account_id = a.id AND v.kind = 'opening_anchor'
   WHERE a.family_id = $1 AND a.account_type IN ('investment', 'crypto')`;

async function portfolioBySql(user: TestUser, day: string) {
  const held = await sql<Held>(HOLDINGS, [user.familyId, day]);
  const [{ cash }] = await sql<{ cash: string }>(CASH, [user.familyId, day]);
  const holdings = held.reduce((sum, row) => sum + Math.round(Number(row.value) * 10_000), 0) / 10_000;
  return { held, cash: Number(cash), holdings, value: Number(cash) + holdings };
}

/** Bought, sold (after fees) and net, of one ticker's trades in the family between two days, by SQL. */
async function tradesBySql(user: TestUser, ticker: string, from: string, to: string) {
  const [row] = await sql<{ bought: string; sold: string; net: string; buys: string; qty: string; sold_qty: string }>(
    `SELECT coalesce(sum(t.amount) FILTER (WHERE t.qty > 0), 0)::text AS bought, coalesce(-sum(t.amount) FILTER (WHERE t.qty < 0), 0)::text AS sold,
            coalesce(sum(t.amount), 0)::text AS net, count(*) FILTER (WHERE t.qty > 0)::text AS buys,
            trim_scale(coalesce(sum(t.qty) FILTER (WHERE t.qty > 0), 0))::text AS qty,
            trim_scale(coalesce(-sum(t.qty) FILTER (WHERE t.qty < 0), 0))::text AS sold_qty
       FROM trades t JOIN securities s ON s.id = t.security_id
      WHERE t.family_id = $1 AND s.ticker = $2 AND t.date BETWEEN $3::date AND $4::date AND t.qty <> 0`,
    [user.familyId, ticker, from, to],
  );
  return row;
}

async function toolsFor(user: TestUser): Promise<{ tools: ToolRunner; vocabulary: FamilyVocabulary }> {
  const { repositories } = app.runtime.services;
  const vocabulary = new FamilyVocabulary(await repositories.finance.vocabulary(user.familyId));
  const tools = new ToolRunner(
    { familyId: user.familyId, currency: "USD", today, vocabulary },
    { finance: repositories.finance, accounts: repositories.accounts },
  );
  return { tools, vocabulary };
}

/** Asks the built-in assistant; earlier questions of the same chat come first. */
async function ask(user: TestUser, ...questions: string[]): Promise<{ content: string; tools: ToolRunner }> {
  const { tools, vocabulary } = await toolsFor(user);
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
  return { content, tools };
}

async function trade(
  user: TestUser,
  accountId: string,
  date: string,
  type: "buy" | "sell",
  qty: string,
  price: string,
  fee: string,
  ticker: string,
) {
  return app.runtime.services.trades.create(user.actor, { accountId, date, type, qty, price, fee, ticker });
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  app = await startTestApp({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-fake", ASSISTANT_MODEL: "fake-small" } });
  const { services } = app.runtime;
  family = await createUser(services);
  await createAccount(services, family, { name: "Everyday Checking", balance: "3000" });
  const brokerage = await createAccount(services, family, { name: "Brokerage", accountType: "investment", balance: "50000" });
  const ira = await createAccount(services, family, { name: "Roth IRA", accountType: "investment", balance: "10000" });
  await trade(family, brokerage.id, `${year - 1}-03-10`, "buy", "10", "200", "5", "VTI");
  await trade(family, brokerage.id, `${year - 1}-05-02`, "buy", "20", "150", "0", "AAPL");
  await trade(family, brokerage.id, `${year - 1}-09-01`, "sell", "5", "170", "2.5", "AAPL");
  await trade(family, ira.id, `${year - 1}-07-01`, "buy", "100", "72.1", "0", "BND");
  await trade(family, ira.id, `${year - 1}-12-01`, "buy", "2", "205", "0", "VTI");
  await trade(family, brokerage.id, `${year}-01-01`, "buy", "5", "210", "1", "VTI");
  const vti = await trade(family, brokerage.id, today, "sell", "3", "220", "1", "VTI");
  // A VTI dividend this year: cash in, not money invested (how much was invested leaves it out).
  await services.trades.create(family.actor, {
    accountId: brokerage.id,
    date: `${year}-01-02`,
    type: "dividend",
    amount: "12.5",
    ticker: "VTI",
  });
  const aapl = (await services.trades.securities(family.actor, { ticker: "AAPL" })).items[0];
  // A neighbour trading the same AAPL and a TSLA of its own: neither counts for the family.
  const neighbour = await createUser(services);
  const theirs = await createAccount(services, neighbour, { name: "Their brokerage", accountType: "investment", balance: "90000" });
  await trade(neighbour, theirs.id, `${year}-01-01`, "buy", "50", "160", "0", "AAPL");
  await trade(neighbour, theirs.id, `${year}-01-01`, "buy", "10", "240", "0", "TSLA");
  // No BND price at all: its newest trade price values it. AAPL's price is of a day between its buy and its
  // sell: from the sell on, the sell's price (of a newer day) values it, as upstream's calculator does.
  await app.runtime.sequelize.transaction((transaction) =>
    services.trades.recordPrices(
      [
        { securityId: vti.securityId, date: lastYearEnd, price: "215.4", currency: "USD" },
        { securityId: vti.securityId, date: today, price: "231.25", currency: "USD" },
        { securityId: aapl.id, date: `${year - 1}-08-15`, price: "190.4", currency: "USD" },
      ],
      transaction,
    ),
  );
}, 120_000);

afterAll(async () => {
  await app.stop();
  await fake.close();
});

describe("what is my portfolio worth", () => {
  test("today: the investment accounts' cash and holdings from the ledger, each holding with its value and gain", async () => {
    const expected = await portfolioBySql(family, today);
    expect(expected.held.map((row) => `${row.account} ${row.ticker}`)).toEqual([
      "Brokerage AAPL",
      "Brokerage VTI",
      "Roth IRA BND",
      "Roth IRA VTI",
    ]);
    const { content, tools } = await ask(family, "What is my portfolio worth?");

    expect(tools.calls.map((call) => [call.name, call.arguments])).toEqual([["get_holdings", { date: today }]]);
    expect(content).toContain(
      `Your portfolio is worth **${usd(expected.value)}** today (${today}): holdings of ${usd(expected.holdings)} and cash of ` +
        `${usd(expected.cash)}, in 2 investment accounts.`,
    );
    for (const row of expected.held) {
      const gain = Number(row.value) - Number(row.cost);
      expect(content).toContain(
        `- ${row.ticker} (${row.account}): ${row.held} shares at ` +
          `${usd(Number(row.value) / Number(row.held))}, **${usd(row.value)}** (cost basis ${usd(row.cost)}, unrealised ${gain < 0 ? "loss" : "gain"} ${usd(Math.abs(gain))})`,
      );
    }
    // The ledger's balances are the same figures: the balance sheet and /balances read them.
    const [{ balances }] = await sql<{ balances: string }>(
      `SELECT sum(balance)::text AS balances FROM accounts WHERE family_id = $1 AND account_type = 'investment'`,
      [family.familyId],
    );
    expect(Number(balances)).toBeCloseTo(expected.value, 4);
    expect(content).not.toContain("Everyday Checking");
  });

  test("at the end of last year: trades and prices after it do not count", async () => {
    const expected = await portfolioBySql(family, lastYearEnd);
    const { content } = await ask(family, "What was my portfolio worth at the end of last year?");
    expect(content).toContain(
      `Your portfolio is worth **${usd(expected.value)}** at the end of ${lastYearEnd}: holdings of ${usd(expected.holdings)} and cash of ${usd(expected.cash)}`,
    );
  });

  test("the same portfolio is in the balance sheet and netWorthSeries, today and at last year's end", async () => {
    const [now, then] = [await portfolioBySql(family, today), await portfolioBySql(family, lastYearEnd)];
    const sheet = await apiKeyClient(`${app.url}/api/v1`, family.key).get("/balance_sheet");
    expect(Number(sheet.body.net_worth.amount)).toBeCloseTo(3000 + now.value, 4);
    const { netWorthSeries } = await graphqlClient(app, family.key).ok(
      `query($day: Date) { netWorthSeries(from: $day, to: $day, interval: DAY) { date currency netWorth } }`,
      { day: lastYearEnd },
    );
    expect(netWorthSeries).toHaveLength(1);
    expect(netWorthSeries[0]).toMatchObject({ date: lastYearEnd, currency: "USD" });
    expect(Number(netWorthSeries[0].netWorth)).toBeCloseTo(3000 + then.value, 4);
  });

  test("of one security: its holdings in every account, at the newest price", async () => {
    const vti = (await portfolioBySql(family, today)).held.filter((row) => row.ticker === "VTI");
    expect(vti.map((row) => row.account)).toEqual(["Brokerage", "Roth IRA"]);
    const { content } = await ask(family, "What is my VTI position worth?");
    const sum = vti.reduce((total, row) => total + Number(row.value), 0);
    expect(content).toContain(`Your VTI holdings are worth **${usd(sum)}** today (${today}):`);
    for (const row of vti)
      expect(content).toContain(`- VTI (${row.account}): ${row.held} shares at ${usd(Number(row.value) / Number(row.held))}`);
    expect(content).not.toMatch(/AAPL|BND/);
  });

  test("a family without investment accounts is told so, with no figure", async () => {
    const saver = await createUser(app.runtime.services);
    await createAccount(app.runtime.services, saver, { name: "Savings", balance: "500" });
    const { content } = await ask(saver, "What is my portfolio worth?");
    expect(content).toBe("You have no investment accounts, so there is no portfolio to value.");
  });
});

describe("what is my gain on a security", () => {
  test("AAPL: value at the newest day's price against the average cost of the shares still held", async () => {
    const [row] = (await portfolioBySql(family, today)).held.filter((held) => held.ticker === "AAPL");
    // The price of the sell (last year, 09-01), not the older stored 190.4.
    expect(Number(row.value) / Number(row.held)).toBe(170);
    const gain = Number(row.value) - Number(row.cost);
    const percent = (
      await sql<{ percent: string }>(`SELECT round(($1::numeric - $2::numeric) / $2::numeric * 100, 1)::text AS percent`, [
        row.value,
        row.cost,
      ])
    )[0].percent;
    const { content, tools } = await ask(family, "What is my gain on AAPL?");
    expect(tools.calls.map((call) => [call.name, call.arguments])).toEqual([["get_holdings", { date: today, tickers: ["AAPL"] }]]);
    expect(content).toBe(
      `Your unrealised ${gain < 0 ? "loss" : "gain"} on AAPL is **${usd(Math.abs(gain))}** (${gain < 0 ? "" : "+"}${percent}%) today (${today}): ` +
        `${row.held} shares worth ${usd(row.value)} at ${usd(Number(row.value) / Number(row.held))}, against a cost basis of ${usd(row.cost)} ` +
        `(average cost ${usd(Number(row.cost) / Number(row.held))} a share).`,
    );
  });

  test("all holdings: the gain across them, each one listed", async () => {
    const { held } = await portfolioBySql(family, today);
    const value = held.reduce((sum, row) => sum + Number(row.value), 0);
    const cost = held.reduce((sum, row) => sum + Number(row.cost), 0);
    const { content } = await ask(family, "What are my unrealised gains?");
    expect(content).toContain(`Your unrealised ${value < cost ? "loss" : "gain"} on your holdings is **${usd(Math.abs(value - cost))}**`);
    expect(content).toContain(`worth ${usd(value)} against a cost basis of ${usd(cost)}.`);
    for (const row of held) expect(content).toContain(`- ${row.ticker} (${row.account}): ${row.held} shares`);
  });

  test("an unknown ticker gets an honest answer naming the family's securities, and no figure; another family's TSLA is unknown here", async () => {
    const { content } = await ask(family, "What is my gain on TSLA?");
    expect(content).toBe(
      `I couldn't find "TSLA" among the securities your accounts hold or trade (AAPL, BND and VTI), so I can't give you a figure for it.`,
    );
    expect(content).not.toMatch(/\$\d/);
  });
});

describe("how much did I invest", () => {
  test("in VTI this year: the buys' cost with fees, and the sells' proceeds set against it", async () => {
    const expected = await tradesBySql(family, "VTI", `${year}-01-01`, today);
    const { content, tools } = await ask(family, "How much did I invest in VTI this year?");
    expect(tools.calls.map((call) => [call.name, call.arguments])).toEqual([
      ["summarize_trades", { tickers: ["VTI"], start_date: `${year}-01-01`, end_date: today }],
    ]);
    expect(content).toBe(
      `You invested **${usd(expected.bought)}** in VTI this year (${year}-01-01 to ${today}): ${expected.buys} buy of ${expected.qty} shares, fees included. ` +
        `You also sold ${expected.sold_qty} shares for ${usd(expected.sold)} after fees, so the net you put in is ${usd(expected.net)}.`,
    );
  });

  test("in AAPL, ever: the neighbour's AAPL trades are not the family's", async () => {
    const expected = await tradesBySql(family, "AAPL", "1900-01-01", today);
    const { content } = await ask(family, "How much have I invested in AAPL?");
    expect(content).toContain(
      `You invested **${usd(expected.bought)}** in AAPL so far (up to ${today}): 1 buy of 20 shares, fees included.`,
    );
    expect(content).toContain(`so the net you put in is ${usd(expected.net)}.`);
  });

  test("last year, in every security: the totals, then each security's buys and sells", async () => {
    const from = `${year - 1}-01-01`;
    const rows = await Promise.all(
      ["AAPL", "BND", "VTI"].map(async (ticker) => ({ ticker, ...(await tradesBySql(family, ticker, from, lastYearEnd)) })),
    );
    const sum = (pick: (row: (typeof rows)[number]) => string) => rows.reduce((total, row) => total + Number(pick(row)), 0);
    const { content } = await ask(family, "How much did I invest last year?");
    expect(content).toContain(
      `You invested **${usd(sum((row) => row.bought))}** last year (${from} to ${lastYearEnd}): across 3 securities, fees included. ` +
        `You also sold for ${usd(sum((row) => row.sold))} after fees, so the net you put in is ${usd(sum((row) => row.net))}.`,
    );
    for (const row of rows)
      expect(content).toContain(
        `- ${row.ticker}: ${usd(row.bought)} bought (${row.qty} shares)${Number(row.sold_qty) ? `, ${usd(row.sold)} sold (${row.sold_qty} shares)` : ""}`,
      );
  });

  test("this year, in every security: only VTI was traded, and the answer names it", async () => {
    const expected = await tradesBySql(family, "VTI", `${year}-01-01`, today);
    const { content } = await ask(family, "How much did I invest this year?");
    expect(content).toContain(`You invested **${usd(expected.bought)}** in VTI this year (${year}-01-01 to ${today}):`);
  });

  test("a follow-up names another security and keeps the period", async () => {
    const { content, tools } = await ask(family, "How much did I invest in VTI this year?", "And AAPL?");
    expect(tools.calls[0].arguments).toEqual({ tickers: ["AAPL"], start_date: `${year}-01-01`, end_date: today });
    expect(content).toBe(`You made no trades in AAPL this year (${year}-01-01 to ${today}).`);
  });
});

describe("through a model server", () => {
  test("the model sees the tools, calls them, and their results carry the SQL's figures; an unknown ticker is refused", async () => {
    fake.script(
      {
        kind: "tool_calls",
        calls: [
          { name: "get_holdings", arguments: JSON.stringify({ tickers: ["AAPL"] }) },
          { name: "summarize_trades", arguments: JSON.stringify({ tickers: ["VTI"], start_date: `${year}-01-01` }) },
          { name: "get_holdings", arguments: JSON.stringify({ tickers: ["TSLA"] }) },
        ],
      },
      { kind: "text", content: "Here is your portfolio." },
    );
    const { tools, vocabulary } = await toolsFor(family);
    const answer = await new OpenAIProvider({ ...app.runtime.config.assistant, stream: false }).respond({
      model: "fake-small",
      history: [{ role: "user", content: "How is AAPL doing, and what did I put into VTI this year?" }],
      context: { currency: "USD", today, vocabulary },
      tools,
      onDelta: () => undefined,
    });
    expect(answer).toEqual({ content: "Here is your portfolio." });
    const names = fake.requests[0].tools.map((tool: { function: { name: string } }) => tool.function.name);
    expect(names).toEqual(expect.arrayContaining(["get_holdings", "summarize_trades"]));

    const [holdings, invested, unknown] = tools.calls;
    const expected = await portfolioBySql(family, today);
    const aapl = expected.held.find((row) => row.ticker === "AAPL")!;
    expect(holdings.result).toMatchObject({
      as_of_date: today,
      securities: ["AAPL"],
      portfolio: { value: String(expected.value), cash: String(expected.cash) },
      gain_by_currency: { USD: { value: String(Number(aapl.value)), cost_basis: String(Number(aapl.cost)) } },
    });
    expect(holdings.result.holdings).toEqual([expect.objectContaining({ ticker: "AAPL", account: "Brokerage", quantity: aapl.held })]);
    const vti = await tradesBySql(family, "VTI", `${year}-01-01`, today);
    expect(invested.result).toMatchObject({
      securities: [
        {
          ticker: "VTI",
          bought_amount: String(Number(vti.bought)),
          sold_amount: String(Number(vti.sold)),
          net_invested: String(Number(vti.net)),
        },
      ],
    });
    expect(unknown.result).toMatchObject({
      error: expect.stringMatching(/^Unknown securities: "TSLA" is not one the family holds or trades/),
    });
    // The answers go back to the model as the tool messages of the next request.
    const replies = fake.requests[1].messages.filter((message: { role: string }) => message.role === "tool");
    expect(replies.map((message: { content: string }) => JSON.parse(message.content))).toEqual(tools.calls.map((call) => call.result));
  });
});
