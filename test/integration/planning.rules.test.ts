import { QueryTypes } from "sequelize";
import { startOfTomorrowUtc } from "../../src/finance/banking/provider";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient, type Json } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeSimplefinBridge, generateHistory } from "../fakes/simplefin-bridge";

/**
 * One rule — (name contains "coffee" or "bakery") and amount at most $150 → category, merchant and a
 * tag — gives the same transactions the same fields whether it applied as they were created over REST,
 * as a bank sync imported them, or on demand afterwards; each application is a listed rule run.
 */
jest.setTimeout(120_000);
const DAY = 86_400;
let app: TestApp;
let bridge: FakeSimplefinBridge;

beforeAll(async () => {
  bridge = new FakeSimplefinBridge();
  await bridge.start();
  bridge.accounts = [
    {
      id: "chk-1",
      name: "Everyday Checking",
      currency: "USD",
      balance: "1520.35",
      "balance-date": startOfTomorrowUtc() - DAY,
      org: { name: "First Bank", "sfin-url": "https://first.example" },
      transactions: generateHistory({ accountId: "chk-1", days: 30, perDay: 2 }),
    },
  ];
  app = await startTestApp({ env: { ...BANK_TEST_ENV, SIMPLEFIN_DAILY_REQUEST_BUDGET: "200" }, roles: { api: true, workers: true } });
});
afterAll(async () => {
  await app?.stop();
  await bridge?.stop();
});

type Household = { user: TestUser; gql: ReturnType<typeof graphqlClient>; rest: ReturnType<typeof apiKeyClient> };

async function household(): Promise<Household & { rule: Json }> {
  const user = await createUser(app.runtime.services);
  const gql = graphqlClient(app, user.key);
  const { createCategory } = await gql.ok(
    `mutation { createCategory(input: { name: "Coffee & Bakery", classification: "expense" }) { id } }`,
  );
  const { createMerchant } = await gql.ok(`mutation { createMerchant(input: { name: "Local Cafe" }) { id } }`);
  const { createTag } = await gql.ok(`mutation { createTag(input: { name: "Treats" }) { id } }`);
  const rule = {
    name: "Treats",
    conditions: [
      {
        conditionType: "compound",
        operator: "or",
        subConditions: [
          { conditionType: "transaction_name", operator: "like", value: "  coffee " },
          { conditionType: "transaction_name", operator: "like", value: "BAKERY" },
        ],
      },
      { conditionType: "transaction_amount", operator: "<=", value: "150" },
    ],
    actions: [
      { actionType: "set_transaction_category", value: createCategory.id },
      { actionType: "set_transaction_merchant", value: createMerchant.id },
      { actionType: "set_transaction_tags", value: createTag.id },
    ],
  };
  return { user, gql, rest: apiKeyClient(`${app.url}/api/v1`, user.key), rule };
}

async function connect(h: Household): Promise<void> {
  const { connectSimplefin } = await h.gql.ok(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, {
    t: bridge.newSetupToken(),
  });
  expect(await waitForSync(app.runtime.services, connectSimplefin.id)).toMatchObject({ status: "completed" });
}

/** What the rule decides, per transaction name and amount (a bank's own payee merchants left out: REST rows have none). */
async function outcome(h: Household): Promise<string[]> {
  const rows: string[] = [];
  for (let page = 1; ; page++) {
    const { body } = await h.rest.get(`/transactions?per_page=100&page=${page}`);
    for (const t of body.transactions)
      rows.push(
        [
          t.name,
          t.amount,
          t.category?.name ?? "-",
          t.merchant?.name === "Local Cafe" ? "Local Cafe" : "-",
          t.tags.map((tag: Json) => tag.name).join(","),
        ].join(" | "),
      );
    if (page >= body.pagination.total_pages) break;
  }
  return rows.sort();
}

const createRule = (h: Household, rule: Json) =>
  h.gql.ok(`mutation ($input: RuleInput!) { createRule(input: $input) { id } }`, { input: rule });

