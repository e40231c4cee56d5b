import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { once } from "node:events";
import zlib from "node:zlib";
import { Client } from "pg";
import type { Config } from "../config/config";
import { currentEncryptionKey, encryptionKeyFile } from "../security/secret-box";
import { createSequelize } from "./database";
import { createMigrator } from "./migrator";
import { migrations } from "./migrations";

/**
 * Backup and restore of the whole database, made by the service itself so they work the same on the
 * embedded PostgreSQL (whose package ships no pg_dump) and on any external server, whatever the
 * version of the client tools installed next to it.
 *
 * A backup is gzipped JSON lines: a header (format, the migrations applied, partitions, sequence
 * values, and optionally the encryption key sealed with a passphrase), then each table's rows as
 * PostgreSQL renders them (`row_to_json`), parents before the tables that reference them. Everything is
 * read in one REPEATABLE READ transaction, so the backup is one consistent snapshot taken while the
 * service keeps running. A restore recreates the schema with the migrations the backup names, loads the
 * rows back with `json_populate_recordset` in one transaction (PostgreSQL parses its own rendering, so
 * numerics, timestamps, bytea and JSON come back exact), sets the sequences and applies newer
 * migrations. Rows stream in batches both ways: memory stays bounded whatever the size.
 */

const FORMAT = "finance-gateway-backup";
const VERSION = 1;
const BATCH = 1000;
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

type SealedKey = { kdf: "scrypt"; N: number; r: number; p: number; salt: string; iv: string; tag: string; data: string };

type Header = {
  format: typeof FORMAT;
  version: number;
  createdAt: string;
  serverVersion: string;
  migrations: string[];
  tables: string[];
  partitions: Array<{ parent: string; name: string; bound: string }>;
  sequences: Array<{ name: string; value: string | null }>;
  key: SealedKey | null;
};

export type BackupResult = { file: string; tables: number; rows: number; includesKey: boolean; keySource: string };
export type RestoreResult = { file: string; tables: number; rows: number; createdAt: string; keyRestored: string | null };

/**
 * Tables that versions before their migration created at run time (the rate limiter's counters without
 * Redis, migration 0013): a backup made by such a version holds them although the migrations it names
 * do not create them.
 */
const CREATED_AT_RUN_TIME_BEFORE = new Set(["rate_limits"]);

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function readPassphrase(file: string): Promise<string> {
  const text = file === "-" ? await readAll(process.stdin) : fs.readFileSync(file, "utf8");
  const passphrase = text.replace(/\r?\n$/, "");
  if (passphrase.length < 8) throw new Error("the passphrase must have at least 8 characters");
  return passphrase;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

function sealKey(key: Buffer, passphrase: string): SealedKey {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", scryptSync(passphrase, salt, 32, SCRYPT), iv);
  const data = Buffer.concat([cipher.update(key), cipher.final()]);
  const b64 = (buffer: Buffer) => buffer.toString("base64");
  return {
    kdf: "scrypt",
    ...{ N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p },
    salt: b64(salt),
    iv: b64(iv),
    tag: b64(cipher.getAuthTag()),
    data: b64(data),
  };
}

function openKey(sealed: SealedKey, passphrase: string): Buffer {
  const derived = scryptSync(passphrase, Buffer.from(sealed.salt, "base64"), 32, { ...SCRYPT, N: sealed.N, r: sealed.r, p: sealed.p });
  const decipher = createDecipheriv("aes-256-gcm", derived, Buffer.from(sealed.iv, "base64"));
  decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]);
  } catch {
    throw new Error("wrong passphrase: the encryption key in the backup cannot be opened with it");
  }
}

