import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { Client } from "pg";
import { Sequelize } from "sequelize";
import { backupDatabase, restoreDatabase } from "../../src/platform/db/backup";
import { createMigrator } from "../../src/platform/db/migrator";
import { adminUrl, databaseUrl } from "../helpers/database-urls";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/**
 * Issue 27: without Redis the rate limiter keeps its counters in `rate_limits`, which the limiter used
 * to create at run time; a backup then held a table the restored schema lacked, and `restore` failed.
 * The table is now a migration's, so a backup restores; and a backup of an older version (made before
 * that migration, yet holding the table) restores too, its transient counters left out.
 */
let source: TestDatabase;
let work: string;
const empties: string[] = [];

beforeAll(async () => {
  source = await createTestDatabase();
  work = fs.mkdtempSync(path.join(os.tmpdir(), "fg-rate-limits-"));
});

afterAll(async () => {
  await withClient(adminUrl(), async (client) => {
    for (const name of empties) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  await source.close();
  fs.rmSync(work, { recursive: true, force: true });
});

async function withClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function emptyDatabase(): Promise<string> {
  const name = `${source.name}_r${empties.length}`;
  empties.push(name);
  await withClient(adminUrl(), (client) => client.query(`CREATE DATABASE ${name} TEMPLATE template0`));
  return databaseUrl(name);
}

const config = () => ({ encryptionKey: undefined, dataDir: path.join(work, "data") });

/** The tables (partitions aside, as a backup lists them) of a new database migrated up to `last`, and which are partitioned. */
async function tablesAfterMigration(last: string): Promise<{ tables: Set<string>; partitioned: Set<string> }> {
  const url = await emptyDatabase();
  const sequelize = new Sequelize(url, { logging: false });
  try {
    await createMigrator(sequelize).up({ to: last });
    const [rows] = (await sequelize.query(
      `SELECT c.relname AS name, c.relkind = 'p' AS partitioned FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
    )) as [{ name: string; partitioned: boolean }[], unknown];
    return {
      tables: new Set(rows.map((row) => row.name)),
      partitioned: new Set(rows.filter((row) => row.partitioned).map((row) => row.name)),
    };
  } finally {
    await sequelize.close();
  }
}

test("the migrations create rate_limits, so its counters are backed up and restored", async () => {
  await withClient(source.url, (client) =>
    client.query("INSERT INTO rate_limits (key, points, expire) VALUES ('ip:127.0.0.1', 3, 4102444800000)"),
  );
  const file = path.join(work, "current.backup");
  await backupDatabase(source.url, config(), { out: file });
  const target = await emptyDatabase();
  await restoreDatabase(target, config(), file, {});
  const rows = await withClient(target, (client) => client.query("SELECT key, points FROM rate_limits"));
  expect(rows.rows).toEqual([{ key: "ip:127.0.0.1", points: 3 }]);
});

test("a backup made before the migration, holding the run-time table, restores without its counters", async () => {
  const file = path.join(work, "current.backup");
  const lines = zlib.gunzipSync(fs.readFileSync(file)).toString("utf8").split("\n");
  const header = JSON.parse(lines[0]) as { migrations: string[]; tables: string[]; partitions: { parent: string }[] };
  expect(header.tables).toContain("rate_limits");
  // As an older version wrote it: the migrations end before 0013, and the tables of later migrations
  // (the ledger's, planning's, …) are not there yet; rate_limits is, as the limiter made it at run time.
  header.migrations = header.migrations.filter((name) => name < "0013");
  const before = await tablesAfterMigration("0012-audit-histogram-index");
  const later = new Set(header.tables.filter((table) => !before.tables.has(table) && table !== "rate_limits"));
  expect(later.size).toBeGreaterThan(0);
  // Nor were the tables partitioned then that are now (audit_chain, 0017).
  header.partitions = header.partitions.filter((partition) => before.partitioned.has(partition.parent));
  header.tables = header.tables.filter((table) => !later.has(table));
  let inLaterTable = false;
  const body = lines.slice(1).filter((line) => {
    if (line.startsWith('{"table":')) inLaterTable = later.has((JSON.parse(line) as { table: string }).table);
    else if (line.startsWith('{"end":')) inLaterTable = false;
    return !inLaterTable;
  });
  const older = path.join(work, "older.backup");
  fs.writeFileSync(older, zlib.gzipSync([JSON.stringify(header), ...body].join("\n")));

  const target = await emptyDatabase();
  const result = await restoreDatabase(target, config(), older, {});
  const sourceRows = await withClient(source.url, (client) =>
    client.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_chain_head"),
  );
  const restored = await withClient(target, async (client) => ({
    rateLimits: (await client.query("SELECT * FROM rate_limits")).rows,
    migrations: (await client.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name")).rows.map((row) => row.name),
    chainHead: (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_chain_head")).rows[0].n,
  }));
  expect(result.rows).toBeGreaterThan(0);
  expect(restored.rateLimits).toEqual([]);
  expect(restored.migrations).toContain("0013-rate-limits");
  expect(restored.chainHead).toBe(sourceRows.rows[0].n);
});