test("on bank sync, on demand and on create a rule gives the same result; its runs are listed", async () => {
  // A: the rule exists before the bank sync imports the history.
  const a = await household();
  const ruleA = (await createRule(a, a.rule)).createRule;
  await connect(a);
  const synced = await outcome(a);
  const matched = synced.filter((row) => row.includes("Coffee & Bakery"));
  expect(matched.length).toBeGreaterThan(3);
  expect(matched.every((row) => /(Coffee Shop|Bakery) purchase/.test(row) && row.endsWith("Local Cafe | Treats"))).toBe(true);
  const unmatched = synced.filter((row) => /(Coffee Shop|Bakery) purchase/.test(row) && !row.includes("Coffee & Bakery"));
  expect(unmatched.filter((row) => Number(row.split(" | ")[1].replace(/[$,-]/g, "")) <= 150)).toEqual([]);

  // B: the same history imported first, the rule created afterwards and applied on demand.
  const b = await household();
  await connect(b);
  expect((await outcome(b)).some((row) => row.includes("Coffee & Bakery"))).toBe(false);
  const ruleB = (await createRule(b, b.rule)).createRule;
  app.statements.length = 0;
  const { applyRule } = await b.gql.ok(
    `mutation ($id: ID!) { applyRule(id: $id) { executionType status transactionsProcessed transactionsModified } }`,
    {
      id: ruleB.id,
    },
  );
  expect(applyRule).toEqual({
    executionType: "manual",
    status: "success",
    transactionsProcessed: matched.length,
    transactionsModified: matched.length * 3,
  });
  // Set-based, not a loop: one write per action whatever the number of rows it changes.
  const writes = app.statements.filter((sql) => /UPDATE transactions t SET|INSERT INTO transaction_tags/.test(sql));
  expect([writes.length, matched.length > writes.length]).toEqual([3, true]);
  expect(await outcome(b)).toEqual(synced);
  // Applying again changes nothing.
  const again = await b.gql.ok(`mutation ($id: ID!) { applyRule(id: $id) { transactionsProcessed transactionsModified } }`, {
    id: ruleB.id,
  });
  expect(again.applyRule).toEqual({ transactionsProcessed: matched.length, transactionsModified: 0 });

  // C: the rule exists; the same rows arrive one by one over REST (as sure-cli sends them).
  const c = await household();
  await createRule(c, c.rule);
  const account = await createAccount(app.runtime.services, c.user);
  const { body } = await a.rest.get("/transactions?per_page=100");
  for (const t of body.transactions.slice(0, 40)) {
    const created = await c.rest.post("/transactions", {
      transaction: { account_id: account.id, date: t.date, amount: t.amount.replace(/[$,]/g, ""), name: t.name, nature: t.classification },
    });
    expect(created.status).toBe(201);
  }
  const viaRest = await outcome(c);
  const expected = synced.filter((row) =>
    viaRest.some((other) => other.split(" | ").slice(0, 2).join() === row.split(" | ").slice(0, 2).join()),
  );
  expect(viaRest).toEqual(expected);
  // Each create the rule selected is a listed (scheduled) run of one transaction, all three actions applied.
  const matchedViaRest = viaRest.filter((row) => row.includes("Coffee & Bakery")).length;
  expect(matchedViaRest).toBeGreaterThan(0);
  const runsC = (await c.rest.get("/rule_runs?per_page=100")).body.data;
  expect(
    runsC.map((run: Json) => [run.execution_type, run.transactions_queued, run.transactions_processed, run.transactions_modified]),
  ).toEqual(Array.from({ length: matchedViaRest }, () => ["scheduled", 1, 1, 3]));

  // The runs: A's scheduled one (the sync), B's two manual ones; REST in upstream's shapes.
  const runsA = await a.rest.get("/rule_runs");
  expect(runsA.status).toBe(200);
  expect(runsA.body.data).toHaveLength(1);
  expect(runsA.body.data[0]).toMatchObject({
    rule_id: ruleA.id,
    rule_name: "Treats",
    execution_type: "scheduled",
    status: "success",
    transactions_processed: matched.length,
    transactions_modified: matched.length * 3,
    pending_jobs_count: 0,
    error_message: null,
    rule: { id: ruleA.id, name: "Treats", resource_type: "transaction", active: true },
  });
  expect(runsA.body.meta).toEqual({ current_page: 1, next_page: null, prev_page: null, total_pages: 1, total_count: 1, per_page: 25 });
  const runsB = await b.rest.get(`/rule_runs?rule_id=${ruleB.id}&execution_type=manual&status=success&per_page=1`);
  expect(runsB.body.meta).toMatchObject({ current_page: 1, next_page: 2, total_count: 2 });
  expect((await b.rest.get(`/rule_runs/${runsB.body.data[0].id}`)).body).toEqual({ data: runsB.body.data[0] });
  expect((await a.rest.get(`/rule_runs/${runsB.body.data[0].id}`)).status).toBe(404);
  expect((await b.rest.get("/rule_runs?status=done")).status).toBe(422);
  expect((await b.rest.get("/rule_runs?start_executed_at=yesterday")).status).toBe(422);

  const rules = await a.rest.get("/rules?resource_type=transaction&active=true");
  expect(rules.body.meta).toMatchObject({ total_count: 1, per_page: 25 });
  const [shown] = rules.body.data;
  expect(shown).toMatchObject({ id: ruleA.id, name: "Treats", resource_type: "transaction", active: true, effective_date: null });
  expect(shown.conditions[0]).toMatchObject({ condition_type: "compound", operator: "or", value: null });
  expect(shown.conditions[0].sub_conditions.map((s: Json) => [s.condition_type, s.operator, s.value, s.sub_conditions])).toEqual([
    ["transaction_name", "like", "  coffee ", []],
    ["transaction_name", "like", "BAKERY", []],
  ]);
  expect(shown.actions.map((action: Json) => action.action_type)).toEqual([
    "set_transaction_category",
    "set_transaction_merchant",
    "set_transaction_tags",
  ]);
  expect((await a.rest.get(`/rules/${ruleA.id}`)).body).toEqual({ data: shown });
  expect((await a.rest.get("/rules?active=false")).body.data).toEqual([]);
  expect((await a.rest.get("/rules?active=maybe")).status).toBe(422);
  expect((await a.rest.get("/rules?resource_type=account")).status).toBe(422);
  expect((await b.rest.get(`/rules/${ruleA.id}`)).status).toBe(404);
});