/** Tables in an order where every table comes after the tables its foreign keys point to. */
async function tablesInDependencyOrder(client: Client): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'schema_migrations'
      ORDER BY c.relname`,
  );
  const { rows: edges } = await client.query<{ child: string; parent: string }>(
    `SELECT DISTINCT child.relname AS child, parent.relname AS parent FROM pg_constraint k
       JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = child.relnamespace
      WHERE k.contype = 'f' AND n.nspname = 'public' AND child.oid <> parent.oid AND NOT child.relispartition`,
  );
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (table: string) => {
    if (ordered.includes(table) || visiting.has(table)) return;
    visiting.add(table);
    for (const edge of edges) if (edge.child === table) visit(edge.parent);
    ordered.push(table);
  };
  for (const { name } of tables) visit(name);
  return ordered;
}

export async function backupDatabase(
  url: string,
  config: Pick<Config, "encryptionKey" | "dataDir">,
  options: { out?: string; passphraseFile?: string },
): Promise<BackupResult> {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
  const file = path.resolve(options.out ?? `finance-gateway-${stamp}.backup`);
  const current = currentEncryptionKey(config);
  let key: SealedKey | null = null;
  if (options.passphraseFile) {
    if (!current) throw new Error("there is no encryption key to include yet (no ENCRYPTION_KEY and no DATA_DIR/encryption-key)");
    key = sealKey(current.key, await readPassphrase(options.passphraseFile));
  }
  const partial = `${file}.partial`;
  const client = new Client({ connectionString: url });
  await client.connect();
  let rows = 0;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const tables = await tablesInDependencyOrder(client);
    const header: Header = {
      format: FORMAT,
      version: VERSION,
      createdAt: new Date().toISOString(),
      serverVersion: (await client.query<{ v: string }>("SHOW server_version")).rows[0].v,
      migrations: (await client.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name")).rows.map((row) => row.name),
      tables,
      partitions: (
        await client.query<{ parent: string; name: string; bound: string }>(
          `SELECT p.relname AS parent, c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
             JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relispartition AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
        )
      ).rows,
      sequences: (
        await client.query<{ name: string; value: string | null }>(
          "SELECT sequencename AS name, last_value::text AS value FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1",
        )
      ).rows,
      key,
    };
    const gzip = zlib.createGzip();
    const output = fs.createWriteStream(partial, { mode: 0o600 });
    gzip.pipe(output);
    const write = async (line: string) => {
      if (!gzip.write(line + "\n")) await once(gzip, "drain");
    };
    await write(JSON.stringify(header));
    for (const table of tables) {
      await write(JSON.stringify({ table }));
      await client.query(`DECLARE backup_rows NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS r FROM ${ident(table)} t`);
      for (;;) {
        const batch = await client.query<{ r: string }>(`FETCH ${BATCH} FROM backup_rows`);
        for (const row of batch.rows) await write(row.r);
        rows += batch.rows.length;
        if (batch.rows.length < BATCH) break;
      }
      await client.query("CLOSE backup_rows");
    }
    await write(JSON.stringify({ end: true, rows }));
    gzip.end();
    await once(output, "close");
    await client.query("COMMIT");
    fs.renameSync(partial, file);
    return {
      file,
      tables: tables.length,
      rows,
      includesKey: key !== null,
      keySource: current?.source ?? "the encryption key (none exists yet)",
    };
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    await client.end();
  }
}

/** Applies the migrations up to `to` (the ones the backup was made with), or all of them. */
async function migrate(url: string, to?: string): Promise<void> {
  const sequelize = createSequelize({ url, poolMax: 2 });
  try {
    await createMigrator(sequelize).up(to ? { to } : {});
  } finally {
    await sequelize.close();
  }
}

/** Places the backup's key where the service will read it; refuses to replace a different key. */
function installKey(key: Buffer, config: Pick<Config, "encryptionKey" | "dataDir">): string {
  const current = currentEncryptionKey(config);
  if (current) {
    if (current.key.equals(key)) return current.source;
    throw new Error(
      `${current.source} holds a different encryption key than the backup: unset ENCRYPTION_KEY or move that file away, then restore again`,
    );
  }
  const file = encryptionKeyFile(config.dataDir);
  fs.mkdirSync(config.dataDir, { recursive: true });
  fs.writeFileSync(file, key.toString("base64") + "\n", { flag: "wx", mode: 0o600 });
  return file;
}

