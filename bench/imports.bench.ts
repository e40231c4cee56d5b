/**
 * Imports benchmark: `npm run bench:imports`.
 *
 * On a scratch database, a bank CSV of BENCH_IMPORT_ROWS rows (default 100,000: a year of days, 200
 * payees, amounts in cents, a category and a merchant column) is imported into a new account by the
 * service's own code (ImportService.create with publish: streamed in 64 KiB chunks, staged into
 * import_rows, fingerprinted and published in one transaction through the ledger's write path), and
 * measured in the same run beside its floor: `COPY` of the same rows, already parsed, into the
 * transactions table. It also times a preflight of the same file (target under 2 s). The publish runs in
 * a child process that does nothing else (it starts the service's runtime without the API role: no HTTP
 * server, GraphQL schema or SSO client, which it never uses; streams the file from disk and publishes
 * it), which samples its own RSS every 100 ms and reports it with its maxRSS, so the benchmark's own
 * copies of the rows do not count (target: peak under 200 MB, flat: the readings at each quarter of the
 * publish stay close).
 *
 * Ratios are printed next to their targets, MET or NOT MET; nothing is asserted (the machine is shared).
 * Settings (environment, optional): BENCH_DATABASE_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL (default redis://127.0.0.1:6379),
 * BENCH_IMPORT_ROWS, BENCH_ROUNDS (default 2; the best round of each counts).
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { createReadStream, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { loadConfig } from "../src/platform/config/config";
import { startRuntime } from "../src/app/runtime";
import { integerSetting } from "./bench-settings";

const adminUrl = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379";
const rows = integerSetting("BENCH_IMPORT_ROWS", 100_000, 1_000, 1_000_000);
const rounds = integerSetting("BENCH_ROUNDS", 2, 1, 20);
const CHUNK = 64 * 1024;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

type Line = { date: string; name: string; amount: string; category: string; merchant: string };

function bankRows(count: number): Line[] {
  const lines: Line[] = [];
  const start = Date.UTC(2025, 0, 1);
  for (let i = 0; i < count; i += 1) {
    const date = new Date(start + (i % 365) * 86_400_000).toISOString().slice(0, 10);
    const cents = ((i * 7919) % 200_000) - 20_000;
    // A bank's payee is often a merchant with a branch or a reference after it: 150 merchants under 200 payees.
    lines.push({
      date,
      name: `Payee ${i % 200}`,
      amount: (cents / 100).toFixed(2),
      category: `Category ${i % 20}`,
      merchant: `Merchant ${i % 150}`,
    });
  }
  return lines;
}

/** The file as an upload arrives: 64 KiB chunks. */
function* chunks(text: string): Generator<Buffer> {
  const bytes = Buffer.from(text, "utf8");
  for (let offset = 0; offset < bytes.length; offset += CHUNK) yield bytes.subarray(offset, offset + CHUNK);
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

const mib = (bytes: number) => bytes / 1024 / 1024;

function benchConfig(databaseUrl: string) {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `fgbench_${randomBytes(4).toString("hex")}`,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    RATE_LIMIT_REQUESTS: "0",
    IMPORT_MAX_ROWS: String(rows),
    DATABASE_STATEMENT_TIMEOUT_MS: "0",
  });
}

type ChildReport = { ms: number; written: number; samples: number[]; maxRssBytes: number };

/**
 * The publish child: `--publish-child <database url> <api key> <account id> <csv path>`. It reads the
 * file as an upload arrives (64 KiB chunks from disk), publishes it, and prints what it measured as JSON.
 */
