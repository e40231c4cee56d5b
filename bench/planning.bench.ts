/**
 * Planning benchmark: `npm run bench:planning`.
 *
 * On a scratch database, one family with BENCH_TRANSACTIONS transactions (default 100,000) over the
 * last BENCH_DAYS days (default 88: all of them inside recurring detection's three-month window) in
 * four accounts, BENCH_MERCHANTS merchants (default 2,000, a fifth of them charging the same amount
 * every month), 60 expense categories (20 parents with two subcategories each), income, refunds and
 * transfers between the family's own accounts. In one run it measures, each next to a floor written
 * here in plain SQL, alternating:
 *
 *   budget      this month's budget vs actual, the two reads clients make, each as the service computes
 *               it for GraphQL (and REST): the budget with its actuals (`budget`, GET /budgets/{id}), and
 *               every allocation with what it spent and has left (`budgetCategories`, GET
 *               /budget_categories?budget_id=…), p95 over BENCH_SAMPLES calls; the floor is one aggregate
 *               of the month's non-transfer transactions per category. Targets: p95 < 30 ms, ≤ 2× the
 *               floor's p95. The same two reads over HTTP end to end are printed beside them.
 *   recurring   detectRecurringTransactions (candidates, clustering, upsert, audit) on a family whose
 *               patterns are new, then already stored; the floor is one SELECT grouping the window's
 *               transactions into candidate patterns. Target ≤ 3× the floor.
 *   rule        applyRule of a rule selecting every transaction and setting its category (its count,
 *               its one UPDATE, its rule run and audit event); the floor is the equivalent single
 *               UPDATE. Each changes every row (the two alternate between two categories), after a
 *               VACUUM. Target ≤ 2× the floor.
 *
 * Ratios are printed next to their targets, MET or NOT MET; nothing is asserted (the machine is shared).
 * Settings (environment, optional): BENCH_DATABASE_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL (default redis://127.0.0.1:6379),
 * BENCH_TRANSACTIONS, BENCH_MERCHANTS, BENCH_DAYS, BENCH_SAMPLES (default 200), BENCH_ROUNDS (default 5),
 * BENCH_KEEP_DATABASE=1 (keeps the scratch database for EXPLAIN afterwards).
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../src/platform/config/config";
import { startRuntime } from "../src/app/runtime";
import { monthOf } from "../src/finance/planning/planning.money";
import { shiftDays, shiftMonths } from "../src/finance/planning/recurring.detect";
import { integerSetting } from "./bench-settings";

const adminUrl = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379";
const total = integerSetting("BENCH_TRANSACTIONS", 100_000, 10_000, 10_000_000);
const merchantCount = integerSetting("BENCH_MERCHANTS", 2_000, 100, 100_000);
const days = integerSetting("BENCH_DAYS", 88, 60, 3650);
const samples = integerSetting("BENCH_SAMPLES", 200, 10, 100_000);
const rounds = integerSetting("BENCH_ROUNDS", 5, 1, 100);

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
const verdict = (met: boolean) => (met ? "MET" : "NOT MET");

/** The month's non-transfer transactions in the family currency, summed per category: the least any budget-vs-actual reads. */
const BUDGET_FLOOR = `SELECT t.category_id, sum(t.amount) AS net FROM transactions t
  WHERE t.family_id = $1 AND t.currency = 'USD' AND t.date BETWEEN $2 AND $3
    AND NOT EXISTS (SELECT 1 FROM transfers x WHERE x.outflow_transaction_id = t.id)
    AND NOT EXISTS (SELECT 1 FROM transfers x WHERE x.inflow_transaction_id = t.id)
  GROUP BY t.category_id`;

/** The window's non-transfer transactions grouped into candidate patterns: the least any detection reads. */
const RECURRING_FLOOR = `SELECT t.account_id, t.merchant_id, CASE WHEN t.merchant_id IS NULL THEN t.name END AS name, round(t.amount, 2) AS amount,
    t.currency, count(*) AS n, max(t.date) AS last, array_agg(extract(day FROM t.date)::int) AS days
  FROM transactions t
  WHERE t.family_id = $1 AND t.date >= $2
    AND NOT EXISTS (SELECT 1 FROM transfers x WHERE x.outflow_transaction_id = t.id)
    AND NOT EXISTS (SELECT 1 FROM transfers x WHERE x.inflow_transaction_id = t.id)
  GROUP BY t.account_id, t.merchant_id, CASE WHEN t.merchant_id IS NULL THEN t.name END, round(t.amount, 2), t.currency
  HAVING count(*) >= 3 AND max(t.date) >= $3`;

