/**
 * Investments benchmark: `npm run bench:investments`.
 *
 * On a scratch database, one family with a manual brokerage account holding BENCH_TRADES trades
 * (default 20,000) in BENCH_SECURITIES securities (default 200) over BENCH_YEARS years (default 10),
 * every sell covered by the buys before it, and a price of every security every BENCH_PRICE_DAYS days
 * (default 7) over the same years. In one run it measures, each next to a floor written here in plain
 * SQL, alternating:
 *
 *   recompute   the account's holdings and daily value recomputed whole, as a trade on its first day
 *               recomputes them (TradeService.rebuild: the trades read, a position by average cost per
 *               security per day it is traded, written; the value of every day a trade or a price is
 *               known derived in one statement and written; the ledger from that day); with
 *               nothing stored (the first, then again after removing it: median of BENCH_ROUNDS), then
 *               with it there (median of BENCH_ROUNDS). The floor is one SELECT computing
 *               every day's portfolio value with window functions over the trades joined to the prices
 *               (running quantity per security, each day at its stored or first trade price). Target ≤ 3× the floor.
 *   trade       a buy dated today through the service (the write, the recompute, the ledger, the audit
 *               event), median of BENCH_ROUNDS, printed beside the floor.
 *   holdings    GET /api/v1/holdings?account_id=… (the first page of every security on every day of
 *               the ten years, oldest first as upstream lists them, as clients ask), p95 over
 *               BENCH_SAMPLES requests over HTTP. Target p95 < 20 ms; printed beside it, the same list's
 *               middle page (five years in) and last page (today's rows; neither's cost may grow with
 *               the history before it) and one day (`date=` the newest, 100 a page).
 *
 * Ratios are printed next to their targets, MET or NOT MET; nothing is asserted (the machine is shared).
 * Settings (environment, optional): BENCH_DATABASE_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL (default redis://127.0.0.1:6379),
 * BENCH_TRADES, BENCH_SECURITIES, BENCH_YEARS, BENCH_PRICE_DAYS, BENCH_SAMPLES (default 200),
 * BENCH_ROUNDS (default 3), BENCH_KEEP_DATABASE=1 (keeps the scratch database for EXPLAIN afterwards).
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../src/platform/config/config";
import { settings } from "../src/platform/config/settings";
import { startRuntime } from "../src/app/runtime";
import { integerSetting } from "./bench-settings";

const adminUrl = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379";
const tradeCount = integerSetting("BENCH_TRADES", 20_000, 100, 1_000_000);
const securityCount = integerSetting("BENCH_SECURITIES", 200, 1, 10_000);
const years = integerSetting("BENCH_YEARS", 10, 1, 50);
const priceDays = integerSetting("BENCH_PRICE_DAYS", 7, 1, 365);
const samples = integerSetting("BENCH_SAMPLES", 200, 10, 100_000);
const rounds = integerSetting("BENCH_ROUNDS", 3, 1, 100);

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

/** A security's price on a day (days since the start): a drift and a wobble, never below a dollar. */
const PRICE = (security: string, day: string) =>
  `round(greatest(1, 20 + ${security} % 180 + ${day} * 0.02 + 6 * sin(${day} / 45.0 + ${security}))::numeric, 2)`;

/**
 * The floor: every day's portfolio value of the account ($1) from its trades and the prices in its
 * currency, with window functions: each security's running quantity over the days a trade or a price
 * of it is known (from its first trade), valued as upstream values it (docs/investments.md): on each
 * such day the stored price, else the day's first trade price, so every one of those days has its own
 * price and none is carried forward.
 */
