import { seedDemo } from "../../src/app/cli/demo";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { createUser } from "../helpers/fixtures";

/**
 * sure-cli's `budgets`, `budget-categories`, `recurring-transactions`, `rules`, `rule-runs`,
 * `rejected-transfers` and `family-settings` commands replayed on the demo family as the client sends
 * them (cmd/sure-cli/root/*.go): X-Api-Key and Accept: application/json, `page=1&per_page=25` on every
 * list (its paging flags' defaults) and other query keys only for the flags given, in Go's sorted order,
 * writes as `{"recurring_transaction": {…}}` with every flag's value as text. Each answer carries exactly
 * the keys of upstream's JSON view (app/views/api/v1/…), no more and no fewer.
 */
jest.setTimeout(120_000);
let app: TestApp;
let cli: ReturnType<typeof apiKeyClient>;
let reader: ReturnType<typeof apiKeyClient>;
const iso = (date: Date) => date.toISOString().slice(0, 10);
const now = new Date();
const thisMonth = iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)));
const lastMonth = iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)));

beforeAll(async () => {
  app = await startTestApp();
  const demo = await seedDemo(app.runtime.sequelize, app.runtime.services);
  cli = apiKeyClient(`${app.url}/api/v1`, demo.api_key);
  reader = apiKeyClient(`${app.url}/api/v1`, demo.read_api_key);
  // The demo family is seeded first: seconds on an idle machine, more on a busy one.
}, 120_000);
afterAll(() => app.stop());

const headers = { accept: "application/json" };
const keys = (value: object) => Object.keys(value).sort();
const stamps = ["created_at", "updated_at"];
// The keys of upstream's views: budgets/_budget, budget_categories/_budget_category, recurring_transactions/_recurring_transaction,
// rules/_rule, _condition, _action, rule_runs/_rule_run, family_settings/show.
const BUDGET = [
  ...["id", "start_date", "end_date", "name", "currency", "initialized", "current", "budgeted_spending", "budgeted_spending_cents"],
  ...["expected_income", "expected_income_cents", "allocated_spending", "allocated_spending_cents", ...stamps],
].sort();
const DERIVED = ["actual_spending", "actual_spending_cents", "available_to_spend", "available_to_spend_cents"];
const BUDGET_SHOWN = [
  ...BUDGET,
  ...DERIVED,
  "actual_income",
  "actual_income_cents",
  "available_to_allocate",
  "available_to_allocate_cents",
].sort();
const BUDGET_CATEGORY = [
  ...["id", "budget_id", "currency", "subcategory", "inherits_parent_budget", "budgeted_spending", "budgeted_spending_cents"],
  ...["display_budgeted_spending", "display_budgeted_spending_cents", "category", ...stamps],
].sort();
const RECURRING = [
  ...["id", "amount", "amount_cents", "currency", "expected_day_of_month", "last_occurrence_date", "next_expected_date", "status"],
  ...["occurrence_count", "name", "manual", "expected_amount_min", "expected_amount_min_cents", "expected_amount_max"],
  ...["expected_amount_max_cents", "expected_amount_avg", "expected_amount_avg_cents", "account", "merchant", ...stamps],
].sort();
const RULE = ["id", "name", "resource_type", "active", "effective_date", "conditions", "actions", ...stamps].sort();
const CONDITION = ["id", "condition_type", "operator", "value", "sub_conditions", ...stamps].sort();
const ACTION = ["id", "action_type", "value", ...stamps].sort();
const RULE_RUN = [
  ...["id", "rule_id", "rule_name", "execution_type", "status", "transactions_queued", "transactions_processed"],
  ...["transactions_modified", "pending_jobs_count", "executed_at", "error_message", "rule", ...stamps],
].sort();
const FAMILY_SETTINGS = [
  ...["id", "name", "currency", "locale", "date_format", "country", "timezone", "month_start_day", "moniker"],
  ...["default_account_sharing", "custom_enabled_currencies", "enabled_currencies", ...stamps],
].sort();

