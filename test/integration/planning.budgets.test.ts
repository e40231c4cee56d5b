import fc from "fast-check";
import { QueryTypes } from "sequelize";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Budget actuals are the month's transactions under the shared money rules: transfers are neither
 * spending nor income, a refund lowers its category's spending, subcategories roll up into their
 * parent, other currencies and other months stay out. Random households are compared with a SQL
 * computation written here independently of the service's.
 */
jest.setTimeout(120_000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const MONTH = { start: "2026-03-01", end: "2026-03-31" };
const day = fc.integer({ min: -5, max: 36 }).map((offset) => new Date(Date.UTC(2026, 2, offset)).toISOString().slice(0, 10));
const cents = fc.integer({ min: -50_000, max: 90_000 });
const slot = fc.constantFrom("none", "food", "groceries", "dining", "home", "rent", "salary");
const entry = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("tx" as const), date: day, cents, slot, euro: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("transfer" as const), date: day, cents: fc.integer({ min: 1, max: 90_000 }) }) },
);
const allocation = fc.integer({ min: 0, max: 200_000 });

type Category = { id: string; parentId: string | null };

async function household(user: TestUser): Promise<Record<string, Category>> {
  const services = app.runtime.services;
  const make = async (name: string, classification: "income" | "expense", parentId: string | null = null) => {
    const row = await services.categories.create(user.actor, { name, classification, color: "#123456", icon: "tag", parentId });
    return { id: row.id, parentId };
  };
  const food = await make("Food", "expense");
  const home = await make("Home", "expense");
  return {
    food,
    home,
    groceries: await make("Groceries", "expense", food.id),
    dining: await make("Dining", "expense", food.id),
    rent: await make("Rent", "expense", home.id),
    salary: await make("Salary", "income"),
  };
}

/** The oracle: per top-level category the month's net, then spending and income as sums of its positive and negative parts. */
async function oracle(familyId: string) {
  const sequelize = app.runtime.sequelize;
  const month = `t.family_id = $1 AND t.currency = 'USD' AND t.date >= $2 AND t.date <= $3
    AND t.id NOT IN (SELECT outflow_transaction_id FROM transfers UNION ALL SELECT inflow_transaction_id FROM transfers)`;
  const [totals] = await sequelize.query<{ spending: string; income: string }>(
    `SELECT coalesce(sum(greatest(net, 0)), 0)::text AS spending, coalesce(sum(greatest(-net, 0)), 0)::text AS income FROM (
       SELECT coalesce(c.parent_id::text, t.category_id::text, 'none') AS top, sum(t.amount) AS net
       FROM transactions t LEFT JOIN categories c ON c.id = t.category_id WHERE ${month} GROUP BY 1) nets`,
    { bind: [familyId, MONTH.start, MONTH.end], type: QueryTypes.SELECT },
  );
  const perCategory = await sequelize.query<{ id: string; spent: string }>(
    `SELECT k.id, greatest(coalesce((SELECT sum(t.amount) FROM transactions t WHERE ${month}
       AND (t.category_id = k.id OR (k.parent_id IS NULL AND t.category_id IN (SELECT s.id FROM categories s WHERE s.parent_id = k.id)))), 0), 0)::text AS spent
     FROM categories k WHERE k.family_id = $1`,
    { bind: [familyId, MONTH.start, MONTH.end], type: QueryTypes.SELECT },
  );
  return { totals, spent: new Map(perCategory.map((row) => [row.id, row.spent])) };
}

const toCents = (amount: string) => Math.round(Number(amount) * 100);

