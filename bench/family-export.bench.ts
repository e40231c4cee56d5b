/**
 * Family export benchmark: `npm run bench:family-export`.
 *
 * On a scratch database it loads one family with BENCH_FAMILY_TRANSACTIONS transactions (default
 * 100,000; categories, merchants and tags on some of them) beside a few accounts, then writes the
 * family's export with the worker's own code (FamilyExportService.write: one snapshot, COPY of every
 * file, SHA-256 per file, zip, manifest) and, in the same run, the floor: `COPY` of each of the family's
 * tables (accounts, categories, tags, merchants, valuations, transactions, transaction_tags, trades)
 * `TO STDOUT` piped through `zip -6`, as an administrator would dump the family by hand. It prints the
 * ratio of the times (target: within 2×) and the process's peak RSS per quarter of the run (flat =
 * constant memory). Rounds alternate ours and the floor; each side's best round counts.
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL          admin connection URL (default postgres://postgres@127.0.0.1:5432/postgres);
 *                               fg_bench_fexport_<random> is created there and dropped at the end
 *   BENCH_FAMILY_TRANSACTIONS   transactions of the family (default 100000)
 *   BENCH_ROUNDS                rounds (default 3)
 */
import "reflect-metadata";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createLogger } from "../src/platform/common/logger";
import { loadConfig } from "../src/platform/config/config";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { LocalEventBus } from "../src/platform/events/event-bus";
import { createServices } from "../src/app/services";
import { createQueueBackend } from "../workers/queues";
import { integerSetting } from "./bench-settings";

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  transactions: integerSetting("BENCH_FAMILY_TRANSACTIONS", 100_000, 100, 10_000_000),
  rounds: integerSetting("BENCH_ROUNDS", 3, 1, 20),
};

const FAMILY_TABLES = ["accounts", "categories", "tags", "merchants", "valuations", "transactions", "trades"];

/** The floor: COPY of each of the family's tables TO STDOUT, one psql session, piped through zip -6. */
function copyFloor(url: string, familyId: string): Promise<{ seconds: number; bytes: number }> {
  const copies = [
    ...FAMILY_TABLES.map((table) => `COPY (SELECT * FROM ${table} WHERE family_id = '${familyId}') TO STDOUT (FORMAT csv);`),
    `COPY (SELECT tt.* FROM transaction_tags tt JOIN transactions t ON t.id = tt.transaction_id WHERE t.family_id = '${familyId}') TO STDOUT (FORMAT csv);`,
  ].join("\n");
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", `psql "$BENCH_URL" -X -q -f - <<< "$BENCH_COPY" | zip -q -6 - - | wc -c`], {
      env: { ...process.env, BENCH_URL: url, BENCH_COPY: copies },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`the floor exited with ${code}`));
      resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes: Number(out.trim()) });
    });
  });
}

function rssSampler() {
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(process.memoryUsage.rss()), 50);
  return {
    stop() {
      clearInterval(timer);
      samples.push(process.memoryUsage.rss());
      const quarter = Math.max(1, Math.ceil(samples.length / 4));
      const quarters = [0, 1, 2, 3].map((q) => Math.max(...samples.slice(q * quarter, (q + 1) * quarter), 0));
      return { peak: Math.max(...samples), quarters };
    },
  };
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

/** The family's data, set-based: accounts, categories, merchants, tags, then the transactions and some tag links. */
async function loadFamily(sequelize: ReturnType<typeof createSequelize>, familyId: string, transactions: number): Promise<void> {
  const statements = [
    `INSERT INTO accounts (id, family_id, name, account_type, classification, currency, balance)
     SELECT gen_random_uuid(), $1, 'Account ' || n, CASE WHEN n = 5 THEN 'credit_card' ELSE 'depository' END,
            CASE WHEN n = 5 THEN 'liability' ELSE 'asset' END, 'USD', 0 FROM generate_series(1, 5 + 0 * $2) AS n`,
    `INSERT INTO categories (id, family_id, name, classification, color, icon)
     SELECT gen_random_uuid(), $1, 'Category ' || n, 'expense', '#123456', 'tag' FROM generate_series(1, 20 + 0 * $2) AS n`,
    `INSERT INTO merchants (id, family_id, name) SELECT gen_random_uuid(), $1, 'Merchant ' || n FROM generate_series(1, 200 + 0 * $2) AS n`,
    `INSERT INTO tags (id, family_id, name, color) SELECT gen_random_uuid(), $1, 'tag ' || n, '#654321' FROM generate_series(1, 10 + 0 * $2) AS n`,
    `INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, category_id, merchant_id)
     SELECT gen_random_uuid(), $1, (SELECT array_agg(id ORDER BY name) FROM accounts WHERE family_id = $1)[1 + n % 5],
            DATE '2016-01-01' + (n % 3650), round((random() * 500 - 100)::numeric, 2), 'USD', 'Purchase number ' || n,
            CASE WHEN n % 3 = 0 THEN 'a note, "quoted"' END,
            CASE WHEN n % 2 = 0 THEN (SELECT array_agg(id ORDER BY name) FROM categories WHERE family_id = $1)[1 + n % 20] END,
            CASE WHEN n % 4 = 0 THEN (SELECT array_agg(id ORDER BY name) FROM merchants WHERE family_id = $1)[1 + n % 200] END
       FROM generate_series(1, $2) AS n`,
    `INSERT INTO transaction_tags (transaction_id, tag_id)
     SELECT t.id, (SELECT array_agg(id ORDER BY name) FROM tags WHERE family_id = $1)[1 + abs(hashtext(t.id::text)) % 10]
       FROM transactions t WHERE t.family_id = $1 AND abs(hashtext(t.name)) % 5 = 0 AND $2 > 0`,
  ];
  for (const sql of statements) await sequelize.query(sql, { bind: [familyId, transactions] });
  await sequelize.query("ANALYZE");
}