/** What the rule does, as one statement. */
const RULE_FLOOR = `UPDATE transactions t SET category_id = $2, updated_at = now()
  WHERE t.family_id = $1 AND abs(t.amount) >= 0 AND t.category_id IS DISTINCT FROM $2`;

async function main(): Promise<void> {
  const name = `fg_bench_planning_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const config = loadConfig({
      DATABASE_URL: url.toString(),
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `fgbench_${randomBytes(4).toString("hex")}`,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      RATE_LIMIT_REQUESTS: "0",
    });
    const runtime = await startRuntime(config, { api: true, workers: false });
    const client = new pg.Client({ connectionString: url.toString() });
    // Dropping the scratch database ends this connection when a step failed: that step's error is the one to show.
    client.on("error", () => undefined);
    try {
      const { services } = runtime;
      const user = await services.users.create({ email: "bench@example.test", currency: "USD" });
      const key = (await services.apiKeys.create(user.id, { scope: "read_write" })).plaintext;
      const actor = await services.apiKeys.authenticate(key);
      const accounts: string[] = [];
      for (const account of ["Checking", "Savings", "Card", "Joint"])
        accounts.push((await services.accounts.create(actor, { name: account, accountType: "depository", balance: "50000" })).id);
      await client.connect();
      const family = user.familyId;
      const today = new Date().toISOString().slice(0, 10);
      const first = shiftDays(today, -(days - 1));

      // The history, written directly (the benchmark measures planning, not 100,000 REST writes).
      await client.query(
        `INSERT INTO categories (id, family_id, name, classification, color, icon)
         SELECT gen_random_uuid(), $1, 'Bench ' || n, 'expense', '#336699', 'tag' FROM generate_series(1, 20) n`,
        [family],
      );
      await client.query(
        `INSERT INTO categories (id, family_id, parent_id, name, classification, color, icon)
         SELECT gen_random_uuid(), $1, c.id, c.name || ' / ' || s, 'expense', '#336699', 'tag'
           FROM categories c CROSS JOIN generate_series(1, 2) s WHERE c.family_id = $1 AND c.name LIKE 'Bench %'`,
        [family],
      );
      await client.query(
        `INSERT INTO merchants (id, family_id, name) SELECT gen_random_uuid(), $1, 'Merchant ' || n FROM generate_series(1, $2::int) n`,
        [family, merchantCount],
      );
      const recurringMerchants = Math.floor(merchantCount / 5);
      // Recurring: each of the first fifth of the merchants charges one account the same amount once a month, near one day.
      await client.query(
        `WITH m AS (SELECT id, row_number() OVER (ORDER BY name) AS k FROM merchants WHERE family_id = $1),
              c AS (SELECT array_agg(id ORDER BY name) AS ids FROM categories WHERE family_id = $1)
         INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, merchant_id, category_id)
         SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + m.k % 4], $3::date - (month * 30 + (m.k % 20) + (month % 2))::int,
                4.99 + (m.k % 60), 'USD', 'Subscription ' || m.k, m.id, c.ids[1 + m.k % array_length(c.ids, 1)]
           FROM m CROSS JOIN c CROSS JOIN generate_series(0, 2) month WHERE m.k <= $4`,
        [family, accounts, today, recurringMerchants],
      );
      // Everything else: random days, merchants, amounts and categories (seeded: every run writes the same); one in
      // twenty is income, one in fifty a refund, one in ten uncategorized, one in twelve without a merchant.
      const others = total - recurringMerchants * 3 - 2 * Math.floor(total / 100);
      await client.query("SELECT setseed(0.42)");
      await client.query(
        `WITH m AS (SELECT array_agg(id ORDER BY name) AS ids FROM merchants WHERE family_id = $1),
              c AS (SELECT array_agg(id ORDER BY name) AS ids FROM categories WHERE family_id = $1)
         INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, merchant_id, category_id)
         SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + floor(random() * 4)::int], $3::date + floor(random() * $5::int)::int,
                CASE WHEN n % 20 = 0 THEN -(1000 + floor(random() * 3000)) WHEN n % 50 = 1 THEN -round((random() * 90 + 0.01)::numeric, 2)
                     ELSE round((random() * 200 + 0.01)::numeric, 2) END,
                'USD', 'Purchase ' || floor(random() * 5000)::int,
                CASE WHEN n % 12 = 0 THEN NULL ELSE m.ids[1 + floor(random() * array_length(m.ids, 1))::int] END,
                CASE WHEN n % 10 = 0 THEN NULL ELSE c.ids[1 + floor(random() * array_length(c.ids, 1))::int] END
           FROM m CROSS JOIN c CROSS JOIN generate_series(1, $4::int) n`,
        [family, accounts, first, others, days],
      );
      // Transfers between the family's own accounts: 1% of the transactions, as pairs of legs.
      await client.query(
        `WITH legs AS (
           INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name)
           SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + (n + side) % 4], $3::date + (n * 37 % $5::int), CASE WHEN side = 0 THEN 250 ELSE -250 END,
                  'USD', 'Transfer ' || n || ' ' || side
             FROM generate_series(1, $4::int) n CROSS JOIN generate_series(0, 1) side
           RETURNING id, name, amount)
         INSERT INTO transfers (id, family_id, outflow_transaction_id, inflow_transaction_id)
         SELECT gen_random_uuid(), $1, o.id, i.id FROM legs o JOIN legs i ON i.name = replace(o.name, ' 0', ' 1') AND i.amount < 0 WHERE o.amount > 0`,
        [family, accounts, first, Math.floor(total / 100), days],
      );
      await client.query("VACUUM ANALYZE");
      const [{ count, month }] = (
        await client.query<{ count: number; month: number }>(
          `SELECT count(*)::int AS count, count(*) FILTER (WHERE date >= date_trunc('month', $2::date))::int AS month FROM transactions WHERE family_id = $1`,
          [family, today],
        )
      ).rows;
      console.log(
        `planning benchmark: ${count} transactions over ${days} days (${month} this month), ${merchantCount} merchants, node ${process.version}`,
      );

      // 1. Budget vs actual for this month.
      const thisMonth = monthOf(today);
      const budget = await services.budgets.setBudget(actor, {
        startDate: thisMonth.start,
        budgetedSpending: "90000",
        expectedIncome: "60000",
      });
      const categories = await services.budgets.listCategories(actor, { budgetId: budget.row.id }, 1, 100);
      for (const [index, view] of categories.items.entries())
        if (index % 3 !== 2)
          await services.budgets.setCategory(actor, { budgetId: budget.row.id, categoryId: view.row.categoryId, budgetedSpending: "1200" });
      // The two reads clients make: a budget with its actuals (GET /budgets/{id}, GraphQL `budget`), and its
      // allocations with what each spent and has left (GET /budget_categories?budget_id=…, `budgetCategories`).
      const reads = {
        budget: async () => (await services.budgets.get(actor, budget.row.id)).derived(),
        allocations: async () => {
          const { items } = await services.budgets.listCategories(actor, { budgetId: budget.row.id }, 1, 100);
          await Promise.all(items.flatMap((item) => [item.derived(), item.displayBudgetedSpending()]));
          return items.length;
        },
      };
      const allocations = await reads.allocations();
      const api = `${runtime.url}/api/v1`;
      const headers = { "X-Api-Key": key };
      const rest = {
        budget: `${api}/budgets/${budget.row.id}`,
        allocations: `${api}/budget_categories?budget_id=${budget.row.id}&per_page=100`,
      };
      const get = async (target: string) => {
        const response = await fetch(target, { headers });
        if (response.status !== 200) throw new Error(`GET ${target}: ${response.status} ${await response.text()}`);
        await response.json();
      };
      const times = {
        floor: [] as number[],
        budget: [] as number[],
        allocations: [] as number[],
        restBudget: [] as number[],
        restAllocations: [] as number[],
      };
      for (let i = 0; i < samples + 20; i++) {
        const sample = {
          floor: await timed(() => client.query(BUDGET_FLOOR, [family, thisMonth.start, thisMonth.end])),
          budget: await timed(reads.budget),
          allocations: await timed(reads.allocations),
          restBudget: await timed(() => get(rest.budget)),
          restAllocations: await timed(() => get(rest.allocations)),
        };
        if (i >= 20) for (const [field, ms] of Object.entries(sample)) times[field as keyof typeof times].push(ms);
      }
      const floor95 = percentile(times.floor, 95);
      const summary: Record<string, { p95: number; ratio: number }> = {};
      console.log(
        `\nbudget vs actual, this month (${month} transactions, ${allocations} allocations), ${samples} samples each, alternating`,
      );
      console.log(`  floor (one aggregate per category)           p95 ${fmt(floor95)}, median ${fmt(percentile(times.floor, 50))}`);
      for (const [field, label] of [
        ["budget", "budget with its actuals (service)      "],
        ["allocations", "every allocation's actuals (service)   "],
      ] as const) {
        const p95 = percentile(times[field], 95);
        summary[field] = { p95, ratio: p95 / floor95 };
        console.log(
          `  ${label}   p95 ${fmt(p95)}, median ${fmt(percentile(times[field], 50))}; target p95 < 30 ms: ${verdict(p95 < 30)};` +
            ` ratio ${(p95 / floor95).toFixed(2)}x (target ≤ 2x): ${verdict(p95 / floor95 <= 2)}`,
        );
      }
      console.log(
        `  GET /api/v1/budgets/{id} end to end        p95 ${fmt(percentile(times.restBudget, 95))}, median ${fmt(percentile(times.restBudget, 50))}`,
      );
      console.log(
        `  GET /api/v1/budget_categories?budget_id=…  p95 ${fmt(percentile(times.restAllocations, 95))}, median ${fmt(percentile(times.restAllocations, 50))}`,
      );

      // 2. Recurring detection: first run (every pattern new), then refreshes, alternating with the floor.
      const since = shiftMonths(today, -3);
      const recent = shiftDays(today, -45);
      const detect = { first: 0, refresh: [] as number[], floor: [] as number[] };
      let patterns = 0;
      let floorRows = 0;
      detect.floor.push(
        await timed(async () => (floorRows = (await client.query(RECURRING_FLOOR, [family, since, recent])).rowCount ?? 0)),
      );
      detect.first = await timed(async () => (patterns = await services.recurring.detect(actor, today)));
      for (let round = 0; round < rounds; round++) {
        detect.floor.push(await timed(() => client.query(RECURRING_FLOOR, [family, since, recent])));
        detect.refresh.push(await timed(() => services.recurring.detect(actor, today)));
      }
      const detectFloor = percentile(detect.floor, 50);
      const detectRefresh = percentile(detect.refresh, 50);
      console.log(
        `\nrecurring detection over ${count} transactions, ${merchantCount} merchants: ${patterns} patterns of ${floorRows} candidates`,
      );
      console.log(`  floor (one grouping SELECT), median of ${detect.floor.length}   ${fmt(detectFloor)}`);
      console.log(
        `  detect, patterns new                      ${fmt(detect.first)}  ratio ${(detect.first / detectFloor).toFixed(2)}x (target ≤ 3x): ${verdict(detect.first / detectFloor <= 3)}`,
      );
      console.log(
        `  detect, patterns stored, median of ${rounds}      ${fmt(detectRefresh)}  ratio ${(detectRefresh / detectFloor).toFixed(2)}x (target ≤ 3x): ${verdict(detectRefresh / detectFloor <= 3)}`,
      );

      // 3. One rule over every transaction vs the single UPDATE, alternating between two categories.
      const [a, b] = categories.items.slice(0, 2).map((view) => view.row.categoryId);
      const rule = await services.rules.create(actor, {
        name: "Everything to one category",
        conditions: [{ conditionType: "transaction_amount", operator: ">=", value: "0" }],
        actions: [{ actionType: "set_transaction_category", value: a }],
      });
      const applied = { rule: [] as number[], floor: [] as number[] };
      let modified = 0;
      await client.query(RULE_FLOOR, [family, b]);
      for (let round = 0; round < rounds; round++) {
        await client.query("VACUUM transactions");
        applied.rule.push(await timed(async () => (modified = (await services.rules.apply(actor, rule.id)).transactionsModified)));
        await client.query("VACUUM transactions");
        applied.floor.push(await timed(() => client.query(RULE_FLOOR, [family, b])));
      }
      const ruleMedian = percentile(applied.rule, 50);
      const ruleFloor = percentile(applied.floor, 50);
      console.log(`\nrule applied to every transaction (${modified} modified per run), median of ${rounds}`);
      console.log(`  floor (the single UPDATE)                 ${fmt(ruleFloor)}`);
      console.log(
        `  applyRule                                 ${fmt(ruleMedian)}  ratio ${(ruleMedian / ruleFloor).toFixed(2)}x (target ≤ 2x): ${verdict(ruleMedian / ruleFloor <= 2)}`,
      );
      console.log(
        JSON.stringify({
          transactions: count,
          merchants: merchantCount,
          budget: { floorP95: floor95, ...summary },
          recurring: { floor: detectFloor, first: detect.first, refresh: detectRefresh, patterns },
          rule: { floor: ruleFloor, apply: ruleMedian, modified },
        }),
      );
    } finally {
      await client.end().catch(() => undefined);
      await runtime.stop();
    }
  } finally {
    if (process.env.BENCH_KEEP_DATABASE === "1") console.log(`kept the scratch database ${name} (BENCH_KEEP_DATABASE=1)`);
    else await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
