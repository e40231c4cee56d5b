/**
 * Bank-sync benchmark: `npm run bench:sync`.
 *
 * On a scratch database it measures, in one run:
 *
 *   floor     a multi-row INSERT (unnest, BENCH_FLOOR_BATCH rows per statement) of the very rows the sync
 *             imports, into the same tables (transactions, with the same merchants), for another family;
 *   first     the first sync of a SimpleFIN connection from the fake Bridge on loopback: BENCH_ACCOUNTS
 *             accounts, BENCH_TRANSACTIONS transactions in all, fetched in ≤60-day windows, reconciled
 *             and upserted;
 *   re-sync   the same connection synced again over the whole history (same data, nothing changes).
 *
 * Throughput is printed next to the floor as a ratio. Targets: first ≥ 0.25× the floor; re-sync at
 * least 3× faster than the first sync.
 *
 * Settings (environment, optional): BENCH_DATABASE_URL (admin URL of the Postgres server, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_TRANSACTIONS (100000), BENCH_ACCOUNTS (10),
 * BENCH_FLOOR_BATCH (10000).
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import pg from "pg";
import Decimal from "decimal.js";
import { loadConfig } from "../src/platform/config/config";
import { newId } from "../src/platform/common/ids";
import { startRuntime } from "../src/app/runtime";
import { FakeSimplefinBridge, generateHistory, type FakeSimplefinTransaction } from "../test/fakes/simplefin-bridge";

const adminUrl = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const total = Number(process.env.BENCH_TRANSACTIONS || 100_000);
const accountCount = Number(process.env.BENCH_ACCOUNTS || 10);
const floorBatch = Number(process.env.BENCH_FLOOR_BATCH || 10_000);
const DAY = 86_400;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const name = `fg_bench_sync_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const bridge = new FakeSimplefinBridge();
  const days = 1000;
  const perDay = Math.ceil(total / accountCount / days);
  try {
    await bridge.start();
    const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
    bridge.accounts = Array.from({ length: accountCount }, (_, index) => ({
      id: `acct-${index}`,
      name: `Account ${index}`,
      currency: "USD",
      balance: "1000",
      "balance-date": today,
      org: { name: `Bank ${index % 3}`, "sfin-url": "https://bank.example" },
      transactions: generateHistory({ accountId: `acct-${index}`, days, perDay, seed: index * 1_000_000 }).slice(
        0,
        Math.ceil(total / accountCount),
      ),
    }));
    const rows = bridge.accounts.reduce((sum, account) => sum + account.transactions.length, 0);
    const config = loadConfig({
      DATABASE_URL: url.toString(),
      LOG_LEVEL: "silent",
      ALLOW_INSECURE_UPSTREAMS: "true",
      OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      BANK_HISTORY_DAYS: String(days),
      SIMPLEFIN_DAILY_REQUEST_BUDGET: "1000",
    });
    const runtime = await startRuntime(config, { api: false, workers: false });
    try {
      const { services, sequelize } = runtime;
      const syncUser = await services.users.create({ email: `sync-${name}@bench.test` });
      const floorUser = await services.users.create({ email: `floor-${name}@bench.test` });

      // Floor: the same rows, straight into the same tables.
      const floorAccounts = await Promise.all(
        bridge.accounts.map((account) =>
          services.accounts.create({ familyId: floorUser.familyId } as never, {
            name: account.name,
            accountType: "depository",
            currency: "USD",
          }),
        ),
      );
      const merchants = await services.repositories.banking.imports.merchantIds(floorUser.familyId, [
        ...new Set(bridge.accounts.flatMap((account) => account.transactions.map((row) => row.payee!))),
      ]);
      const flat: Array<{ accountId: string; row: FakeSimplefinTransaction }> = bridge.accounts.flatMap((account, index) =>
        account.transactions.map((row) => ({ accountId: floorAccounts[index].id, row })),
      );
      const floorStart = process.hrtime.bigint();
      for (let offset = 0; offset < flat.length; offset += floorBatch) {
        const batch = flat.slice(offset, offset + floorBatch);
        await sequelize.query(
          `INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, merchant_id, pending, external_id, source)
           SELECT v.id, $1, v.account_id, v.date, v.amount, 'USD', v.name, v.merchant_id, false, v.external_id, 'simplefin'
             FROM unnest($2::uuid[], $3::uuid[], $4::date[], $5::numeric[], $6::text[], $7::uuid[], $8::text[])
               AS v(id, account_id, date, amount, name, merchant_id, external_id)`,
          {
            bind: [
              floorUser.familyId,
              batch.map(() => newId()),
              batch.map(({ accountId }) => accountId),
              batch.map(({ row }) => new Date(row.posted * 1000).toISOString().slice(0, 10)),
              batch.map(({ row }) => new Decimal(row.amount).negated().toFixed()),
              batch.map(({ row }) => row.description),
              batch.map(({ row }) => merchants.get(row.payee!)),
              batch.map(({ row }) => row.id),
            ],
          },
        );
      }
      const floorSeconds = Number(process.hrtime.bigint() - floorStart) / 1e9;

      const actor = await services.apiKeys.authenticate((await services.apiKeys.create(syncUser.id, { scope: "read_write" })).plaintext);
      const connection = await services.banking.connectSimplefin(actor, bridge.newSetupToken());
      const timed = async (fullHistory: boolean) => {
        const start = process.hrtime.bigint();
        const run = await services.bankSync.run(connection.id, { fullHistory });
        return { run: run!, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
      };
      const first = await timed(false);
      const again = await timed(true);
      if (first.run.status !== "completed" || first.run.createdCount !== rows) throw new Error(`first sync: ${JSON.stringify(first.run)}`);
      if (again.run.status !== "completed" || again.run.createdCount + again.run.updatedCount !== 0)
        throw new Error(`re-sync: ${JSON.stringify(again.run)}`);

      const rate = (seconds: number) => Math.round(rows / seconds);
      console.log(
        `bank sync benchmark: ${rows} transactions, ${accountCount} accounts, ${bridge.accountWindows().length} /accounts requests`,
      );
      console.log(`  floor   multi-row INSERT  ${floorSeconds.toFixed(2)} s  ${rate(floorSeconds)} rows/s`);
      console.log(
        `  first   sync              ${first.seconds.toFixed(2)} s  ${rate(first.seconds)} rows/s  ${(floorSeconds / first.seconds).toFixed(2)}× floor (target ≥ 0.25×)`,
      );
      console.log(
        `  re-sync same data         ${again.seconds.toFixed(2)} s  ${rate(again.seconds)} rows/s  ${(first.seconds / again.seconds).toFixed(2)}× faster than first (target ≥ 3×)`,
      );
    } finally {
      await runtime.stop();
    }
  } finally {
    await bridge.stop();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