async function main(): Promise<void> {
  const name = `fg_bench_fexport_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  const exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-bench-fexport-"));
  const config = loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: "silent", EXPORT_DIR: exportDir, DATA_DIR: exportDir });
  const sequelize = createSequelize({ url: url.toString(), poolMax: 4 });
  const events = new LocalEventBus(createLogger("silent"));
  const queues = createQueueBackend(config, url.toString());
  try {
    initModels(sequelize);
    await migrateToLatest(sequelize);
    const services = createServices(sequelize, events, { config, queues });
    const owner = await services.users.create({ email: `bench-${randomUUID()}@example.com`, role: "admin" });
    console.log(
      `family export benchmark on ${name}: ${settings.transactions.toLocaleString("en")} transactions (machine shared: compare ratios, not times)`,
    );
    const loadStarted = Date.now();
    await loadFamily(sequelize, owner.familyId, settings.transactions);
    console.log(`  load: ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);
    let bestOurs = Infinity;
    let bestFloor = Infinity;
    let peak = 0;
    for (let round = 1; round <= settings.rounds; round++) {
      const floor = await copyFloor(url.toString(), owner.familyId);
      const file = path.join(exportDir, `round-${round}.zip`);
      const sampler = rssSampler();
      const started = process.hrtime.bigint();
      const written = await services.familyExports.write({ id: randomUUID(), familyId: owner.familyId }, file);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const rss = sampler.stop();
      const rows = Object.fromEntries(written.manifest.files.map((f) => [f.name, f.rows]));
      if (rows["transactions.csv"] !== settings.transactions) throw new Error(`transactions.csv has ${rows["transactions.csv"]} lines`);
      fs.rmSync(file, { force: true });
      bestOurs = Math.min(bestOurs, seconds);
      bestFloor = Math.min(bestFloor, floor.seconds);
      peak = Math.max(peak, rss.peak);
      console.log(
        `  round ${round}: ours ${seconds.toFixed(2)} s (${mb(written.fileBytes)} zip, ${rows["all.ndjson"].toLocaleString("en")} NDJSON lines), ` +
          `COPY|zip ${floor.seconds.toFixed(2)} s (${mb(floor.bytes)}), ratio ${(seconds / floor.seconds).toFixed(2)}×, ` +
          `peak RSS ${mb(rss.peak)} (per quarter: ${rss.quarters.map(mb).join(", ")})`,
      );
    }
    const ratio = bestOurs / bestFloor;
    console.log(
      `family export of ${settings.transactions.toLocaleString("en")} transactions: ours ${bestOurs.toFixed(2)} s, COPY|zip ${bestFloor.toFixed(2)} s, ratio ${ratio.toFixed(2)}×`,
    );
    console.log(`target within 2× of COPY … TO STDOUT | zip: ${ratio <= 2 ? "MET" : "NOT MET"} (${ratio.toFixed(2)}×)`);
    console.log(
      JSON.stringify({
        transactions: settings.transactions,
        oursSeconds: bestOurs,
        floorSeconds: bestFloor,
        ratio,
        peakRssMb: Math.round(peak / 1048576),
      }),
    );
  } finally {
    await queues.close();
    await sequelize.close();
    await events.close();
    fs.rmSync(exportDir, { recursive: true, force: true });
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
