/**
 * Retention benchmark: `npm run bench:retention`.
 *
 * Loads one month (January 2020) of BENCH_RETENTION_ROWS events (default 1 million) with their chain
 * links into a template database, then, each on its own copy of it (CREATE DATABASE … TEMPLATE, so
 * every run starts from the same bytes), measures in the same run:
 *   - archive: the retention job taking the month out (counts, detach, per-tier JSONL.gz with SHA-256,
 *     read back and verified, manifests, signed checkpoint, drop), before (the month writer as it was
 *     before issue #28 item 7, kept below as LegacyMonthArchiver: a statement per 5,000 events, each
 *     line handed to gzip -6 one by one, the file unpacked again after storing) and after (the service's
 *     own MonthArchiver: one binary COPY, lines gathered into chunks, gzip -2 checked as it is written);
 *     both must write the same lines (their data SHA-256 are compared);
 *   - release: a restored month (its events and their chain links) removed again, before and after
 *     item 7. Before (LegacyRestoreRepository, the release as it was, on its own copy whose audit_chain
 *     is laid out as it was: one table, not partitioned, keys and append-only trigger as migration 0007
 *     made them, the same links copied in before the clock starts): the month's events counted, its
 *     links deleted row by row through the trigger, its event partition detached and dropped. After:
 *     the service's release (both partitions dropped whole). Both must leave neither the month's events
 *     nor any of its links behind. A third figure, "partitioned, counting first", is the release of the
 *     partitioned layout as it stood before it stopped counting (the baseline this benchmark printed
 *     until it was corrected: it ran the old release on the new layout, where the link delete finds
 *     nothing), kept so the two can be told apart.
 * Each pair is printed with its ratio (before ÷ after: 3.0× = three times as fast).
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL     admin connection URL (default postgres://postgres@127.0.0.1:5432/postgres);
 *                          fg_bench_retention_<random>[_a…_e] are created there and dropped at the end
 *   BENCH_RETENTION_ROWS   events in the month (default 1000000)
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { Sequelize, Transaction } from "sequelize";
import { createLogger } from "../src/platform/common/logger";
import { loadConfig, type RetentionConfig } from "../src/platform/config/config";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { LocalEventBus } from "../src/platform/events/event-bus";
import { newId } from "../src/platform/common/ids";
import { limitLockWait, selectRows } from "../src/platform/common/sql";
import { ArchiveWriter, manifestPathOf, readBackArchive, writeManifest } from "../src/platform/files/archive-writer";
import { DirectoryStore, type ArchiveStore } from "../src/audit/retention/archive-store";
import { checkpointSigner } from "../src/audit/retention/checkpoint-key";
import { dropChainPartition, RetentionRepository, type ArchiveManifest } from "../src/audit/retention/retention.repository";
import { RetentionService } from "../src/audit/retention/retention.service";
import { keepUntil, monthEnd, monthLabel, tierResolver, type RetentionSettings, type Tier } from "../src/audit/retention/retention-tiers";
import { checkpointText, signNote, type NoteSigner } from "../src/audit/retention/signed-note";
import type { AuditService, AuditUser } from "../src/audit/log";
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

function urlOf(name: string): string {
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The template: the schema, the month's events (every index) and one link per event, hashes chained. */
async function loadTemplate(name: string): Promise<void> {
  const sequelize = createSequelize({ url: urlOf(name), poolMax: 2 });
  initModels(sequelize);
  await migrateToLatest(sequelize);
  await sequelize.close();
  const client = new pg.Client({ connectionString: urlOf(name) });
  await client.connect();
  try {
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
    // Links as long as real ones (32-byte hashes, each naming the one before); archive and release never recompute them.
    await client.query(
      `INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
       SELECT row_number() OVER w, id, occurred_at, lag(sha256(id::text::bytea)) OVER w, sha256(id::text::bytea)
         FROM ${TABLE} WINDOW w AS (ORDER BY occurred_at, id)`,
    );
    await client.query(`UPDATE audit_chain_head SET seq = $1, hash = (SELECT hash FROM audit_chain WHERE seq = $1)`, [settings.rows]);
    await client.query(`VACUUM ANALYZE ${TABLE}`);
    await client.query(`VACUUM ANALYZE audit_chain`);
  } finally {
    await client.end();
  }
}