test("budget actuals equal the SQL oracle for random households (transfers, refunds, subcategories, other currencies and months)", async () => {
  const services = app.runtime.services;
  await fc.assert(
    fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 25 }), allocation, allocation, async (entries, food, groceries) => {
      const user = await createUser(services);
      const gql = graphqlClient(app, user.key);
      const categories = await household(user);
      const checking = await createAccount(services, user);
      const savings = await createAccount(services, user, { name: "Savings" });
      for (const item of entries) {
        const amount = (item.cents / 100).toFixed(2);
        if (item.kind === "transfer") {
          await services.transactions.createTransfer(user.actor, {
            fromAccountId: checking.id,
            toAccountId: savings.id,
            date: item.date,
            amount,
          });
          continue;
        }
        await services.transactions.create(user.actor, {
          accountId: checking.id,
          date: item.date,
          amount,
          name: `Entry ${item.slot}`,
          currency: item.euro ? "EUR" : "USD",
          categoryId: item.slot === "none" ? null : categories[item.slot].id,
        });
      }
      const { setBudget } = await gql.ok(
        `mutation { setBudget(input: { startDate: "2026-03-17", budgetedSpending: "2500", expectedIncome: "4000" }) { id startDate endDate } }`,
      );
      expect(setBudget).toMatchObject({ startDate: MONTH.start, endDate: MONTH.end });
      const allocations = await gql.ok(
        `query ($id: ID!) { budgetCategories(filter: { budgetId: $id }, perPage: 100) { items { id category { id } } } }`,
        {
          id: setBudget.id,
        },
      );
      const idOf = (key: string) => allocations.budgetCategories.items.find((item: any) => item.category.id === categories[key].id).id;
      for (const [key, value] of [
        ["food", food],
        ["groceries", groceries],
      ] as const) {
        await gql.ok(`mutation ($input: BudgetCategoryInput!) { setBudgetCategory(input: $input) { id } }`, {
          input: { budgetId: setBudget.id, categoryId: categories[key].id, budgetedSpending: (value / 100).toFixed(2) },
        });
      }

      const expected = await oracle(user.familyId);
      const { budget } = await gql.ok(
        `query ($id: ID!) { budget(id: $id) { actualSpendingCents actualIncomeCents availableToSpendCents allocatedSpendingCents availableToAllocateCents } }`,
        { id: setBudget.id },
      );
      expect(budget).toEqual({
        actualSpendingCents: toCents(expected.totals.spending),
        actualIncomeCents: toCents(expected.totals.income),
        availableToSpendCents: 250_000 - toCents(expected.totals.spending),
        // Setting groceries (a subcategory) after food added its allocation to food's, as upstream does.
        allocatedSpendingCents: food + groceries,
        availableToAllocateCents: 250_000 - food - groceries,
      });
      const spent = (key: string) => toCents(expected.spent.get(categories[key].id)!);
      // The list of the whole budget (what clients read) computes each allocation from the page's own rows.
      const listed = await gql.ok(
        `query ($id: ID!) { budgetCategories(filter: { budgetId: $id }, perPage: 100) { items { id actualSpendingCents availableToSpendCents } } }`,
        { id: setBudget.id },
      );
      for (const key of Object.keys(categories)) {
        const { budgetCategory } = await gql.ok(
          `query ($id: ID!) { budgetCategory(id: $id) { actualSpendingCents availableToSpendCents } }`,
          {
            id: idOf(key),
          },
        );
        expect(listed.budgetCategories.items.find((item: any) => item.id === idOf(key))).toEqual({ id: idOf(key), ...budgetCategory });
        expect([key, budgetCategory.actualSpendingCents]).toEqual([key, spent(key)]);
        // Upstream's pools: groceries is ring-fenced when it has an allocation of its own; without one it
        // (like dining) shares what food has left.
        if (key === "groceries" && groceries > 0) expect(budgetCategory.availableToSpendCents).toBe(groceries - spent("groceries"));
        if (key === "food" || key === "dining" || (key === "groceries" && groceries === 0)) {
          const fenced = groceries > 0 ? groceries : 0;
          const fencedSpent = groceries > 0 ? spent("groceries") : 0;
          expect(budgetCategory.availableToSpendCents).toBe(food + groceries - fenced - (spent("food") - fencedSpent));
        }
      }
    }),
    { numRuns: 12 },
  );
});

test("a subcategory's allocation carries its parent's with it, keeping the parent's own reserve (upstream's sync), audited", async () => {
  const user = await createUser(app.runtime.services);
  const categories = await household(user);
  const gql = graphqlClient(app, user.key);
  const { setBudget } = await gql.ok(`mutation { setBudget(input: { startDate: "2026-05-01", budgetedSpending: "1000" }) { id } }`);
  const set = (key: string, amount: string) =>
    gql.ok(`mutation ($input: BudgetCategoryInput!) { setBudgetCategory(input: $input) { id } }`, {
      input: { budgetId: setBudget.id, categoryId: categories[key].id, budgetedSpending: amount },
    });
  const allocated = async () => {
    const { budgetCategories } = await gql.ok(
      `query ($id: ID!) { budgetCategories(filter: { budgetId: $id }, perPage: 100) { items { category { id } budgetedSpending } } }`,
      { id: setBudget.id },
    );
    const of = (key: string) => budgetCategories.items.find((item: any) => item.category.id === categories[key].id).budgetedSpending;
    return { food: of("food"), groceries: of("groceries"), dining: of("dining"), home: of("home") };
  };
  await set("food", "100");
  await set("groceries", "30");
  // Food's 100 was all its own reserve: it keeps it beside the new 30.
  expect(await allocated()).toMatchObject({ food: "130", groceries: "30", dining: "0", home: "0" });
  await set("groceries", "50");
  await set("dining", "20");
  expect(await allocated()).toMatchObject({ food: "170", groceries: "50", dining: "20", home: "0" });
  // Set below its subcategories directly, the parent has no reserve left: the next subcategory write sums them.
  await set("food", "60");
  await set("groceries", "10");
  expect(await allocated()).toMatchObject({ food: "30", groceries: "10", dining: "20", home: "0" });

  // Both rows' changes are in the log, the parent's named as its own.
  const events = await app.runtime.sequelize.query<{ label: string; change: any }>(
    `SELECT resource_label AS label, changes->'budgeted_spending' AS change FROM audit_events
     WHERE event_type = 'budget.updated' AND user_id = $1 AND resource_type = 'budget_category'`,
    { bind: [user.userId], type: QueryTypes.SELECT },
  );
  expect(events).toHaveLength(10);
  expect(events).toEqual(
    expect.arrayContaining([
      { label: "May 2026: Groceries", change: { old: "50", new: "10" } },
      { label: "May 2026: Food", change: { old: "60", new: "30" } },
      { label: "May 2026: Food", change: { old: "100", new: "130" } },
    ]),
  );
});