const FLOOR = `
  WITH traded AS (
    SELECT security_id, date, sum(qty) AS qty, (array_agg(price ORDER BY created_at, id))[1] AS price
      FROM trades WHERE account_id = $1 GROUP BY security_id, date
  ),
  firsts AS (SELECT security_id, min(date) AS first FROM traded GROUP BY security_id),
  events AS (
    SELECT coalesce(t.security_id, p.security_id) AS security_id, coalesce(t.date, p.date) AS date, coalesce(t.qty, 0) AS qty,
           coalesce(p.price, t.price) AS price
      FROM traded t
      FULL JOIN (SELECT p.security_id, p.date, p.price FROM security_prices p JOIN firsts f ON f.security_id = p.security_id
                  WHERE p.currency = $2 AND p.date >= f.first) p
        ON p.security_id = t.security_id AND p.date = t.date
  ),
  valued AS (
    SELECT date, price * sum(qty) OVER (PARTITION BY security_id ORDER BY date) AS value FROM events
  )
  SELECT date, sum(value) AS value FROM valued GROUP BY date ORDER BY date`;

async function main(): Promise<void> {
  const name = `fg_bench_investments_${randomBytes(4).toString("hex")}`;
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
      // The whole recompute is one statement per step and may outlast the service's 30 s statement_timeout at
      // this size: it is measured whole here, and compared with that timeout in what is printed.
      DATABASE_STATEMENT_TIMEOUT_MS: "0",
    });
    const runtime = await startRuntime(config, { api: true, workers: false });
    const client = new pg.Client({ connectionString: url.toString() });
    // Dropping the scratch database ends this connection when a step failed: that step's error is the one to show.
    client.on("error", () => undefined);
    try {
      const { services, sequelize } = runtime;
      const user = await services.users.create({ email: "bench@example.test", currency: "USD" });
      const key = (await services.apiKeys.create(user.id, { scope: "read_write" })).plaintext;
      const actor = await services.apiKeys.authenticate(key);
      const account = await services.accounts.create(actor, { name: "Brokerage", accountType: "investment", balance: "1000000" });
      await client.connect();
      const family = user.familyId;
      const today = new Date().toISOString().slice(0, 10);
      const spanDays = years * 365;
      const [{ start }] = (await client.query<{ start: string }>(`SELECT ($1::date - $2::int)::text AS start`, [today, spanDays])).rows;

      // The history, written directly (the benchmark measures the recompute, not 20,000 REST writes).
      await client.query(
        `INSERT INTO securities (id, key, ticker, name, currency)
         SELECT gen_random_uuid(), 'ticker:BENCH' || n || '|', 'B' || lpad(n::text, 4, '0'), 'Bench security ' || n, 'USD'
           FROM generate_series(1, $1::int) n`,
        [securityCount],
      );
      await client.query(
        `INSERT INTO security_prices (id, security_id, date, price, currency)
         SELECT gen_random_uuid(), s.id, $1::date + d, ${PRICE("s.k", "d")}, 'USD'
           FROM (SELECT id, row_number() OVER (ORDER BY ticker) AS k FROM securities) s
           CROSS JOIN generate_series(0, $2::int, $3::int) d`,
        [start, spanDays, priceDays],
      );
      // Trades on random days (seeded: every run writes the same), bought at the day's price; then, per
      // security in date order, every fourth a sell of 1 to 5 after three buys of 10 to 49: always covered.
      await client.query("SELECT setseed(0.29)");
      await client.query(
        `WITH s AS (SELECT array_agg(id ORDER BY ticker) AS ids FROM securities)
         INSERT INTO trades (id, family_id, account_id, security_id, date, qty, price, fee, amount, currency, name)
         SELECT gen_random_uuid(), $1, $2, s.ids[1 + n % $4::int], $3::date + day, 10 + n % 40, ${PRICE("(1 + n % $4::int)", "day")},
                CASE WHEN n % 3 = 0 THEN 4.95 ELSE 0 END, 0, 'USD', 'Bench trade ' || n
           FROM s CROSS JOIN generate_series(1, $5::int) n CROSS JOIN LATERAL (SELECT floor(random() * ($6::int + 1))::int + n * 0 AS day) d`,
        [family, account.id, start, securityCount, tradeCount, spanDays],
      );
      await client.query(
        `WITH ordered AS (SELECT id, row_number() OVER (PARTITION BY security_id ORDER BY date, id) AS k FROM trades WHERE account_id = $1)
         UPDATE trades t SET qty = -(1 + o.k % 5), name = 'Bench sell' FROM ordered o WHERE o.id = t.id AND o.k % 4 = 0`,
        [account.id],
      );
      await client.query(`UPDATE trades SET amount = round(qty * price + fee, 4) WHERE account_id = $1`, [account.id]);
      await client.query("VACUUM ANALYZE");
      const [{ trades, first, prices }] = (
        await client.query<{ trades: number; first: string; prices: number }>(
          `SELECT count(*)::int AS trades, min(date)::text AS first, (SELECT count(*)::int FROM security_prices) AS prices FROM trades WHERE account_id = $1`,
          [account.id],
        )
      ).rows;
      console.log(
        `investments benchmark: ${trades} trades in ${securityCount} securities over ${years} years, ${prices} prices ` +
          `(every ${priceDays} days), node ${process.version}`,
      );

      // 1. The whole recompute, as a trade on the first day makes it, against the floor.
      const [row] = await services.repositories.accounts.byIds(family, [account.id]);
      if (!row) throw new Error("the bench account is gone");
      const rebuild = () => sequelize.transaction((transaction) => services.trades.rebuild(family, row, first, transaction));
      const floor: number[] = [];
      let days = 0;
      floor.push(await timed(async () => (days = (await client.query(FLOOR, [account.id, "USD"])).rowCount ?? 0)));
      // With nothing stored: the very first recompute, then as many again after removing what it stored
      // (and vacuuming, so the tables are empty again rather than full of dead rows): one sample of a
      // statement run once per process says more about that moment of a shared machine than about it.
      const nothingStored: number[] = [await timed(rebuild)];
      for (let round = 1; round < rounds; round++) {
        await client.query("DELETE FROM positions WHERE account_id = $1", [account.id]);
        await client.query("DELETE FROM portfolio_days WHERE account_id = $1", [account.id]);
        await client.query("VACUUM ANALYZE positions, portfolio_days");
        floor.push(await timed(() => client.query(FLOOR, [account.id, "USD"])));
        nothingStored.push(await timed(rebuild));
      }
      const empty = percentile(nothingStored, 50);
      await client.query("VACUUM ANALYZE positions, portfolio_days");
      const [{ positions, valued }] = (
        await client.query<{ positions: number; valued: number }>(
          `SELECT (SELECT count(*)::int FROM positions WHERE account_id = $1) AS positions,
                  (SELECT count(*)::int FROM portfolio_days WHERE account_id = $1) AS valued`,
          [account.id],
        )
      ).rows;
      const stored: number[] = [];
      for (let round = 0; round < rounds; round++) {
        floor.push(await timed(() => client.query(FLOOR, [account.id, "USD"])));
        stored.push(await timed(rebuild));
      }
      const floorMedian = percentile(floor, 50);
      const storedMedian = percentile(stored, 50);
      console.log(`\nholdings and daily value recomputed whole: ${positions} positions, ${valued} day values (the floor: ${days} days)`);
      console.log(`  floor (one SELECT, window functions), median of ${floor.length}   ${fmt(floorMedian)}`);
      console.log(
        `  recompute, no holdings stored, median of ${rounds} ${fmt(empty)} (the first: ${fmt(nothingStored[0])})  ratio ${(empty / floorMedian).toFixed(2)}x (target ≤ 3x): ${verdict(empty / floorMedian <= 3)}`,
      );
      console.log(
        `  recompute, holdings there, median of ${rounds}    ${fmt(storedMedian)}  ratio ${(storedMedian / floorMedian).toFixed(2)}x (target ≤ 3x): ${verdict(storedMedian / floorMedian <= 3)}`,
      );
      const timeout = settings.shape.DATABASE_STATEMENT_TIMEOUT_MS.parse(undefined);
      if (timeout > 0 && Math.max(empty, storedMedian) > timeout)
        console.log(`  (longer than the service's default statement timeout, ${timeout} ms: such a write would answer 503 query_timeout)`);

      // 2. A buy dated today through the service, as a client makes it.
      const security = (await client.query<{ id: string }>(`SELECT id FROM securities ORDER BY ticker LIMIT 1`)).rows[0].id;
      const writes: number[] = [];
      for (let round = 0; round < rounds; round++)
        writes.push(
          await timed(() =>
            services.trades.create(actor, { accountId: account.id, date: today, type: "buy", qty: "1", price: "50", securityId: security }),
          ),
        );
      const writeMedian = percentile(writes, 50);
      console.log(`\na buy dated today (write, recompute, ledger, audit), median of ${rounds}: ${fmt(writeMedian)}`);

      // 3. GET /holdings for the account, over HTTP.
      const [{ newest }] = (
        await client.query<{ newest: string }>(`SELECT max(date)::text AS newest FROM positions WHERE account_id = $1`, [account.id])
      ).rows;
      const api = `${runtime.url}/api/v1`;
      const get = async (target: string) => {
        const response = await fetch(target, { headers: { "X-Api-Key": key } });
        if (response.status !== 200) throw new Error(`GET ${target}: ${response.status} ${await response.text()}`);
        await response.json();
      };
      const opening = await fetch(`${api}/holdings?account_id=${account.id}`, { headers: { "X-Api-Key": key } });
      const { pagination } = (await opening.json()) as { pagination: { total_count: number; total_pages: number } };
      const middle = Math.ceil(pagination.total_pages / 2);
      const last = pagination.total_pages;
      const reads = { page: [] as number[], middle: [] as number[], last: [] as number[], day: [] as number[] };
      for (let i = 0; i < samples + 20; i++) {
        const page = await timed(() => get(`${api}/holdings?account_id=${account.id}`));
        const deep = await timed(() => get(`${api}/holdings?account_id=${account.id}&page=${middle}`));
        const latest = await timed(() => get(`${api}/holdings?account_id=${account.id}&page=${last}`));
        const day = await timed(() => get(`${api}/holdings?account_id=${account.id}&date=${newest}&per_page=100`));
        if (i >= 20) {
          reads.page.push(page);
          reads.middle.push(deep);
          reads.last.push(latest);
          reads.day.push(day);
        }
      }
      const page95 = percentile(reads.page, 95);
      const middle95 = percentile(reads.middle, 95);
      const last95 = percentile(reads.last, 95);
      console.log(
        `\nGET /api/v1/holdings over HTTP, ${samples} samples each, alternating: ${pagination.total_count} rows (every security every day), ${pagination.total_pages} pages`,
      );
      console.log(
        `  ?account_id=… (oldest days)   p95 ${fmt(page95)}, median ${fmt(percentile(reads.page, 50))}; target p95 < 20 ms: ${verdict(page95 < 20)}`,
      );
      console.log(
        `  ?account_id=…&page=${middle}  p95 ${fmt(middle95)}, median ${fmt(percentile(reads.middle, 50))}; ratio to the first page ${(middle95 / page95).toFixed(2)}x`,
      );
      console.log(
        `  ?account_id=…&page=${last}  p95 ${fmt(last95)}, median ${fmt(percentile(reads.last, 50))}; ratio to the first page ${(last95 / page95).toFixed(2)}x`,
      );
      console.log(`  ?account_id=…&date=newest     p95 ${fmt(percentile(reads.day, 95))}, median ${fmt(percentile(reads.day, 50))}`);
      console.log(
        JSON.stringify({
          trades,
          securities: securityCount,
          prices,
          positions,
          dayValues: valued,
          recompute: { floor: floorMedian, empty, stored: storedMedian },
          write: writeMedian,
          holdings: { rows: pagination.total_count, p95: page95, middleP95: middle95, lastP95: last95, dayP95: percentile(reads.day, 95) },
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