test("rules are validated, audited, and refused to read keys; deleting keeps the runs", async () => {
  const h = await household();
  const bad = await h.gql.fail(`mutation ($input: RuleInput!) { createRule(input: $input) { id } }`, {
    input: { conditions: [{ conditionType: "transaction_amount", operator: "like", value: "x" }], actions: [] },
  });
  expect(bad.message).toMatch(/at least one action/);
  const foreign = await household();
  const other = await foreign.gql.fail(`mutation ($input: RuleInput!) { createRule(input: $input) { id } }`, { input: h.rule });
  expect(other.message).toMatch(/Category not found/);
  const reader = graphqlClient(app, h.user.readKey);
  expect((await reader.fail(`mutation ($input: RuleInput!) { createRule(input: $input) { id } }`, { input: h.rule })).extensions.code).toBe(
    "FORBIDDEN",
  );

  const { createRule: rule } = await createRule(h, h.rule);
  await h.gql.ok(`mutation ($id: ID!) { updateRule(id: $id, input: { active: false, name: "Off" }) { id } }`, { id: rule.id });
  await h.gql.ok(`mutation ($id: ID!) { applyRule(id: $id) { id } }`, { id: rule.id });
  await h.gql.ok(`mutation ($id: ID!) { deleteRule(id: $id) { id } }`, { id: rule.id });
  const runs = (await h.rest.get("/rule_runs")).body.data;
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ rule_id: null, rule_name: "Off", rule: null });
  const { events } = await app.runtime.services.audit.list({ eventTypes: ["rule.*"] }, { first: 100 });
  const mine = events.filter((event) => event.resource?.id === rule.id).map((event) => [event.eventType, event.user?.id]);
  expect(mine.sort()).toEqual(
    [
      ["rule.applied", h.user.userId],
      ["rule.created", h.user.userId],
      ["rule.deleted", h.user.userId],
      ["rule.updated", h.user.userId],
    ].sort(),
  );
});

