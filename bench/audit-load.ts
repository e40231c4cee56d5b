/**
 * Loads realistic audit events with set-based SQL (generate_series, not the API) for the audit and
 * export benchmarks: sign-ins dominate, configuration changes are rare, chain links beside them.
 */
import type { Sequelize } from "sequelize";
import { AUDIT_EVENT_CATALOGUE, AUDIT_EVENT_TYPES, type AuditEventType } from "../src/audit/log/audit.catalogue";

export type LoadSettings = {
  rows: number;
  months: number;
  loadJobs: number;
  /** Which of the table's indexes to rebuild after the load (default all): a benchmark that never filters by text can skip the costly text indexes. */
  keepIndex?: (name: string) => boolean;
};

export const USERS = 20_000;
export const PROVIDERS = ["okta", "azure-ad", "google", "auth0", "keycloak"];
const USER_AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 Version/17.2 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) Mobile/15E148",
  "finance-gateway-mobile/2.3 (Android 14)",
  "curl/8.5.0",
];
/** How often each type occurs, per 1000 events: sign-ins dominate, configuration changes are rare. */
const WEIGHTS: Partial<Record<AuditEventType, number>> = {
  "auth.login.success": 380,
  "auth.token.issued": 200,
  "auth.token.refreshed": 180,
  "auth.login.failed": 80,
  "auth.logout": 60,
  "auth.session.expired": 40,
  "auth.token.revoked": 12,
  "user.updated": 20,
  "user.created": 10,
  "user.roles.synced": 8,
};

function typeWheel(): AuditEventType[] {
  const wheel: AuditEventType[] = [];
  for (const [type, weight] of Object.entries(WEIGHTS)) for (let i = 0; i < weight!; i += 1) wheel.push(type as AuditEventType);
  const rare = AUDIT_EVENT_TYPES.filter((type) => !(type in WEIGHTS));
  for (let i = 0; wheel.length < 1000; i += 1) wheel.push(rare[i % rare.length]);
  return wheel;
}

const sqlList = (values: string[]) => `ARRAY[${values.map((value) => `'${value.replace(/'/g, "''")}'`).join(",")}]`;

export function userId(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

/** Runs the tasks with at most `jobs` at a time (one pooled connection each). */
export async function inParallel(jobs: number, tasks: Array<() => Promise<unknown>>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(jobs, tasks.length) }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}

/**
 * Builds each index partition by partition, `jobs` at a time, then attaches the pieces to the parent
 * index: one CREATE INDEX on the parent would build the partitions one after another on one core.
 */