async function publishChild([databaseUrl, key, accountId, file]: string[]): Promise<void> {
  const runtime = await startRuntime(benchConfig(databaseUrl), { api: false, workers: false });
  try {
    const { services } = runtime;
    const actor = await services.apiKeys.authenticate(key);
    const samples: number[] = [process.memoryUsage().rss];
    const sampler = setInterval(() => samples.push(process.memoryUsage().rss), 100);
    const publish = await timed(() =>
      services.imports.create(
        actor,
        {
          content: createReadStream(file, { highWaterMark: CHUNK }),
          fileName: "bank.csv",
          contentType: "text/csv",
          settings: { accountId },
        },
        true,
      ),
    );
    clearInterval(sampler);
    samples.push(process.memoryUsage().rss);
    const report: ChildReport = {
      ms: publish.ms,
      written: publish.value.importedCount ?? 0,
      samples,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await runtime.stop();
  }
}
const verdict = (met: boolean) => (met ? "MET" : "NOT MET");

async function main(): Promise<void> {
  const name = `fg_bench_imports_${randomBytes(4).toString("hex")}`;
  const csvPath = join(tmpdir(), `${name}.csv`);
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const config = benchConfig(url.toString());
    const runtime = await startRuntime(config, { api: true, workers: false });
    const client = new pg.Client({ connectionString: url.toString() });
    client.on("error", () => undefined);
    try {
      const { services } = runtime;
      const user = await services.users.create({ email: "bench@example.test", currency: "USD" });
      const key = (await services.apiKeys.create(user.id, { scope: "read_write" })).plaintext;
      const actor = await services.apiKeys.authenticate(key);
      await client.connect();
      const lines = bankRows(rows);
      const csv =
        ["date,name,amount,category,merchant", ...lines.map((l) => `${l.date},${l.name},${l.amount},${l.category},${l.merchant}`)].join(
          "\n",
        ) + "\n";
      console.log(`imports benchmark: ${rows} rows, ${mib(Buffer.byteLength(csv)).toFixed(1)} MiB of CSV, ${rounds} rounds`);
      writeFileSync(csvPath, csv);

      let bestCopy = Infinity;
      let bestPublish = Infinity;
      let bestPreflight = Infinity;
      let peak = 0;
      let maxRss = 0;
      let quarters: number[] = [];
      for (let round = 1; round <= rounds; round += 1) {
        // The floor: the same rows, parsed already, copied into a fresh account's transactions.
        const floorAccount = await services.accounts.create(actor, { name: `Floor ${round}`, accountType: "depository" });
        const copyText = lines
          .map(
            (l, i) =>
              `${randomBytes(16)
                .toString("hex")
                .replace(
                  /^(.{8})(.{4})(.{4})(.{4})(.{12})$/,
                  "$1-$2-$3-$4-$5",
                )},${user.familyId},${floorAccount.id},${l.date},${(-Number(l.amount)).toFixed(2)},USD,${l.name},${i}`,
          )
          .join("\n");
        const copy = await timed(async () => {
          const stream = client.query(
            copyFrom(
              "COPY transactions (id, family_id, account_id, date, amount, currency, name, external_id) FROM STDIN WITH (FORMAT csv)",
            ),
          );
          await pipeline(Readable.from([copyText]), stream);
        });
        bestCopy = Math.min(bestCopy, copy.ms);

        const account = await services.accounts.create(actor, { name: `Import ${round}`, accountType: "depository" });
        const settings = { accountId: account.id };
        const preflight = await timed(() =>
          services.imports.preflight(actor, { content: chunks(csv), fileName: "bank.csv", contentType: "text/csv", settings }),
        );
        bestPreflight = Math.min(bestPreflight, preflight.ms);

        const child = await execFileAsync(process.execPath, [__filename, "--publish-child", url.toString(), key, account.id, csvPath], {
          maxBuffer: 16 * 1024 * 1024,
        });
        const report = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as ChildReport;
        const publish = { ms: report.ms, value: { importedCount: report.written } };
        const samples = report.samples;
        maxRss = Math.max(maxRss, report.maxRssBytes);
        bestPublish = Math.min(bestPublish, publish.ms);
        peak = Math.max(peak, ...samples);
        quarters = [0, 0.25, 0.5, 0.75, 1].map((q) => samples[Math.min(samples.length - 1, Math.floor(q * (samples.length - 1)))]);
        console.log(
          `round ${round}: COPY ${copy.ms.toFixed(0)} ms, publish ${publish.ms.toFixed(0)} ms (${publish.value.importedCount} written), ` +
            `preflight ${preflight.ms.toFixed(0)} ms (${preflight.value.importableCount} importable)`,
        );
      }
      const ratio = bestPublish / bestCopy;
      console.log(`publish / COPY: ${ratio.toFixed(2)}× (target ≤ 3×: ${verdict(ratio <= 3)})`);
      console.log(`preflight: ${(bestPreflight / 1000).toFixed(2)} s (target < 2 s: ${verdict(bestPreflight < 2000)})`);
      console.log(
        `publish child's RSS: peak ${mib(peak).toFixed(0)} MiB, maxRSS ${mib(maxRss).toFixed(0)} MiB (target < 200 MB: ${verdict(Math.max(peak, maxRss) < 200 * 1024 * 1024)}); ` +
          `at the start and each quarter of the publish: ${quarters.map((q) => mib(q).toFixed(0)).join(", ")} MiB`,
      );
    } finally {
      await client.end().catch(() => undefined);
      await runtime.stop();
    }
  } finally {
    rmSync(csvPath, { force: true });
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

const execFileAsync = promisify(execFile);

(process.argv[2] === "--publish-child" ? publishChild(process.argv.slice(3)) : main()).catch((error) => {
  console.error(error);
  process.exit(1);
});