test("`budgets list`, `budgets list --start-date`, `budgets show`", async () => {
  const list = await cli.get("/budgets?page=1&per_page=25", headers);
  expect(list.status).toBe(200);
  for (const budget of list.body.budgets) expect(keys(budget)).toEqual(BUDGET);
  expect(list.body.budgets.map((b: any) => [b.start_date, b.budgeted_spending, b.current])).toEqual([
    [thisMonth, "$4,200.00", true],
    [lastMonth, "$4,000.00", false],
  ]);
  expect(list.body.pagination).toEqual({ page: 1, per_page: 25, total_count: 2, total_pages: 1 });
  expect((await cli.get(`/budgets?page=1&per_page=1&start_date=${thisMonth}`, headers)).body.budgets).toHaveLength(1);
  const shown = await cli.get(`/budgets/${list.body.budgets[1].id}`, headers);
  expect(keys(shown.body)).toEqual(BUDGET_SHOWN);
  expect(shown.body).toMatchObject({
    expected_income: "$6,500.00",
    allocated_spending: "$3,850.00",
    allocated_spending_cents: 385000,
    initialized: true,
  });
  expect(shown.body.actual_spending_cents).toBeGreaterThan(0);
  expect(shown.body.actual_income_cents).toBeGreaterThan(0);
  expect(shown.body.available_to_spend_cents).toBe(400000 - shown.body.actual_spending_cents);
  expect(shown.body.available_to_allocate).toBe("$150.00");
  expect((await cli.get("/budgets/not-a-budget", headers)).status).toBe(404);
});

test("`budget-categories list --budget-id --category-id --start-date --end-date` and `show`", async () => {
  const [budget] = (
    await cli.get(
      `/budgets?end_date=${iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)))}&page=1&per_page=25&start_date=${lastMonth}`,
    )
  ).body.budgets;
  const all = await cli.get(`/budget_categories?budget_id=${budget.id}&page=1&per_page=100`, headers);
  for (const row of all.body.budget_categories) {
    expect(keys(row)).toEqual(BUDGET_CATEGORY);
    expect(keys(row.category)).toEqual(["color", "id", "lucide_icon", "name", "parent_id"]);
  }
  const groceries = all.body.budget_categories.find((row: any) => row.category.name === "Groceries");
  expect(groceries).toMatchObject({
    budget_id: budget.id,
    budgeted_spending: "$700.00",
    subcategory: false,
    inherits_parent_budget: false,
  });
  const filtered = await cli.get(
    `/budget_categories?budget_id=${budget.id}&category_id=${groceries.category.id}&end_date=${lastMonth.slice(0, 8)}28&page=1&per_page=25&start_date=${lastMonth}`,
    headers,
  );
  expect(filtered.body.budget_categories).toEqual([]);
  const shown = (await cli.get(`/budget_categories/${groceries.id}`, headers)).body;
  expect(keys(shown)).toEqual([...BUDGET_CATEGORY, ...DERIVED].sort());
  expect(shown.actual_spending_cents).toBeGreaterThan(0);
  expect(shown.available_to_spend_cents).toBe(70000 - shown.actual_spending_cents);
});

test("`recurring-transactions list/show/create --apply/update --apply/delete --apply`", async () => {
  const list = await cli.get("/recurring_transactions?page=1&per_page=25&status=active", headers);
  expect(list.status).toBe(200);
  for (const row of list.body.recurring_transactions) expect(keys(row)).toEqual(RECURRING);
  const names = list.body.recurring_transactions.map((r: any) => r.merchant?.name ?? r.name);
  expect(names).toEqual(expect.arrayContaining(["Netflix", "Spotify", "Car insurance"]));
  const netflix = list.body.recurring_transactions.find((r: any) => r.merchant?.name === "Netflix");
  expect(netflix).toMatchObject({ amount: "$15.49", amount_cents: 1549, currency: "USD", status: "active", manual: false });
  expect(netflix.occurrence_count).toBeGreaterThanOrEqual(3);
  expect(netflix.next_expected_date > iso(now) || netflix.next_expected_date >= netflix.last_occurrence_date).toBe(true);
  expect((await cli.get(`/recurring_transactions/${netflix.id}`, headers)).body).toEqual(netflix);
  expect(
    (await cli.get(`/recurring_transactions?account_id=${netflix.account.id}&page=1&per_page=25`, headers)).body.recurring_transactions
      .length,
  ).toBeGreaterThan(0);
  expect((await cli.get("/recurring_transactions?account_id=checking", headers)).status).toBe(422);

  const payload = {
    recurring_transaction: {
      name: "Gym",
      amount: "45.00",
      currency: "USD",
      expected_day_of_month: "5",
      last_occurrence_date: lastMonth.replace(/01$/, "05"),
      next_expected_date: thisMonth.replace(/01$/, "05"),
      status: "active",
      occurrence_count: "2",
      manual: "true",
      expected_amount_min: "40",
      expected_amount_max: "50",
      expected_amount_avg: "45",
    },
  };
  expect((await reader.post("/recurring_transactions", payload)).status).toBe(403);
  const created = await cli.post("/recurring_transactions", payload);
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({
    name: "Gym",
    amount: "$45.00",
    expected_day_of_month: 5,
    occurrence_count: 2,
    manual: true,
    expected_amount_min: "$40.00",
    expected_amount_max_cents: 5000,
    account: null,
    merchant: null,
  });
  const bad = await cli.post("/recurring_transactions", { recurring_transaction: { name: "No dates", amount: "1" } });
  expect(bad.status).toBe(422);
  const updated = await cli.patch(`/recurring_transactions/${created.body.id}`, {
    recurring_transaction: { status: "inactive", expected_day_of_month: "6", next_expected_date: thisMonth.replace(/01$/, "06") },
  });
  expect(updated.body).toMatchObject({ status: "inactive", expected_day_of_month: 6 });
  expect(
    (await cli.patch(`/recurring_transactions/${created.body.id}`, { recurring_transaction: { expected_day_of_month: "40" } })).status,
  ).toBe(422);
  const deleted = await cli.delete(`/recurring_transactions/${created.body.id}`);
  expect(deleted.body).toEqual({ message: "Recurring transaction deleted successfully" });
  expect((await cli.get(`/recurring_transactions/${created.body.id}`)).status).toBe(404);
});