export async function restoreDatabase(
  url: string,
  config: Pick<Config, "encryptionKey" | "dataDir">,
  file: string,
  options: { passphraseFile?: string },
): Promise<RestoreResult> {
  if (!fs.existsSync(file)) throw new Error(`no backup file at ${path.resolve(file)}`);
  const input = fs.createReadStream(file).pipe(zlib.createGunzip());
  const lines = readline.createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const next = async (): Promise<string | null> => {
    const result = await lines.next();
    return result.done ? null : result.value;
  };
  let header: Header;
  try {
    header = JSON.parse((await next()) ?? "null") as Header;
  } catch {
    throw new Error(`${file} is not a finance-gateway backup`);
  }
  if (header?.format !== FORMAT) throw new Error(`${file} is not a finance-gateway backup`);
  if (header.version !== VERSION) throw new Error(`${file} is a backup of format version ${header.version}; this version reads ${VERSION}`);
  const known = new Set(migrations.map((migration) => migration.name));
  const unknown = header.migrations.filter((name) => !known.has(name));
  if (unknown.length)
    throw new Error(`the backup was made by a newer version (migration ${unknown[0]}): restore it with that version or a later one`);

  const client = new Client({ connectionString: url });
  await client.connect();
  let created = false;
  try {
    const { rows: existing } = await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`,
    );
    if (existing[0].count > 0) {
      throw new Error(
        `the database is not empty (${existing[0].count} tables): restore into an empty one (a new DATA_DIR, or a new database in DATABASE_URL)`,
      );
    }
    let keyRestored: string | null = null;
    if (header.key && options.passphraseFile)
      keyRestored = installKey(openKey(header.key, await readPassphrase(options.passphraseFile)), config);

    created = true;
    await migrate(url, header.migrations[header.migrations.length - 1]);

    await client.query("BEGIN");
    const present = new Set(
      (
        await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`,
        )
      ).rows.map((row) => row.name),
    );
    const skipped = header.tables.filter((table) => !present.has(table));
    const unexpected = skipped.find((table) => !CREATED_AT_RUN_TIME_BEFORE.has(table));
    if (unexpected) throw new Error(`the backup is damaged: its table ${unexpected} is not created by the migrations it names`);
    // Rows that migrations seed (the audit chain head…) come back from the backup instead.
    await client.query(
      `TRUNCATE ${header.tables
        .filter((table) => present.has(table))
        .map(ident)
        .join(", ")} CASCADE`,
    );
    for (const partition of header.partitions) {
      await client.query(`CREATE TABLE IF NOT EXISTS ${ident(partition.name)} PARTITION OF ${ident(partition.parent)} ${partition.bound}`);
    }
    let rows = 0;
    let line = await next();
    while (line !== null) {
      const marker = JSON.parse(line) as { table?: string; end?: boolean; rows?: number };
      if (marker.end) {
        if (marker.rows !== rows) throw new Error(`the backup is damaged: it announces ${marker.rows} rows, ${rows} were read`);
        break;
      }
      const table = marker.table!;
      if (skipped.includes(table)) {
        // Counters of a table older versions made at run time: transient, and recreated empty by its migration.
        for (line = await next(); line !== null && !line.startsWith('{"table":') && !line.startsWith('{"end":'); line = await next())
          rows++;
        continue;
      }
      const { rows: columns } = await client.query<{ name: string; identity: string }>(
        `SELECT attname AS name, attidentity AS identity FROM pg_attribute
          WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
        [ident(table)],
      );
      const list = columns.map((column) => ident(column.name)).join(", ");
      const overriding = columns.some((column) => column.identity === "a") ? "OVERRIDING SYSTEM VALUE" : "";
      const insert = `INSERT INTO ${ident(table)} (${list}) ${overriding} SELECT ${list} FROM json_populate_recordset(NULL::${ident(table)}, $1::json)`;
      let batch: string[] = [];
      const flush = async () => {
        if (batch.length) await client.query(insert, [`[${batch.join(",")}]`]);
        rows += batch.length;
        batch = [];
      };
      for (line = await next(); line !== null && !line.startsWith('{"table":') && !line.startsWith('{"end":'); line = await next()) {
        batch.push(line);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
    }
    if (line === null) throw new Error("the backup is truncated: it ends before its last table");
    for (const sequence of header.sequences) {
      if (sequence.value !== null)
        await client.query("SELECT setval($1::regclass, $2::bigint, true)", [ident(sequence.name), sequence.value]);
    }
    await client.query("COMMIT");

    await migrate(url);
    return { file: path.resolve(file), tables: header.tables.length, rows, createdAt: header.createdAt, keyRestored };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    // The database was empty: leave it empty, so the restore can simply be run again.
    if (created) await client.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public").catch(() => undefined);
    throw error;
  } finally {
    await client.end();
    input.destroy();
  }
}
