import { QueryTypes } from "sequelize";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { seedDemo } from "../../src/app/cli/demo";
import { replyTo, waitForReply } from "../helpers/chats";
import { createAccount, createUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Golden questions for the built-in assistant (the default when no model server is configured) on the
 * demo family. Every expected figure is computed here by its own SQL over the same data; the answer
 * must contain it, formatted as US dollars. A second family with a large grocery bill of its own must
 * never show up in the demo family's answers.
 */
let app: TestApp;
let api: ReturnType<typeof apiKeyClient>;
let familyId: string;

const usd = (amount: string | number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(Number(amount));

const NOT_TRANSFER = `NOT EXISTS (SELECT 1 FROM transfers x WHERE t.id IN (x.outflow_transaction_id, x.inflow_transaction_id))`;
const TODAY = `(now() AT TIME ZONE 'UTC')::date`;
const LAST_MONTH = `t.date >= date_trunc('month', ${TODAY}) - interval '1 month' AND t.date < date_trunc('month', ${TODAY})`;

async function scalar(sql: string): Promise<string> {
  const [row] = await app.runtime.sequelize.query<{ value: string }>(sql, { bind: [familyId], type: QueryTypes.SELECT });
  return row.value;
}

async function ask(question: string): Promise<{ content: string; toolCalls: Array<{ function_name: string }> }> {
  const chat = await api.post("/chats", { message: question });
  expect(chat.status).toBe(201);
  const messageId = chat.body.messages[0].id;
  const detail = await waitForReply(api, chat.body.id, messageId);
  expect(detail.messages[0].ai_response_status).toBe("complete");
  const reply = replyTo(detail, messageId);
  return { content: reply.content, toolCalls: reply.tool_calls };
}

beforeAll(async () => {
  app = await startTestApp({ roles: { workers: true } });
  const demo = await seedDemo(app.runtime.sequelize, app.runtime.services);
  familyId = demo.family_id;
  api = apiKeyClient(`${app.url}/api/v1`, demo.api_key);

  // Another family that also buys groceries, last month, a lot.
  const { services } = app.runtime;
  const neighbour = await createUser(services, { aiEnabled: true });
  const account = await createAccount(services, neighbour, { name: "Neighbour checking", balance: "999999" });
  const groceries = await services.categories.create(neighbour.actor, { name: "Groceries", classification: "expense" });
  const lastMonth = new Date();
  lastMonth.setUTCDate(1);
  lastMonth.setUTCMonth(lastMonth.getUTCMonth() - 1);
  await services.transactions.create(neighbour.actor, {
    accountId: account.id,
    date: lastMonth.toISOString().slice(0, 10),
    amount: "77777.77",
    name: "Neighbour's groceries",
    categoryId: groceries.id,
  });
}, 60_000);
afterAll(() => app.stop());

describe("the built-in assistant on the demo data", () => {
  test("acceptance: groceries last month is the SQL sum of last month's grocery spending", async () => {
    const expected = await scalar(
      `SELECT sum(t.amount) AS value FROM transactions t JOIN categories c ON c.id = t.category_id
        WHERE t.family_id = $1 AND c.name = 'Groceries' AND t.amount > 0 AND ${LAST_MONTH} AND ${NOT_TRANSFER}`,
    );
    const count = await scalar(
      `SELECT count(*) AS value FROM transactions t JOIN categories c ON c.id = t.category_id
        WHERE t.family_id = $1 AND c.name = 'Groceries' AND t.amount > 0 AND ${LAST_MONTH}`,
    );
    const answer = await ask("How much did I spend on groceries last month?");
    expect(answer.content).toContain(`You spent **${usd(expected)}** on Groceries last month`);
    expect(answer.content).toContain(`across ${count} transactions`);
    expect(answer.toolCalls).toEqual([
      expect.objectContaining({
        function_name: "get_transactions",
        function_arguments: expect.objectContaining({ type: "expense", categories: ["Groceries"] }),
      }),
    ]);
  });

  test("income last month", async () => {
    const expected = await scalar(
      `SELECT sum(-t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND t.amount < 0 AND ${LAST_MONTH} AND ${NOT_TRANSFER}`,
    );
    expect((await ask("What was my income last month?")).content).toContain(`**${usd(expected)}**`);
  });

  test("spending at a merchant this year", async () => {
    const expected = await scalar(
      `SELECT sum(t.amount) AS value FROM transactions t JOIN merchants m ON m.id = t.merchant_id
        WHERE t.family_id = $1 AND m.name = 'Amazon' AND t.amount > 0 AND t.date >= date_trunc('year', ${TODAY}) AND ${NOT_TRANSFER}`,
    );
    const answer = await ask("How much did I spend at Amazon this year?");
    expect(answer.content).toContain(`You spent **${usd(expected)}** at Amazon this year`);
  });

  test("largest expenses last month, largest first", async () => {
    const largest = await scalar(
      `SELECT max(t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND t.amount > 0 AND ${LAST_MONTH} AND ${NOT_TRANSFER}`,
    );
    const answer = await ask("What were my biggest expenses last month?");
    expect(answer.content).toContain(`1. **${usd(largest)}**`);
  });

  test("net worth is assets minus liabilities", async () => {
    const expected = await scalar(
      `SELECT sum(CASE WHEN classification = 'asset' THEN balance ELSE -balance END) AS value FROM accounts WHERE family_id = $1`,
    );
    const answer = await ask("What is my net worth?");
    expect(answer.content).toContain(`Your net worth is **${usd(expected)}**`);
    expect(answer.toolCalls.map((call) => call.function_name)).toEqual(["get_balance_sheet"]);
  });

  test("income vs expenses last month, with net income", async () => {
    const income = await scalar(
      `SELECT sum(-t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND t.amount < 0 AND ${LAST_MONTH} AND ${NOT_TRANSFER}`,
    );
    const expense = await scalar(
      `SELECT sum(t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND t.amount > 0 AND ${LAST_MONTH} AND ${NOT_TRANSFER}`,
    );
    const net = await scalar(
      `SELECT sum(-t.amount) AS value FROM transactions t WHERE t.family_id = $1 AND ${LAST_MONTH} AND ${NOT_TRANSFER}`,
    );
    const answer = await ask("Income vs expenses last month");
    expect(answer.content).toContain(`you earned **${usd(income)}** and spent **${usd(expense)}**`);
    expect(answer.content).toContain(`your net income is **${usd(net)}**`);
  });

  test("account balances and recent transactions", async () => {
    const balances = await app.runtime.sequelize.query<{ name: string; balance: string }>(
      "SELECT name, balance FROM accounts WHERE family_id = $1",
      { bind: [familyId], type: QueryTypes.SELECT },
    );
    const answer = await ask("What are my account balances?");
    for (const account of balances) expect(answer.content).toContain(`${account.name}: **${usd(account.balance)}**`);

    const newest = await scalar(
      `SELECT t.name AS value FROM transactions t WHERE t.family_id = $1 AND ${NOT_TRANSFER} ORDER BY t.date DESC, t.created_at DESC, t.id DESC LIMIT 1`,
    );
    expect((await ask("Show my recent transactions")).content).toContain(`| ${newest} |`);
  });
});

describe("the examples that used to get a figure for a broader question", () => {
  const spentAt = (where: string) =>
    scalar(
      `SELECT coalesce(sum(t.amount), 0) AS value FROM transactions t WHERE t.family_id = $1 AND t.amount >= 0 AND ${LAST_MONTH} AND ${NOT_TRANSFER} AND ${where}`,
    );

  test("coffee and dining out get the figure of the subject they name, and say what it matched", async () => {
    const coffee = await spentAt(`t.merchant_id IN (SELECT id FROM merchants WHERE name = 'Blue Bottle Coffee')`);
    expect((await ask("How much did I spend on coffee last month?")).content).toContain(
      `You spent **${usd(coffee)}** at Blue Bottle Coffee (matched 'coffee') last month`,
    );
    const dining = await spentAt(`t.category_id IN (SELECT id FROM categories WHERE name = 'Food & Drink')`);
    expect((await ask("How much did I spend on dining out last month?")).content).toContain(
      `You spent **${usd(dining)}** on Food & Drink (matched 'dining out') last month`,
    );
  });

  test("pets match nothing: the reply says so and gives no figure", async () => {
    const answer = await ask("How much did I spend on my pets last month?");
    expect(answer.content).toMatch(/^I couldn't find "pets" among your categories, merchants, tags or accounts/);
    expect(answer.content).not.toMatch(/\$\d/);
    expect(answer.toolCalls).toEqual([]);
  });
});

describe("tools", () => {
  test("read the calling family only", async () => {
    const { repositories } = app.runtime.services;
    const today = new Date().toISOString().slice(0, 10);
    const tools = new ToolRunner(
      { familyId, currency: "USD", today, vocabulary: await vocabularyOf(familyId) },
      { finance: repositories.finance, accounts: repositories.accounts },
    );
    const accounts = await tools.call("get_accounts", {});
    expect((accounts.accounts as Array<{ name: string }>).map((a) => a.name)).not.toContain("Neighbour checking");
    const found = await tools.call("get_transactions", { search: "Neighbour" });
    expect(found.total_count).toBe(0);
    expect(found.totals).toEqual([]);
  });

  test("refuse malformed arguments with a reason, and record the call", async () => {
    const { repositories } = app.runtime.services;
    const tools = new ToolRunner(
      { familyId, currency: "USD", today: "2025-01-01", vocabulary: await vocabularyOf(familyId) },
      repositoriesOf(repositories),
    );
    expect(await tools.call("get_transactions", "{not json")).toEqual({ error: "Arguments are not a JSON object" });
    expect((await tools.call("get_transactions", '{"per_page": 500}')).error).toMatch(/^Invalid arguments: per_page/);
    expect(await tools.call("delete_everything", "{}")).toEqual({ error: "Unknown function delete_everything" });
    expect(tools.calls.map((call) => call.arguments)).toEqual([{ raw: "{not json" }, { per_page: 500 }, {}]);
  });

  test("totals are exact decimal sums", async () => {
    const { repositories } = app.runtime.services;
    const tools = new ToolRunner(
      { familyId, currency: "USD", today: "2025-01-01", vocabulary: await vocabularyOf(familyId) },
      repositoriesOf(repositories),
    );
    const all = await tools.call("get_transactions", { type: "expense", per_page: 1 });
    const expected = await scalar(
      `SELECT sum(t.amount)::text AS value FROM transactions t WHERE t.family_id = $1 AND t.amount > 0 AND ${NOT_TRANSFER}`,
    );
    expect((all.totals as Array<{ expense: string }>)[0].expense).toBe(expected.replace(/\.?0+$/, ""));
  });
});

async function vocabularyOf(family: string): Promise<FamilyVocabulary> {
  return new FamilyVocabulary(await app.runtime.services.repositories.finance.vocabulary(family));
}

function repositoriesOf(repositories: TestApp["runtime"]["services"]["repositories"]) {
  return { finance: repositories.finance, accounts: repositories.accounts };
}