/** A copy of the loaded template with the service on it (its connections closed by `close`). */
async function open(admin: pg.Client, template: string, name: string, prepare: string[] = []) {
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = urlOf(name);
  if (prepare.length) {
    // Before the service's connections exist, so none of them holds a plan of the layout replaced here.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const statement of prepare) await client.query(statement);
    } catch (error) {
      // Not a rig yet, so the clean-up at the end would not find this copy.
      await client.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      throw error;
    }
    await client.end();
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-bench-retention-"));
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: "silent", DATA_DIR: dataDir, AUDIT_RETENTION_TIERS: "compliance" });
  const sequelize = createSequelize({ url, poolMax: 4 });
  initModels(sequelize);
  const events = new LocalEventBus(createLogger("silent"));
  const queues = createQueueBackend(config, url);
  const services = createServices(sequelize, events, { config, queues });
  const steps: string[] = [];
  let stepStarted = process.hrtime.bigint();
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
  return {
    sequelize,
    services,
    retention,
    config,
    steps,
    startSteps: () => {
      steps.length = 0;
      stepStarted = process.hrtime.bigint();
    },
    close: async () => {
      await queues.close();
      await sequelize.close();
      await events.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
type Rig = Awaited<ReturnType<typeof open>>;

/** Archives the month as the retention job does (a run in June 2020); the month writer `legacy` or the service's own. */
async function archive(rig: Rig, legacy: boolean) {
  if (legacy) {
    // Only the month writer differs: counts, detach, the commit and the drop are the service's in both.
    const service = rig.retention as unknown as Record<string, unknown>;
    const original = service.archiver as { [key: string]: unknown };
    service.archiver = new LegacyMonthArchiver(
      rig.sequelize,
      new RetentionRepository(rig.sequelize),
      rig.services.audit,
      original.store as ArchiveStore,
      original.signer as () => Promise<NoteSigner>,
      rig.config.retention,
      original.afterStep as (step: "written" | "archived", month: string) => void,
    );
  }
  rig.startSteps();
  const run = await time(() => rig.retention.run(new Date("2020-06-01T00:00:00Z")));
  const moved = run.value?.moved[0];
  if (moved?.rows !== settings.rows) throw new Error(`archived ${moved?.rows} rows`);
  const [stored] = await rig.retention.archives();
  return { seconds: run.seconds, steps: rig.steps.join(", "), sha256: moved.archives[0].sha256, fileBytes: stored.manifest.fileBytes };
}

/**
 * Releases the month as if restored (its events and links as a restore leaves them); `legacy` the
 * release as it was before item 7 (on a copy with the flat audit_chain), `partitionedCounting` the
 * partitioned release as it was before it stopped counting, or neither: the service's own.
 */
async function release(rig: Rig, legacy: "before item 7" | "partitioned, counting" | null) {
  await rig.sequelize.query(
    `INSERT INTO audit_retention_months (month, state, table_name, rows) VALUES ('${MONTH}', 'restored', '${TABLE}', ${settings.rows})`,
  );
  const [[{ links }]] = (await rig.sequelize.query(
    `SELECT count(*)::int AS links FROM audit_chain WHERE occurred_at >= '${MONTH}' AND occurred_at < '${MONTH}'::timestamptz + interval '1 month'`,
  )) as [{ links: number }[], unknown];
  if (links !== settings.rows) throw new Error(`the month has ${links} links before its release`);
  if (legacy) {
    const restorer = (rig.retention as unknown as { restorer: Record<string, unknown> }).restorer;
    restorer.restoreRepository =
      legacy === "before item 7" ? new LegacyRestoreRepository(rig.sequelize) : new PartitionedCountingRestoreRepository(rig.sequelize);
  }
  const run = await time(() => rig.retention.release("2020-01"));
  if (run.value.rows !== settings.rows) throw new Error(`released ${run.value.rows} rows`);
  // Every side must have done the whole release: no event partition, no link of the month left anywhere.
  const [[left]] = (await rig.sequelize.query(
    `SELECT to_regclass('${TABLE}') IS NOT NULL AS partition,
            (SELECT count(*)::int FROM audit_chain WHERE occurred_at >= '${MONTH}' AND occurred_at < '${MONTH}'::timestamptz + interval '1 month') AS links`,
  )) as [{ partition: boolean; links: number }[], unknown];
  if (left.partition || left.links !== 0) throw new Error(`release left ${JSON.stringify(left)}`);
  return { seconds: run.seconds };
}

/**
 * audit_chain as it was before item 7 (migration 0017): one table, keys and append-only trigger as
 * migration 0007 made them, holding the template's links. Built on the copy before it is timed.
 */
const FLAT_CHAIN = [
  `CREATE TABLE audit_chain_flat (seq bigint NOT NULL, event_id uuid NOT NULL, occurred_at timestamptz NOT NULL, prev_hash bytea, hash bytea NOT NULL);
   INSERT INTO audit_chain_flat (seq, event_id, occurred_at, prev_hash, hash) SELECT seq, event_id, occurred_at, prev_hash, hash FROM audit_chain ORDER BY seq;
   DROP TABLE audit_chain;
   ALTER TABLE audit_chain_flat RENAME TO audit_chain;
   ALTER TABLE audit_chain ADD PRIMARY KEY (seq), ADD UNIQUE (occurred_at, event_id);
   CREATE TRIGGER audit_chain_append_only BEFORE UPDATE OR DELETE ON audit_chain FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();`,
  // As the template was left (its tables vacuumed and analysed), and its pages written out before the clock starts.
  "VACUUM ANALYZE audit_chain",
  "CHECKPOINT",
];

async function main(): Promise<void> {
  const name = `fg_bench_retention_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  const rigs: Rig[] = [];
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const rows = settings.rows.toLocaleString("en");
    console.log(
      `retention benchmark on ${name}: loading ${rows} events into January 2020 (the machine may be shared: compare within this run)`,
    );
    const load = await time(() => loadTemplate(name));
    console.log(`  load: ${load.seconds.toFixed(0)} s`);

    const copies = await time(async () => {
      for (const suffix of ["a", "b", "c", "d", "e"])
        rigs.push(await open(admin, name, `${name}_${suffix}`, suffix === "c" ? FLAT_CHAIN : []));
    });
    console.log(`  five copies of the template (one with audit_chain as it was before item 7): ${copies.seconds.toFixed(0)} s`);
    const [legacyArchiveRig, archiveRig, legacyReleaseRig, releaseRig, countingReleaseRig] = rigs;

    const archiveBefore = await archive(legacyArchiveRig, true);
    console.log(`  archive before: ${archiveBefore.seconds.toFixed(1)} s (${archiveBefore.steps})`);
    const archiveAfter = await archive(archiveRig, false);
    console.log(`  archive after:  ${archiveAfter.seconds.toFixed(1)} s (${archiveAfter.steps})`);
    if (archiveBefore.sha256 !== archiveAfter.sha256) throw new Error("the two writers wrote different lines");
    const releaseBefore = await release(legacyReleaseRig, "before item 7");
    console.log(`  release before: ${releaseBefore.seconds.toFixed(2)} s (audit_chain not partitioned: links deleted row by row)`);
    const releaseCounting = await release(countingReleaseRig, "partitioned, counting");
    console.log(`  release partitioned, counting first: ${releaseCounting.seconds.toFixed(2)} s`);
    const releaseAfter = await release(releaseRig, null);
    console.log(`  release after:  ${releaseAfter.seconds.toFixed(2)} s`);

    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    console.log(
      `archive ${rows} events: before ${archiveBefore.seconds.toFixed(1)} s, after ${archiveAfter.seconds.toFixed(1)} s: ${(archiveBefore.seconds / archiveAfter.seconds).toFixed(2)}× as fast; same lines (SHA-256 ${archiveAfter.sha256.slice(0, 12)}…), file ${mb(archiveBefore.fileBytes)} MB before, ${mb(archiveAfter.fileBytes)} MB after`,
    );
    console.log(
      `release ${rows} events: before ${releaseBefore.seconds.toFixed(2)} s, after ${releaseAfter.seconds.toFixed(2)} s: ${(releaseBefore.seconds / releaseAfter.seconds).toFixed(2)}× as fast (partitioned, counting first: ${releaseCounting.seconds.toFixed(2)} s, ${(releaseCounting.seconds / releaseAfter.seconds).toFixed(2)}×)`,
    );
    console.log(
      JSON.stringify({
        rows: settings.rows,
        archiveBeforeSeconds: archiveBefore.seconds,
        archiveAfterSeconds: archiveAfter.seconds,
        archiveSpeedup: archiveBefore.seconds / archiveAfter.seconds,
        archiveBeforeSteps: archiveBefore.steps,
        archiveAfterSteps: archiveAfter.steps,
        archiveFileBytes: { before: archiveBefore.fileBytes, after: archiveAfter.fileBytes },
        releaseBeforeSeconds: releaseBefore.seconds,
        releaseAfterSeconds: releaseAfter.seconds,
        releaseSpeedup: releaseBefore.seconds / releaseAfter.seconds,
        releasePartitionedCountingSeconds: releaseCounting.seconds,
      }),
    );
  } finally {
    for (const rig of rigs) await rig.close().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

// ---------------------------------------------------------------------------------------------------
// The baseline: the month writer as it was before issue #28 item 7 (commit 7d75768) and the release as
// it was before item 7 (commit 17f2bfb, on the flat audit_chain of the time), kept here unchanged but for
// names, so "before" is measured in the same run as "after".

/** Events read from the database per round trip while archiving. */
const ARCHIVE_BATCH = 5000;

class LegacyMonthArchiver {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: RetentionRepository,
    private readonly audit: AuditService,
    private readonly store: ArchiveStore,
    private readonly signer: () => Promise<NoteSigner>,
    private readonly config: RetentionConfig,
    private readonly afterStep: (step: "written" | "archived", month: string) => void | Promise<void>,
  ) {}

  async archive(month: Date, tableName: string, settings: RetentionSettings, user: AuditUser | null = null) {
    const label = monthLabel(month);
    const tierOf = tierResolver(settings);
    const range = { from: month, before: monthEnd(month) };
    const expected = (await this.repository.months()).find((row) => monthLabel(row.month) === label)?.rows;
    type Part = {
      writer: ArchiveWriter;
      file: string;
      rows: number;
      first: { seq: string; at: string } | null;
      last: { seq: string; at: string } | null;
    };
    const parts = new Map<Tier, Part>();
    let head: { seq: string; hash: string } | null = null;
    await fs.promises.mkdir(this.config.stagingDir, { recursive: true, mode: 0o700 });
    try {
      for (let after = "0"; ;) {
        const lines = await this.repository.monthLines(tableName, range, after, ARCHIVE_BATCH);
        for (const line of lines) {
          const tier = tierOf(line.eventType);
          let part = parts.get(tier);
          if (!part) {
            const file = path.join(this.config.stagingDir, `audit-${label}-${tier}.jsonl.gz`);
            part = { writer: await ArchiveWriter.create(file), file, rows: 0, first: null, last: null };
            parts.set(tier, part);
          }
          await part.writer.write(`${line.line}\n`, 1);
          part.rows += 1;
          part.first ??= { seq: line.seq, at: line.occurredAt };
          part.last = { seq: line.seq, at: line.occurredAt };
          head = { seq: line.seq, hash: line.hash };
        }
        if (lines.length < ARCHIVE_BATCH) break;
        after = lines[lines.length - 1].seq;
      }
    } catch (error) {
      for (const part of parts.values()) await part.writer.abort();
      throw error;
    }
    const archives: { id: string; tier: Tier; storageKey: string; manifest: ArchiveManifest; keepUntil: Date }[] = [];
    for (const [tier, part] of parts) {
      const summary = await part.writer.finish();
      const manifest: ArchiveManifest = {
        format: "finance-gateway-audit-archive/1",
        month: label,
        tier,
        rows: summary.rows,
        firstTimestamp: part.first?.at ?? null,
        lastTimestamp: part.last?.at ?? null,
        firstSeq: part.first?.seq ?? null,
        lastSeq: part.last?.seq ?? null,
        sha256: summary.dataSha256,
        fileSha256: summary.fileSha256,
        dataBytes: summary.dataBytes,
        fileBytes: summary.fileBytes,
        createdAt: new Date().toISOString(),
      };
      const storageKey = `${label.slice(0, 4)}/${label.slice(5, 7)}/audit-${label}-${tier}.jsonl.gz`;
      const manifestFile = await writeManifest(part.file, manifest);
      await this.store.put(storageKey, part.file);
      await this.store.put(manifestPathOf(storageKey), manifestFile);
      const stored = await readBackArchive(await this.store.open(storageKey));
      if (stored.dataSha256 !== manifest.sha256 || stored.fileSha256 !== manifest.fileSha256 || stored.lines !== manifest.rows)
        throw new Error(`archive ${storageKey} read back from ${this.store.where} does not match what was written`);
      archives.push({ id: newId(), tier, storageKey, manifest, keepUntil: keepUntil(month, tier) });
    }
    const total = archives.reduce((sum, archive) => sum + archive.manifest.rows, 0);
    if (expected !== null && expected !== undefined && Number(expected) !== total)
      throw new Error(`month ${label} held ${expected} events but ${total} were archived`);
    await this.afterStep("written", label);
    const checkpoint = head ? await this.signCheckpoint(head) : null;
    await this.sequelize.transaction(async (transaction) => {
      await this.repository.recordArchived(month, archives, checkpoint, transaction);
      await this.audit.record(transaction, {
        type: "audit.archive.created",
        user,
        action: "archive",
        resource: { type: "audit-month", id: label },
        changes: Object.fromEntries(archives.map((archive) => [archive.tier, { old: null, new: archive.manifest }])),
      });
      if (checkpoint)
        await this.audit.record(transaction, {
          type: "audit.checkpoint.signed",
          user,
          action: "sign",
          resource: { type: "audit-checkpoint", id: checkpoint.treeSize, label },
          changes: { checkpoint: { old: null, new: checkpoint.note } },
        });
    });
    await this.afterStep("archived", label);
    return {
      month: label,
      rows: total,
      archives: archives.map((archive) => ({ tier: archive.tier, rows: archive.manifest.rows, sha256: archive.manifest.sha256 })),
    };
  }

  private async signCheckpoint(head: { seq: string; hash: string }) {
    const signer = await this.signer();
    const rootHash = Buffer.from(head.hash, "hex");
    const note = signNote(checkpointText({ origin: signer.name, treeSize: BigInt(head.seq), rootHash }), signer);
    return { treeSize: head.seq, rootHash, note };
  }
}

const PARTITION_NAME = /^audit_events_y\d{4}m(0[1-9]|1[0-2])$/;
function table(name: string): string {
  if (!PARTITION_NAME.test(name)) throw new Error(`not an audit partition name: ${name}`);
  return `"${name}"`;
}

/** The release before item 7 (17f2bfb): audit_chain one table, so the month's links are deleted by range, row by row. */
class LegacyRestoreRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async release(tableName: string, range: { from: Date; before: Date }, transaction: Transaction): Promise<number> {
    await limitLockWait(this.sequelize, transaction, 2000);
    const [{ rows }] = await selectRows<{ rows: number }>(
      this.sequelize,
      `SELECT count(*)::int AS rows FROM ${table(tableName)}`,
      [],
      transaction,
    );
    await selectRows(this.sequelize, "SELECT set_config('finance_gateway.retention_drop', 'on', true) AS on", [], transaction);
    await selectRows(
      this.sequelize,
      "WITH d AS (DELETE FROM audit_chain WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING 1) SELECT count(*)::int AS links FROM d",
      [range.from, range.before],
      transaction,
    );
    await this.sequelize.query(`ALTER TABLE audit_events DETACH PARTITION ${table(tableName)}`, { transaction });
    await this.sequelize.query(`DROP TABLE ${table(tableName)}`, { transaction });
    return rows;
  }
}

/** The partitioned release as it was before it stopped counting (7d75768): count, link partition, range delete, events. */
class PartitionedCountingRestoreRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async release(tableName: string, range: { from: Date; before: Date }, transaction: Transaction): Promise<number> {
    await limitLockWait(this.sequelize, transaction, 2000);
    const [{ rows }] = await selectRows<{ rows: number }>(
      this.sequelize,
      `SELECT count(*)::int AS rows FROM ${table(tableName)}`,
      [],
      transaction,
    );
    await dropChainPartition(this.sequelize, tableName, transaction);
    await selectRows(this.sequelize, "SELECT set_config('finance_gateway.retention_drop', 'on', true) AS on", [], transaction);
    await selectRows(
      this.sequelize,
      "WITH d AS (DELETE FROM audit_chain WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING 1) SELECT count(*)::int AS links FROM d",
      [range.from, range.before],
      transaction,
    );
    await this.sequelize.query(`ALTER TABLE audit_events DETACH PARTITION ${table(tableName)}`, { transaction });
    await this.sequelize.query(`DROP TABLE ${table(tableName)}`, { transaction });
    return rows;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
