/**
 * One answer to "is this income or expense?" everywhere transactions are read: the REST list's `type`
 * filter, the GraphQL list's filter and `classification` field, and the assistant's tools and reports.
 * Pins the two cases the readers used to disagree on: a zero amount (an expense, see
 * src/finance/transactions/transaction.rules.ts) and a transfer between the family's own accounts (neither).
 */
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { signKind } from "../../src/finance/transactions/transaction.rules";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;
let graphql: ReturnType<typeof apiKeyClient>;
const DATE = "2025-04-10";

beforeAll(async () => {
  app = await startTestApp();
  const { services } = app.runtime;
  user = await createUser(services);
  const checking = await createAccount(services, user, { name: "Checking" });
  const savings = await createAccount(services, user, { name: "Savings" });
  api = apiKeyClient(`${app.url}/api/v1`, user.key);
  graphql = apiKeyClient(app.url, user.key);
  for (const [name, amount] of [
    ["Free trial", "0"],
    ["Groceries", "42.50"],
    ["Salary", "-1000"],
  ] as const)
    await services.transactions.create(user.actor, { accountId: checking.id, date: DATE, amount, name });
  await services.transactions.createTransfer(user.actor, {
    fromAccountId: checking.id,
    toAccountId: savings.id,
    date: DATE,
    amount: "300",
    name: "Move to savings",
  });
});
afterAll(() => app.stop());

const sorted = (names: string[]) => [...names].sort();

async function restNames(type: string): Promise<string[]> {
  const response = await api.get(`/transactions?type=${type}`);
  expect(response.status).toBe(200);
  return sorted(response.body.transactions.map((transaction: { name: string }) => transaction.name));
}

async function graphqlList(type: string): Promise<Array<{ name: string; classification: string }>> {
  const response = await graphql.graphql(
    `query($filter: TransactionFilter) { transactions(filter: $filter) { items { name classification } } }`,
    {
      filter: { type },
    },
  );
  expect(response.body.errors).toBeUndefined();
  return response.body.data.transactions.items;
}

async function assistantNames(type: string): Promise<string[]> {
  const { repositories } = app.runtime.services;
  const vocabulary = new FamilyVocabulary(await repositories.finance.vocabulary(user.familyId));
  const tools = new ToolRunner(
    { familyId: user.familyId, currency: "USD", today: "2025-04-30", vocabulary },
    { finance: repositories.finance, accounts: repositories.accounts },
  );
  const result = await tools.call("get_transactions", { type });
  return sorted((result.transactions as Array<{ name: string }>).map((row) => row.name));
}

const EXPENSES = ["Free trial", "Groceries"];
const INCOME = ["Salary"];

test("the rule itself: zero is an expense, negative is income", () => {
  expect(signKind("0")).toBe("expense");
  expect(signKind("-0.00")).toBe("expense");
  expect(signKind("0.01")).toBe("expense");
  expect(signKind("-0.01")).toBe("income");
});

test("REST type filters: a zero amount is an expense, transfer legs are neither", async () => {
  expect(await restNames("expense")).toEqual(EXPENSES);
  expect(await restNames("income")).toEqual(INCOME);
});

test("GraphQL type filters and classification agree", async () => {
  const expenses = await graphqlList("expense");
  expect(sorted(expenses.map((row) => row.name))).toEqual(EXPENSES);
  expect(expenses.every((row) => row.classification === "expense")).toBe(true);
  expect(sorted((await graphqlList("income")).map((row) => row.name))).toEqual(INCOME);
});

test("the assistant's tools and income statement read the same", async () => {
  expect(await assistantNames("expense")).toEqual(EXPENSES);
  expect(await assistantNames("income")).toEqual(INCOME);
  const { repositories } = app.runtime.services;
  const vocabulary = new FamilyVocabulary([]);
  const tools = new ToolRunner(
    { familyId: user.familyId, currency: "USD", today: "2025-04-30", vocabulary },
    { finance: repositories.finance, accounts: repositories.accounts },
  );
  const statement = await tools.call("get_income_statement", { start_date: "2025-04-01", end_date: "2025-04-30" });
  const expense = statement.expense as { total: string; by_category: Array<{ count: number }> };
  expect(Number(expense.total)).toBe(42.5);
  expect(expense.by_category.reduce((sum, row) => sum + row.count, 0)).toBe(2);
  expect(Number((statement.income as { total: string }).total)).toBe(1000);
  const totals = (await tools.call("get_transactions", { type: "expense" })).totals as Array<{ count: number; expense: string }>;
  expect(totals).toEqual([expect.objectContaining({ count: 2, expense: "42.5" })]);
});
