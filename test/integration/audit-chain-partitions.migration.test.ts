import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { Sequelize } from "sequelize";
import { createMigrator } from "../../src/platform/db/migrator";
import { adminUrl, databaseUrl } from "../helpers/database-urls";

/**
 * Migration 0017 over a database as it was before it: an unpartitioned audit_chain holding the links of
 * two attached months, of a detached month (on its way out through retention) and of events in the
 * default partition. Every link must come through unchanged, each in its month's partition (or the
 * default one), the append-only rule must still hold, the sequencer must still chain, and retention's
 * drop of a month must now be a partition drop.
 */
jest.setTimeout(120_000);

const ROWS_PER_MONTH = 5000;
const name = `fg_test_${process.env.JEST_WORKER_ID ?? "0"}_mig17_${randomBytes(4).toString("hex")}`;
let admin: Client;
let sequelize: Sequelize;

async function rows<T>(sql: string): Promise<T[]> {
  const [result] = await sequelize.query(sql);
  return result as T[];
}

beforeAll(async () => {
  admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  sequelize = new Sequelize(databaseUrl(name), { logging: false, pool: { max: 2 } });
});

afterAll(async () => {
  await sequelize?.close();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

test("links keep their content, land in their month's partition, stay append-only; the sequencer and retention's drop work on partitions", async () => {
  const migrator = createMigrator(sequelize);
  await migrator.up({ to: "0015-ledger" });
  expect((await rows<{ kind: string }>(`SELECT relkind::text AS kind FROM pg_class WHERE relname = 'audit_chain'`))[0].kind).toBe("r");

  // Events of March and April 2021 (attached partitions), of May 2021 (detached later) and of 1999 (default partition),
  // chained by the sequencer as the application does it.
  await sequelize.query(`
    SELECT audit_create_month_partition(m::date) FROM unnest(ARRAY['2021-03-01', '2021-04-01', '2021-05-01']) AS m;
    INSERT INTO audit_events (id, occurred_at, event_type, severity, user_email, action)
      SELECT gen_random_uuid(), month + (g * interval '7 seconds'), 'user.updated', 'info', 'u' || g || '@example.test', 'update'
        FROM unnest(ARRAY['2021-03-01'::timestamptz, '2021-04-01', '2021-05-01', '1999-06-01']) AS month,
             generate_series(1, ${ROWS_PER_MONTH}) AS g;
    INSERT INTO audit_unchained (event_id, occurred_at) SELECT id, occurred_at FROM audit_events ORDER BY occurred_at, id;
    SELECT count(*) FROM audit_chain_pending(${ROWS_PER_MONTH * 4});
    ALTER TABLE audit_events DETACH PARTITION audit_events_y2021m05;
  `);
  const fingerprint = `SELECT count(*)::int AS links, md5(string_agg(seq || ':' || event_id || ':' || occurred_at || ':' ||
      coalesce(encode(prev_hash, 'hex'), '') || ':' || encode(hash, 'hex'), ',' ORDER BY seq)) AS digest FROM audit_chain`;
  const [before] = await rows<{ links: number; digest: string }>(fingerprint);
  expect(before.links).toBe(ROWS_PER_MONTH * 4);

  const started = Date.now();
  await migrator.up();
  const migrationMs = Date.now() - started;

  expect((await rows<{ kind: string }>(`SELECT relkind::text AS kind FROM pg_class WHERE relname = 'audit_chain'`))[0].kind).toBe("p");
  const [after] = await rows<{ links: number; digest: string }>(fingerprint);
  expect(after).toEqual(before);
  const placed = await rows<{ partition: string; links: number }>(
    `SELECT tableoid::regclass::text AS partition, count(*)::int AS links FROM audit_chain GROUP BY 1 ORDER BY 1`,
  );
  expect(placed).toEqual([
    // The detached May and the default partition's 1999 have no link partition.
    { partition: "audit_chain_default", links: ROWS_PER_MONTH * 2 },
    { partition: "audit_chain_y2021m03", links: ROWS_PER_MONTH },
    { partition: "audit_chain_y2021m04", links: ROWS_PER_MONTH },
  ]);
  // Every attached event month got its link partition, those the migrations created ahead included.
  const eventMonths = await rows<{ name: string }>(
    `SELECT replace(c.relname, 'audit_events_', '') AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'audit_events'::regclass AND c.relname <> 'audit_events_default' ORDER BY 1`,
  );
  const chainMonths = await rows<{ name: string }>(
    `SELECT replace(c.relname, 'audit_chain_', '') AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'audit_chain'::regclass AND c.relname <> 'audit_chain_default' ORDER BY 1`,
  );
  expect(chainMonths).toEqual(eventMonths);

  // Append-only, on every partition.
  await expect(sequelize.query(`UPDATE audit_chain SET hash = '\\x00' WHERE seq = 1`)).rejects.toThrow(/append-only/);
  await expect(sequelize.query(`DELETE FROM audit_chain WHERE occurred_at < '2000-01-01'`)).rejects.toThrow(/append-only/);
  await expect(sequelize.query(`DELETE FROM audit_chain_y2021m04`)).rejects.toThrow(/append-only/);

  // The sequencer chains new events after the head, into their month's partition.
  await sequelize.query(`
    INSERT INTO audit_events (id, occurred_at, event_type, severity, action) VALUES (gen_random_uuid(), '2021-04-30T12:00:00Z', 'user.updated', 'info', 'update');
    INSERT INTO audit_unchained (event_id, occurred_at) SELECT id, occurred_at FROM audit_events WHERE occurred_at = '2021-04-30T12:00:00Z';
    SELECT count(*) FROM audit_chain_pending(10);
  `);
  const [linked] = await rows<{ seq: string; partition: string }>(
    `SELECT seq::text AS seq, tableoid::regclass::text AS partition FROM audit_chain WHERE occurred_at = '2021-04-30T12:00:00Z'`,
  );
  expect(linked).toEqual({ seq: String(ROWS_PER_MONTH * 4 + 1), partition: "audit_chain_y2021m04" });

  // A new month gets both partitions; dropping the links of a month is a partition drop.
  await sequelize.query(`SELECT audit_create_month_partition('2021-08-01')`);
  expect(await rows(`SELECT to_regclass('audit_chain_y2021m08') IS NOT NULL AS made`)).toEqual([{ made: true }]);
  await sequelize.query(`ALTER TABLE audit_chain DETACH PARTITION audit_chain_y2021m03; DROP TABLE audit_chain_y2021m03`);
  expect((await rows<{ links: number }>(`SELECT count(*)::int AS links FROM audit_chain`))[0].links).toBe(ROWS_PER_MONTH * 3 + 1);

  // The figure for the note (the migration copies every link once).
  console.log(`migration 0017 over ${before.links} links: ${migrationMs} ms`);
});