test("`rules list --resource-type --active`, `rules show`, `rule-runs list …` and `rule-runs show`", async () => {
  const rules = await cli.get("/rules?active=true&page=1&per_page=25&resource_type=transaction", headers);
  for (const rule of rules.body.data) {
    expect(keys(rule)).toEqual(RULE);
    for (const condition of [...rule.conditions, ...rule.conditions.flatMap((c: any) => c.sub_conditions)])
      expect(keys(condition)).toEqual(CONDITION);
    for (const action of rule.actions) expect(keys(action)).toEqual(ACTION);
  }
  expect(rules.body.data.map((rule: any) => rule.name)).toEqual(["Coffee is Food & Drink", "Rides are Transportation"]);
  expect(rules.body.meta).toEqual({ current_page: 1, next_page: null, prev_page: null, total_pages: 1, total_count: 2, per_page: 25 });
  const coffee = rules.body.data[0];
  expect((await cli.get(`/rules/${coffee.id}`, headers)).body).toEqual({ data: coffee });
  const runs = await cli.get(
    `/rule_runs?execution_type=manual&page=1&per_page=25&rule_id=${coffee.id}&start_executed_at=${lastMonth}T00:00:00Z&status=success`,
    headers,
  );
  expect(runs.body.data).toHaveLength(1);
  expect(keys(runs.body.data[0])).toEqual(RULE_RUN);
  expect(keys(runs.body.data[0].rule)).toEqual(["active", "id", "name", "resource_type"]);
  expect(runs.body.data[0]).toMatchObject({ rule_name: "Coffee is Food & Drink", execution_type: "manual", transactions_modified: 0 });
  expect(runs.body.data[0].transactions_processed).toBeGreaterThan(0);
  expect((await cli.get(`/rule_runs/${runs.body.data[0].id}`, headers)).body).toEqual({ data: runs.body.data[0] });
});

test("`rejected-transfers list --account-id --start-date --end-date`, `show`, and `family-settings show`", async () => {
  const accounts = (await cli.get("/accounts")).body.accounts;
  const list = await cli.get(
    `/rejected_transfers?account_id=${accounts[0].id}&end_date=${thisMonth}&page=1&per_page=25&start_date=${lastMonth}`,
    headers,
  );
  expect(list.body).toEqual({ rejected_transfers: [], pagination: { page: 1, per_page: 25, total_count: 0, total_pages: 1 } });
  expect((await cli.get(`/rejected_transfers/${accounts[0].id}`, headers)).status).toBe(404);
  const settings = await cli.get("/family_settings", headers);
  expect(keys(settings.body)).toEqual(FAMILY_SETTINGS);
  expect(settings.body).toMatchObject({
    name: "Demo family",
    currency: "USD",
    locale: "en",
    date_format: "%m-%d-%Y",
    month_start_day: 1,
    moniker: "Family",
    default_account_sharing: "shared",
    custom_enabled_currencies: false,
  });
  expect(settings.body.enabled_currencies).toContain("EUR");
});

test("another family sees none of the demo family's planning", async () => {
  const other = apiKeyClient(`${app.url}/api/v1`, (await createUser(app.runtime.services)).key);
  const budgetId = (await cli.get("/budgets")).body.budgets[0].id;
  const ruleId = (await cli.get("/rules")).body.data[0].id;
  const recurringId = (await cli.get("/recurring_transactions")).body.recurring_transactions[0].id;
  expect((await other.get(`/budgets/${budgetId}`)).status).toBe(404);
  expect((await other.get(`/rules/${ruleId}`)).status).toBe(404);
  expect((await other.get(`/recurring_transactions/${recurringId}`)).status).toBe(404);
  expect((await other.delete(`/recurring_transactions/${recurringId}`)).status).toBe(404);
  expect((await other.get("/recurring_transactions")).body.recurring_transactions).toEqual([]);
});
