/**
 * Retention benchmark: `npm run bench:retention`.
 *
 * On a scratch database it loads one month (January 2020) of BENCH_RETENTION_ROWS events (default 1
 * million) with their chain links, then measures in the same run:
 *   - archive: the retention job taking the month out (detach, per-tier JSONL.gz with SHA-256, read
 *     back and verified, manifests, signed checkpoint, drop), against the baseline `COPY (the same rows
 *     with their links) TO STDOUT` through gzip -6;
 *   - restore: loading the archived month back (streamed, checked against its manifest, inserted into
 *     a fresh partition with every index), against `COPY audit_events FROM STDIN` of the same rows
 *     into the same fresh partition;
 *   - search: the same filter inside the archive (streamed scan) and live on the restored month
 *     (indexes), a rare one (one e-mail address) and a common one (one event type, first page).
 * Each figure is printed as a ratio to its baseline (ours ÷ baseline time: 1.0 = as fast).
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL     admin connection URL (default postgres://postgres@127.0.0.1:5432/postgres);
 *                          fg_bench_retention_<random> is created there and dropped at the end
 *   BENCH_RETENTION_ROWS   events in the month (default 1000000)
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Writable } from "node:stream";
import { createGzip } from "node:zlib";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import { createLogger } from "../src/platform/common/logger";
import { loadConfig } from "../src/platform/config/config";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { LocalEventBus } from "../src/platform/events/event-bus";
import { DirectoryStore } from "../src/audit/retention/archive-store";
import { checkpointSigner } from "../src/audit/retention/checkpoint-key";
import { RetentionRepository } from "../src/audit/retention/retention.repository";
import { RetentionService } from "../src/audit/retention/retention.service";
import { createServices } from "../src/app/services";
import { createQueueBackend } from "../workers/queues";
import { integerSetting } from "./bench-settings";

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  rows: integerSetting("BENCH_RETENTION_ROWS", 1_000_000, 1000, 2_000_000),
};

const COLUMNS = `id, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type, resource_id, resource_label,
  ip_address, user_agent, session_id, request_id, changes, error`;
const MONTH = "2020-01-01";
const TABLE = "audit_events_y2020m01";

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

async function time<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = process.hrtime.bigint();
  const value = await work();
  return { value, seconds: seconds(started) };
}

/** Counts bytes and drops them. */
const sink = () =>
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });

async function main(): Promise<void> {
  const name = `fg_bench_retention_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-bench-retention-"));
  const config = loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: "silent", DATA_DIR: dataDir, AUDIT_RETENTION_TIERS: "compliance" });
  const sequelize = createSequelize({ url: url.toString(), poolMax: 4 });
  const events = new LocalEventBus(createLogger("silent"));
  const queues = createQueueBackend(config, url.toString());
  const client = new pg.Client({ connectionString: url.toString() });
  try {
    initModels(sequelize);
    await migrateToLatest(sequelize);
    await client.connect();
    const services = createServices(sequelize, events, { config, queues });
    console.log(`retention benchmark on ${name}: loading ${settings.rows.toLocaleString("en")} events into January 2020`);
    const load = await time(async () => {
      await client.query(`SELECT audit_create_month_partition('${MONTH}')`);
      await client.query(
        `INSERT INTO audit_events (${COLUMNS})
         SELECT gen_random_uuid(), '${MONTH}'::timestamptz + g * (interval '1 second' * 2), (ARRAY['auth.login.success', 'auth.login.failed', 'user.updated', 'auth.token.issued'])[g % 4 + 1],
                CASE WHEN g % 4 = 1 THEN 'warning' ELSE 'info' END, NULL, 'user' || (g % 50000) || '@example.com', NULL,
                CASE WHEN g % 4 = 1 THEN 'login' ELSE 'update' END, NULL, NULL, NULL,
                ('10.' || (g % 200) || '.' || (g % 250) || '.' || (g % 240 + 1))::inet, 'Mozilla/5.0 bench', 's-' || (g % 9000), 'r-' || g,
                CASE WHEN g % 4 = 2 THEN jsonb_build_object('name', jsonb_build_object('old', 'a' || g, 'new', 'b' || g)) END,
                CASE WHEN g % 4 = 1 THEN 'bad password' END
           FROM generate_series(1, $1::int) AS g`,
        [settings.rows],
      );
      await client.query(`SELECT set_config('finance_gateway.retention_drop', 'on', false)`);
      await client.query(
        `INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
         SELECT row_number() OVER (ORDER BY occurred_at, id), id, occurred_at, NULL, sha256(id::text::bytea) FROM ${TABLE}`,
      );
      await client.query(`UPDATE audit_chain_head SET seq = $1, hash = (SELECT hash FROM audit_chain WHERE seq = $1)`, [settings.rows]);
      await client.query(`ANALYZE ${TABLE}; ANALYZE audit_chain`);
    });
    console.log(`  load: ${load.seconds.toFixed(0)} s`);

    // Baseline out: COPY of the same rows with their links through gzip -6, in this process.
    const copyOut = await time(() =>
      pipeline(
        client.query(
          copyTo(
            `COPY (SELECT e.*, c.seq, c.prev_hash, c.hash FROM ${TABLE} e JOIN audit_chain c ON c.occurred_at = e.occurred_at AND c.event_id = e.id ORDER BY c.seq) TO STDOUT`,
          ),
        ),
        createGzip({ level: 6 }),
        sink(),
      ),
    );
    // The rows as COPY writes them, for the baseline in (not timed).
    const dump = path.join(dataDir, "rows.copy");
    await pipeline(client.query(copyTo(`COPY (SELECT ${COLUMNS} FROM ${TABLE}) TO STDOUT`)), fs.createWriteStream(dump));

    // The service's own retention code, with a hook that times each step of the month.
    let stepStarted = process.hrtime.bigint();
    const steps: string[] = [];
    const retention = new RetentionService(
      sequelize,
      new RetentionRepository(sequelize),
      services.audit,
      services.repositories.audit,
      new DirectoryStore(config.retention.archiveDir),
      checkpointSigner(config.retention),
      config.retention,
      undefined,
      {
        afterStep: (step) => {
          steps.push(`${step} ${seconds(stepStarted).toFixed(1)} s`);
          stepStarted = process.hrtime.bigint();
        },
      },
    );
    const archive = await time(() => retention.run(new Date("2020-06-01T00:00:00Z")));
    console.log(`  archive steps: ${steps.join(", ")}`);
    if (archive.value?.moved[0]?.rows !== settings.rows) throw new Error(`archived ${archive.value?.moved[0]?.rows} rows`);

    // Baseline in: the same rows into a fresh partition of the same month (every index), then gone again.
    await client.query(`SELECT audit_create_month_partition('${MONTH}')`);
    const copyIn = await time(() =>
      pipeline(fs.createReadStream(dump), client.query(copyFrom(`COPY audit_events (${COLUMNS}) FROM STDIN`))),
    );
    await client.query(`ALTER TABLE audit_events DETACH PARTITION ${TABLE}; DROP TABLE ${TABLE}`);

    const restore = await time(() => services.retention.restore("2020-01"));
    if (restore.value.rows !== settings.rows) throw new Error(`restored ${restore.value.rows} rows`);

    const archives = (await services.retention.archives()).map((row) => row.id);
    const searches = [
      { label: "rare (one e-mail address)", filter: { search: "user4242@example.com", from: "2020-01-01", to: "2020-01-31" } },
      { label: "common (one event type, first page)", filter: { eventTypes: ["auth.login.failed"], from: "2020-01-01", to: "2020-01-31" } },
    ];
    const searchFigures = [];
    for (const { label, filter } of searches) {
      const archived = await time(() => services.retention.search(archives, filter, { first: 50 }));
      const live = await time(() => services.audit.list(filter, { first: 50 }));
      searchFigures.push({
        label,
        archived: archived.seconds,
        live: live.seconds,
        ratio: archived.seconds / live.seconds,
        scanned: archived.value.scanned,
      });
    }

    const rows = settings.rows.toLocaleString("en");
    console.log(
      `archive ${rows} events: ${archive.seconds.toFixed(1)} s; COPY out|gzip ${copyOut.seconds.toFixed(1)} s; ratio ${(archive.seconds / copyOut.seconds).toFixed(2)}×`,
    );
    console.log(
      `restore ${rows} events: ${restore.seconds.toFixed(1)} s; COPY in ${copyIn.seconds.toFixed(1)} s; ratio ${(restore.seconds / copyIn.seconds).toFixed(2)}×`,
    );
    for (const figure of searchFigures)
      console.log(
        `search ${figure.label}: archived ${(figure.archived * 1000).toFixed(0)} ms (${figure.scanned.toLocaleString("en")} events read); live ${(figure.live * 1000).toFixed(0)} ms; ratio ${figure.ratio.toFixed(1)}×`,
      );
    console.log(
      JSON.stringify({
        rows: settings.rows,
        archiveSeconds: archive.seconds,
        copyOutSeconds: copyOut.seconds,
        restoreSeconds: restore.seconds,
        copyInSeconds: copyIn.seconds,
        searches: searchFigures,
      }),
    );
  } finally {
    await client.end().catch(() => undefined);
    await queues.close();
    await sequelize.close();
    await events.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