test("REST: sure-cli's budgets and budget-categories list/show in upstream's shapes; other families get 404", async () => {
  const services = app.runtime.services;
  const user = await createUser(services);
  const categories = await household(user);
  const checking = await createAccount(services, user);
  const gql = graphqlClient(app, user.key);
  await services.transactions.create(user.actor, {
    accountId: checking.id,
    date: "2026-03-05",
    amount: "80.25",
    name: "Market",
    categoryId: categories.groceries.id,
  });
  await services.transactions.create(user.actor, {
    accountId: checking.id,
    date: "2026-03-06",
    amount: "-20",
    name: "Refund",
    categoryId: categories.groceries.id,
  });
  await services.transactions.create(user.actor, {
    accountId: checking.id,
    date: "2026-03-07",
    amount: "-3000",
    name: "Pay",
    categoryId: categories.salary.id,
  });
  const { setBudget } = await gql.ok(`mutation { setBudget(input: { startDate: "2026-03-01", budgetedSpending: "1000" }) { id } }`);
  await gql.ok(`mutation { setBudget(input: { startDate: "2026-02-01" }) { id } }`);
  const cli = apiKeyClient(`${app.url}/api/v1`, user.key);

  const list = await cli.get("/budgets?page=1&per_page=10");
  expect(list.status).toBe(200);
  expect(list.body.pagination).toEqual({ page: 1, per_page: 10, total_count: 2, total_pages: 1 });
  expect(list.body.budgets.map((b: any) => b.start_date)).toEqual(["2026-03-01", "2026-02-01"]);
  expect(list.body.budgets[1]).toMatchObject({ initialized: false, budgeted_spending: null, budgeted_spending_cents: null });
  expect(list.body.budgets[0]).not.toHaveProperty("actual_spending");
  const shown = await cli.get(`/budgets/${setBudget.id}`);
  expect(shown.body).toMatchObject({
    id: setBudget.id,
    start_date: "2026-03-01",
    end_date: "2026-03-31",
    name: "March 2026",
    currency: "USD",
    initialized: true,
    current: false,
    budgeted_spending: "$1,000.00",
    budgeted_spending_cents: 100000,
    expected_income: null,
    allocated_spending: "$0.00",
    actual_spending: "$60.25",
    actual_spending_cents: 6025,
    actual_income: "$3,000.00",
    available_to_spend: "$939.75",
    available_to_allocate_cents: 100000,
  });
  expect((await cli.get("/budgets?start_date=2026-03-01")).body.budgets).toHaveLength(1);
  expect((await cli.get("/budgets?start_date=March")).status).toBe(422);

  const allocations = await cli.get(`/budget_categories?budget_id=${setBudget.id}&category_id=${categories.groceries.id}`);
  expect(allocations.body.budget_categories).toHaveLength(1);
  const [groceries] = allocations.body.budget_categories;
  expect(groceries).toMatchObject({
    budget_id: setBudget.id,
    subcategory: true,
    inherits_parent_budget: true,
    budgeted_spending_cents: 0,
    category: { id: categories.groceries.id, name: "Groceries", color: "#123456", lucide_icon: "tag", parent_id: categories.food.id },
  });
  expect(groceries).not.toHaveProperty("actual_spending");
  expect((await cli.get(`/budget_categories/${groceries.id}`)).body).toMatchObject({
    actual_spending: "$60.25",
    actual_spending_cents: 6025,
  });
  expect((await cli.get("/budget_categories?budget_id=nope")).status).toBe(422);

  const other = apiKeyClient(`${app.url}/api/v1`, (await createUser(services)).key);
  expect((await other.get(`/budgets/${setBudget.id}`)).status).toBe(404);
  expect((await other.get(`/budget_categories/${groceries.id}`)).status).toBe(404);
  expect((await other.get("/budgets")).body.budgets).toEqual([]);
  const reader = graphqlClient(app, user.readKey);
  expect((await reader.fail(`mutation { setBudget(input: { startDate: "2026-04-01" }) { id } }`)).extensions.code).toBe("FORBIDDEN");
});