async function buildIndexes(sequelize: Sequelize, indexes: Array<{ indexname: string; indexdef: string }>, jobs: number): Promise<void> {
  const partitions = (await sequelize.query(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'audit_events'::regclass`,
    { type: "SELECT" },
  )) as Array<{ name: string }>;
  const pieces: Array<{ parent: string; piece: string; sql: string }> = [];
  for (const index of indexes) {
    // pg_indexes renders a partitioned index as "ON ONLY": that creates the parent alone, not yet valid.
    await sequelize.query(index.indexdef);
    for (const { name } of partitions) {
      const piece = `${name}_${index.indexname.replace(/^audit_events_/, "")}`;
      const sql = index.indexdef.replace(
        /^CREATE (UNIQUE )?INDEX \S+ ON ONLY \S+/,
        (_all, unique: string | undefined) => `CREATE ${unique ?? ""}INDEX ${piece} ON ${name}`,
      );
      pieces.push({ parent: index.indexname, piece, sql });
    }
  }
  await inParallel(
    jobs,
    pieces.map(
      ({ sql }) =>
        () =>
          sequelize.transaction(async (transaction) => {
            await sequelize.query("SET LOCAL maintenance_work_mem = '512MB'", { transaction });
            await sequelize.query(sql, { transaction });
          }),
    ),
  );
  for (const { parent, piece } of pieces) await sequelize.query(`ALTER INDEX ${parent} ATTACH PARTITION ${piece}`);
}

/** Event g's id and time, from g alone, so the events and their chain links are generated independently. */
const EVENT_ID = `(md5('event' || g))::uuid`;
const OCCURRED_AT = `$1::timestamptz + (g::float8 / $3) * make_interval(months => $2)`;

/** Loads `settings.rows` events and their chain links over `settings.months` months ending now, then builds the indexes. */
export async function loadAuditEvents(sequelize: Sequelize, settings: LoadSettings): Promise<void> {
  const wheel = typeWheel();
  const severities = wheel.map((type) => AUDIT_EVENT_CATALOGUE[type].severity);
  const indexes = (await sequelize.query(
    `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'audit_events' AND indexname <> 'audit_events_pkey'`,
    { type: "SELECT" },
  )) as Array<{ indexname: string; indexdef: string }>;
  // Building each index once after the load is far cheaper than maintaining it row by row.
  for (const index of indexes) await sequelize.query(`DROP INDEX ${index.indexname}`);
  const rebuilt = indexes.filter((index) => settings.keepIndex?.(index.indexname) ?? true);
  // The chain's keys as the migrations left them, dropped for the load and added back after it.
  const chainKeys = (await sequelize.query(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE conrelid = 'audit_chain'::regclass AND contype IN ('p', 'u') ORDER BY conname`,
    { type: "SELECT" },
  )) as Array<{ name: string; definition: string }>;
  await sequelize.query(`ALTER TABLE audit_chain ${chainKeys.map((key) => `DROP CONSTRAINT ${key.name}`).join(", ")}`);
  const startAt = new Date();
  startAt.setUTCMonth(startAt.getUTCMonth() - settings.months);
  await sequelize.query(`CREATE TABLE bench_wheel (pick int PRIMARY KEY, type text NOT NULL, severity text NOT NULL)`);
  await sequelize.query(
    `INSERT INTO bench_wheel SELECT ordinality, type, severity FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS w(type, severity)`,
    { bind: [wheel, severities] },
  );
  const chunk = 500_000;
  const started = Date.now();
  const chunks: Array<() => Promise<void>> = [];
  let loaded = 0;
  for (let first = 1; first <= settings.rows; first += chunk) {
    const last = Math.min(settings.rows, first + chunk - 1);
    chunks.push(async () => {
      await sequelize.query(
        `INSERT INTO audit_events (id, occurred_at, event_type, severity, user_id, user_email, provider, action,
           resource_type, resource_id, resource_label, ip_address, user_agent, session_id, request_id, changes, error)
         SELECT ${EVENT_ID}, ${OCCURRED_AT}, w.type, w.severity,
                ('00000000-0000-4000-8000-' || lpad(to_hex(u), 12, '0'))::uuid, 'user' || u || '@example.com',
                CASE WHEN random() < 0.3 THEN NULL ELSE (${sqlList(PROVIDERS)})[1 + floor(random() * ${PROVIDERS.length})::int] END,
                split_part(w.type, '.', array_length(string_to_array(w.type, '.'), 1)),
                CASE WHEN w.type LIKE 'user.%' THEN 'user' ELSE 'session' END, md5(g::text), NULL,
                CASE WHEN random() < 0.7 THEN ('10.' || floor(random() * 256) || '.' || floor(random() * 256) || '.' || floor(random() * 256))::inet
                     WHEN random() < 0.5 THEN ('192.168.' || floor(random() * 256) || '.' || floor(random() * 256))::inet
                     ELSE ((floor(random() * 223) + 1) || '.' || floor(random() * 256) || '.' || floor(random() * 256) || '.' || floor(random() * 256))::inet END,
                (${sqlList(USER_AGENTS)})[1 + floor(random() * ${USER_AGENTS.length})::int],
                md5('s' || (g / 20)), md5('r' || g),
                CASE WHEN w.type = 'user.updated' THEN jsonb_build_object('name', jsonb_build_object('old', 'Name ' || g, 'new', 'Name ' || (g + 1))) END,
                CASE WHEN w.type = 'auth.login.failed' THEN (ARRAY['invalid_password','unknown_user','account_locked'])[1 + floor(random() * 3)::int] END
           FROM generate_series($4::bigint, $5::bigint) AS g
          CROSS JOIN LATERAL (SELECT 1 + floor(random() * ${USERS})::int AS u, 1 + floor(random() * 1000)::int AS pick, g AS anchor) AS r
          JOIN bench_wheel AS w ON w.pick = r.pick`,
        { bind: [startAt, settings.months, settings.rows, first, last] },
      );
      // The chain's links, in occurred_at order (their hashes are stand-ins: this measures reads, not verify).
      await sequelize.query(
        `INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
         SELECT g, ${EVENT_ID}, ${OCCURRED_AT}, sha256(int8send(g - 1)), sha256(int8send(g)) FROM generate_series($4::bigint, $5::bigint) AS g`,
        { bind: [startAt, settings.months, settings.rows, first, last] },
      );
      loaded += last - first + 1;
      process.stdout.write(`  loaded ${loaded.toLocaleString("en")} rows (${Math.round((Date.now() - started) / 1000)} s)\n`);
    });
  }
  await inParallel(settings.loadJobs, chunks);
  await sequelize.query(`UPDATE audit_chain_head SET seq = $1, hash = sha256(int8send($1::bigint))`, { bind: [settings.rows] });
  const indexStarted = Date.now();
  await sequelize.query(`ALTER TABLE audit_chain ${chainKeys.map((key) => `ADD CONSTRAINT ${key.name} ${key.definition}`).join(", ")}`);
  await buildIndexes(sequelize, rebuilt, settings.loadJobs);
  console.log(`  indexes built in ${Math.round((Date.now() - indexStarted) / 1000)} s`);
  const vacuumStarted = Date.now();
  // A settled table, as autovacuum leaves it: statistics, and a visibility map for index-only scans.
  await sequelize.query("VACUUM (ANALYZE) audit_events, audit_chain");
  console.log(`  vacuumed and analysed in ${Math.round((Date.now() - vacuumStarted) / 1000)} s`);
}