test("each condition type and the rename action select and change exactly the transactions SQL written here selects", async () => {
  const h = await household();
  const { services, sequelize } = app.runtime;
  const checking = await createAccount(services, h.user, { name: "Checking" });
  const savings = await createAccount(services, h.user, { name: "Savings" });
  const grocer = await services.merchants.create(h.user.actor, { name: "Grocer" });
  const food = await services.categories.create(h.user.actor, { name: "Food", classification: "expense", color: "#123456", icon: "tag" });
  const rows: Array<[string, string, string, string | null, boolean, boolean, boolean]> = [
    // name, amount, account, notes, by the grocer, categorised, renamed by the last rule
    ["Market run", "45.10", "checking", null, true, false, false],
    ["Market run", "120.00", "checking", "weekly", true, true, false],
    ["Refund from market", "-20.00", "checking", null, true, false, false],
    ["Birthday gift", "99.99", "savings", "GIFT for Ann", false, false, false],
    ["Salary", "-3000.00", "savings", null, false, true, false],
    ["zzz unknown", "19.99", "checking", "gift card", false, false, true],
    ["ZZZ again", "5.00", "savings", null, false, true, true],
  ];
  for (const [name, amount, account, notes, byGrocer, categorised] of rows)
    await services.transactions.create(h.user.actor, {
      accountId: account === "checking" ? checking.id : savings.id,
      date: "2026-05-02",
      amount,
      name,
      notes,
      merchantId: byGrocer ? grocer.id : null,
      categoryId: categorised ? food.id : null,
    });
  await services.transactions.createTransfer(h.user.actor, {
    fromAccountId: checking.id,
    toAccountId: savings.id,
    date: "2026-05-03",
    amount: "50",
  });

  const family = h.user.familyId;
  const cases: Array<{ label: string; conditions: Json[]; oracle: string }> = [
    {
      label: "merchant",
      conditions: [{ conditionType: "transaction_merchant", operator: "=", value: grocer.id }],
      oracle: `t.merchant_id = '${grocer.id}'`,
    },
    { label: "no category", conditions: [{ conditionType: "transaction_category", operator: "is_null" }], oracle: "t.category_id IS NULL" },
    {
      label: "account",
      conditions: [{ conditionType: "transaction_account", operator: "=", value: savings.id }],
      oracle: `t.account_id = '${savings.id}'`,
    },
    {
      label: "amount range",
      conditions: [
        { conditionType: "transaction_amount", operator: ">=", value: "20" },
        { conditionType: "transaction_amount", operator: "<", value: "100" },
      ],
      oracle: "abs(t.amount) >= 20 AND abs(t.amount) < 100",
    },
    {
      label: "notes",
      conditions: [{ conditionType: "transaction_notes", operator: "like", value: "gift" }],
      oracle: "t.notes ILIKE '%gift%'",
    },
    {
      label: "income",
      conditions: [{ conditionType: "transaction_type", operator: "=", value: "income" }],
      oracle:
        "t.amount < 0 AND t.id NOT IN (SELECT inflow_transaction_id FROM transfers UNION ALL SELECT outflow_transaction_id FROM transfers)",
    },
    {
      label: "transfer",
      conditions: [{ conditionType: "transaction_type", operator: "=", value: "transfer" }],
      oracle: "t.id IN (SELECT inflow_transaction_id FROM transfers UNION ALL SELECT outflow_transaction_id FROM transfers)",
    },
  ];
  const tagged = async (tagId: string) =>
    (
      await sequelize.query<{ id: string }>(`SELECT transaction_id AS id FROM transaction_tags WHERE tag_id = $1 ORDER BY 1`, {
        bind: [tagId],
        type: QueryTypes.SELECT,
      })
    ).map((row) => row.id);
  for (const { label, conditions, oracle } of cases) {
    const { createTag } = await h.gql.ok(`mutation ($name: String!) { createTag(input: { name: $name }) { id } }`, { name: label });
    const { createRule: rule } = await createRule(h, {
      name: label,
      conditions,
      actions: [{ actionType: "set_transaction_tags", value: createTag.id }],
    });
    const { applyRule } = await h.gql.ok(`mutation ($id: ID!) { applyRule(id: $id) { transactionsProcessed } }`, { id: rule.id });
    const expected = (
      await sequelize.query<{ id: string }>(`SELECT t.id FROM transactions t WHERE t.family_id = $1 AND ${oracle} ORDER BY 1`, {
        bind: [family],
        type: QueryTypes.SELECT,
      })
    ).map((row) => row.id);
    expect(expected.length).toBeGreaterThan(0);
    expect([label, await tagged(createTag.id)]).toEqual([label, expected]);
    expect([label, applyRule.transactionsProcessed]).toEqual([label, expected.length]);
  }

  const { createRule: rename } = await createRule(h, {
    name: "Rename",
    conditions: [{ conditionType: "transaction_name", operator: "like", value: "zzz" }],
    actions: [{ actionType: "set_transaction_name", value: "Unknown shop" }],
  });
  await h.gql.ok(`mutation ($id: ID!) { applyRule(id: $id) { id } }`, { id: rename.id });
  const names = await sequelize.query<{ name: string }>(`SELECT name FROM transactions WHERE family_id = $1 ORDER BY name`, {
    bind: [family],
    type: QueryTypes.SELECT,
  });
  const kept = rows.filter((row) => !row[6]).map((row) => row[0]);
  expect(names.map((row) => row.name).filter((name) => !name.startsWith("Transfer"))).toEqual(
    [...kept, ...rows.filter((row) => row[6]).map(() => "Unknown shop")].sort(),
  );
});
