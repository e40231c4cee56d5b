import "reflect-metadata";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { parseArgs } from "node:util";
import type { Sequelize } from "sequelize";
import { randomUUID } from "node:crypto";
import { runInAuditContext } from "../platform/common/audit-context";
import { generatePassword } from "../finance/auth/password";
import { commandUsage, findCommand, USAGE, type CommandSpec } from "./cli/commands";
import { seedDemo } from "./cli/demo";
import { seedAuditHistory } from "./cli/demo-history";
import { importPrices } from "./cli/prices-import";
import { backupDatabase, restoreDatabase } from "../platform/db/backup";
import { embeddedPostgresInUse } from "../platform/db/embedded-postgres";
import { DomainError } from "../platform/common/errors";
import { createLogger, type Logger } from "../platform/common/logger";
import { loadConfig, type Config } from "../platform/config/config";
import { migrateToLatest } from "../platform/db/migrator";
import { createEventBus, LocalEventBus } from "../platform/events/event-bus";
import { databaseUrl, openDatabase, startRuntime, type Roles, type Stoppable } from "./runtime";
import { createServices, type Services } from "./services";
import { createQueueBackend } from "../../workers/queues";
import { watchLauncherShell } from "./cli/launcher-watch";

type Printer = (result: Record<string, unknown>, human: string) => void;
type Values = Record<string, string | boolean | undefined>;

/** A mistake in the command line: answered with the command's usage. */
class UsageError extends Error {}

/** Runs one CLI command. With --json every outcome, errors included, is one JSON object on stdout. */
export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (error) {
    const message =
      error instanceof DomainError ? (error.errors?.join("; ") ?? error.message) : error instanceof Error ? error.message : String(error);
    if (argv.includes("--json")) console.log(JSON.stringify({ error: message }));
    else console.error(message);
    // `audit verify` keeps 1 for a broken chain: a check that could not run at all is 2.
    process.exitCode = argv[0] === "audit" && argv[1] === "verify" ? 2 : 1;
  }
}

/** Splits argv into the command (its leading words) and what follows, then parses that strictly. */
function parseCommandLine(argv: string[]): { spec: CommandSpec | null; values: Values; positionals: string[] } {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith("-")) break;
    words.push(arg);
  }
  const spec = findCommand(words);
  if (!spec) {
    if (words.length === 0) {
      const { values } = parseArgs({ args: argv, strict: false });
      if (values.help || values.h || argv.length === 0) return { spec: null, values: { help: true }, positionals: [] };
      throw new UsageError(`unknown option ${argv[0]}\n\n${USAGE}`);
    }
    throw new UsageError(`unknown command "${words.join(" ")}"\n\n${USAGE}`);
  }
  const rest = argv.slice(spec.name.split(" ").length);
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: { ...spec.options, json: { type: "boolean", default: false }, help: { type: "boolean", short: "h", default: false } },
    });
    if (!values.help && positionals.length !== (spec.positionals?.length ?? 0)) {
      const expected = spec.positionals?.length ?? 0;
      throw new UsageError(
        positionals.length > expected
          ? `unexpected argument "${positionals[expected]}"\n\n${commandUsage(spec)}`
          : `${spec.positionals![positionals.length]} is required\n\n${commandUsage(spec)}`,
      );
    }
    return { spec, values: values as Values, positionals };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as { code?: string }).code;
    const option = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new UsageError(`unknown option ${option}\n\n${commandUsage(spec)}`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      throw new UsageError(`${option?.split(" ")[0] ?? "an option"} needs a value\n\n${commandUsage(spec)}`);
    }
    throw error;
  }
}

async function run(argv: string[]): Promise<void> {
  const { spec, values, positionals } = parseCommandLine(argv);
  const print: Printer = (result, human) => console.log(values.json ? JSON.stringify(result) : human);
  if (!spec) return void console.log(USAGE);
  if (values.help) return void console.log(commandUsage(spec));
  const command = spec.name;
  const string = (name: string) => values[name] as string | undefined;

  const config = loadConfig();
  if (command === "start" || command === "api" || command === "worker") {
    if (command === "start" && !config.databaseUrl) {
      // Commands share the running service's database; a second service on it would only compete for its port and jobs.
      const port = await embeddedPostgresInUse(config.dataDir);
      if (port !== null) {
        throw new Error(
          `finance-gateway is already running on DATA_DIR ${config.dataDir} (its database listens on port ${port}): stop it first, or set DATA_DIR to another folder`,
        );
      }
    }
    return serve(config, { api: command !== "worker", workers: command !== "api" }, print);
  }
  if (command === "emit-contracts") {
    // Loaded for this command only: the schema and the contracts' generators are the API's, not every command's.
    const [{ writeContracts }, { createSchema }] = await Promise.all([import("./contracts.js"), import("./schema.js")]);
    const files = writeContracts(await createSchema(new LocalEventBus(createLogger("silent", 2))));
    return print({ written: files }, `wrote ${files.join(", ")}`);
  }
  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel, 2, config.logFormat);
  if (command === "db url" || command === "db psql" || command === "backup" || command === "restore") {
    return withDatabaseUrl(config, logger, async (url) => {
      switch (command) {
        case "db url":
          return print({ url }, url);
        case "db psql":
          return psql(url);
        case "backup": {
          const result = await backupDatabase(url, config, { out: string("out"), passphraseFile: string("passphrase-file") });
          return print(result, backupBanner(result));
        }
        case "restore": {
          const result = await restoreDatabase(url, config, positionals[0], { passphraseFile: string("passphrase-file") });
          return print(result, restoreBanner(result));
        }
      }
    });
  }

  // Read before the database and the event bus are opened: a missing file is one line, nothing else.
  const checkpointNote = command === "audit verify" && string("checkpoint") ? await readCheckpointFile(string("checkpoint")!) : null;
  const cliContext = { ipAddress: null, userAgent: "finance-gateway-cli", requestId: `cli:${randomUUID()}`, sessionId: null };
  await withDatabase(config, logger, (services, sequelize) => runInAuditContext(cliContext, () => runCommand(services, sequelize)));

  async function runCommand(services: Services, sequelize: Sequelize): Promise<void> {
    switch (command) {
      case "migrate": {
        const applied = await migrateToLatest(sequelize);
        return print({ applied }, applied.length ? `applied ${applied.join(", ")}` : "database is up to date");
      }
      case "demo": {
        const demo = await seedDemo(sequelize, services, { force: values.force === true });
        if (values["audit-history"] !== true) return print(demo, demoBanner(demo));
        const history = await seedAuditHistory(sequelize, services);
        return print({ ...demo, audit_history: history }, `${demoBanner(demo)}\n${historyBanner(history)}`);
      }
      case "user create": {
        const user = await services.users.create({
          email: required(string("email"), "--email"),
          familyOfEmail: string("family-of"),
          role: string("role"),
        });
        return print(
          { id: user.id, email: user.email, family_id: user.familyId },
          `created user ${user.email} (${user.id}) in family ${user.familyId}`,
        );
      }
      case "api-key create": {
        const user = await services.users.findByEmail(required(string("email"), "--email"));
        if (!user) throw new Error(`no user with email ${string("email")}`);
        const { apiKey, plaintext } = await services.apiKeys.create(user.id, {
          scope: required(string("scope"), "--scope"),
          name: string("name"),
        });
        return print({ api_key: plaintext, id: apiKey.id }, `API key (shown once): ${plaintext}\nid: ${apiKey.id}`);
      }
      case "api-key revoke": {
        const apiKey = await services.apiKeys.revoke(required(string("id"), "--id"));
        return print({ id: apiKey.id, revoked_at: apiKey.revokedAt }, `revoked API key ${apiKey.id}`);
      }
      case "admin create": {
        const generated = string("password") === undefined;
        const password = string("password") ?? generatePassword();
        const user = await services.users.create({ email: required(string("email"), "--email"), role: "admin", password });
        return print(
          { id: user.id, email: user.email, role: user.role, ...(generated ? { password } : {}) },
          `created admin ${user.email} (${user.id})${generated ? `\npassword (shown once): ${password}` : ""}`,
        );
      }
      case "audit verify": {
        const checkpoint = string("checkpoint");
        const dated = string("from") !== undefined || string("to") !== undefined;
        if (dated && checkpoint) throw new Error("--checkpoint checks the whole chain: leave out --from and --to");
        const report = dated
          ? await services.audit.verify({ from: string("from"), to: string("to") })
          : await services.retention.verify(checkpointNote);
        if (!report.ok) process.exitCode = 1;
        return print(
          report,
          report.ok
            ? `audit chain intact (${report.checked} events checked)`
            : `audit chain BROKEN at ${report.firstBroken!.seq === null ? `event ${report.firstBroken!.eventId}` : `sequence ${report.firstBroken!.seq}`} (${report.firstBroken!.kind}): ${report.firstBroken!.message}`,
        );
      }
      case "family-export restore": {
        const user = await services.users.findByEmail(required(string("email"), "--email"));
        if (!user) throw new Error(`no user with email ${string("email")}`);
        const summary = await services.familyRestore.restore(
          { userId: user.id, email: user.email, session: null, familyId: user.familyId },
          positionals[0],
        );
        const lines = Object.entries(summary.counts).map(([type, count]) => `${type}: ${count}`);
        return print(summary, `restored into family ${summary.familyId}\n${lines.join("\n")}`);
      }
      case "prices import": {
        const recorded = await importPrices(services, positionals[0], config.imports);
        const summary = {
          prices: recorded.prices.length,
          changed: recorded.changedCount,
          revalued_accounts: recorded.revaluedAccountCount,
        };
        return print(
          summary,
          `recorded ${summary.prices} prices (${summary.changed} new or changed); ${summary.revalued_accounts} accounts revalued`,
        );
      }
      case "audit retention run": {
        const outcome = await services.retention.run();
        if (!outcome) throw new Error("another retention run holds the lock; try again shortly");
        const lines = [
          ...outcome.moved.map(
            (month) =>
              `archived ${month.month}: ${month.rows} events (${month.archives.map((a) => `${a.tier} ${a.rows}`).join(", ") || "empty"})`,
          ),
          ...outcome.kept.map((month) => `kept ${month.month}: ${month.reason}`),
          ...outcome.deleted.map((archive) => `deleted archive ${archive.month} ${archive.tier} (${archive.rows} events)`),
        ];
        return print(outcome, lines.length ? lines.join("\n") : "nothing to do");
      }
      default:
        throw new Error(`"${command}" has no handler`);
    }
  }
}

/** A checkpoint kept elsewhere (`audit verify --checkpoint FILE`): at most 64 KiB of text, or one clear error. */
async function readCheckpointFile(file: string): Promise<string> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) throw new Error(`--checkpoint ${file} is not a file`);
    if (stat.size > 64 * 1024) throw new Error(`--checkpoint ${file} is ${stat.size} bytes; a signed checkpoint is a few hundred`);
    return await fs.promises.readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new Error(`--checkpoint ${file}: no such file`, { cause: error });
    if (code === "EACCES") throw new Error(`--checkpoint ${file}: permission denied`, { cause: error });
    throw error;
  }
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new Error(`${flag} is required`);
  return value;
}

async function withStops<T>(work: (stops: Stoppable[]) => Promise<T>): Promise<T> {
  const stops: Stoppable[] = [];
  try {
    return await work(stops);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

/** The database's URL, without migrating: the embedded PostgreSQL is started for the command if no service runs it. */
function withDatabaseUrl<T>(config: Config, logger: Logger, work: (url: string) => Promise<T>): Promise<T> {
  return withStops(async (stops) => work((await databaseUrl(config, logger, stops)).url));
}

function withDatabase<T>(config: Config, logger: Logger, work: (services: Services, sequelize: Sequelize) => Promise<T>): Promise<T> {
  return withStops(async (stops) => {
    const { sequelize, url } = await openDatabase(config, logger, stops);
    const events = createEventBus({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, databaseUrl: url }, logger);
    stops.push(() => events.close());
    const queues = createQueueBackend(config, url);
    stops.push(() => queues.close());
    const services = createServices(sequelize, events, { config, queues, logger });
    stops.push(() => services.audit.settle());
    return work(services, sequelize);
  });
}

/** psql from PATH on the database, the terminal passed through. */
function psql(url: string): void {
  const result = spawnSync("psql", [url], { stdio: "inherit" });
  const error = result.error as NodeJS.ErrnoException | undefined;
  if (error?.code === "ENOENT") {
    throw new Error(
      "psql is not installed: install the PostgreSQL client (Debian/Ubuntu: apt install postgresql-client), or use `db url` with another tool",
    );
  }
  if (error) throw error;
  process.exitCode = result.status ?? 1;
}

/** The URL to show: the password is left out (`db url` prints it whole). */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = "";
  return parsed.toString();
}

async function serve(config: Config, roles: Roles, print: Printer): Promise<void> {
  const runtime = await startRuntime(config, roles);
  let stopping = false;
  const shutdown = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    runtime.logger.info({ reason }, "shutting down: draining requests and jobs");
    const timer = setTimeout(() => {
      runtime.logger.error("shutdown timed out");
      process.exit(1);
    }, config.shutdownTimeoutMs);
    await runtime.stop();
    clearTimeout(timer);
    // Once everything is closed: the last line the user sees says the database stopped too.
    console.error(`finance-gateway stopped (${reason})${runtime.embedded?.startedHere ? "; embedded PostgreSQL stopped" : ""}`);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGHUP", () => void shutdown("SIGHUP"));
  if (config.launchedByNpm) {
    // `kill <pid of npm start>` ends npm and its shell but never reaches this process: notice the orphaning.
    const parent = process.ppid;
    // `kill -INT <pid of npx>` reaches npm's shell, which holds it: notice the shell being signalled.
    const shell = watchLauncherShell(parent);
    if (shell) process.on("SIGCONT", shell.resumed);
    setInterval(() => {
      if (process.ppid !== parent) void shutdown("npm exited");
      else if (shell?.interrupted()) void shutdown("npm interrupted");
    }, 500).unref();
  }

  const url = runtime.url;
  const urls = url
    ? {
        rest: `${url}/api/v1`,
        graphql: `${url}/graphql`,
        websocket: `${url.replace(/^http/, "ws")}/graphql`,
        openapi: `${url}/api/v1/openapi.yaml`,
        console: `${url}/admin/`,
      }
    : {};
  const metricsUrl = url ? `${url}/metrics` : runtime.metricsUrl && `${runtime.metricsUrl}/metrics`;
  const database = runtime.embedded ? withoutPassword(runtime.databaseUrl) : "DATABASE_URL";
  print(
    {
      ...urls,
      database: config.databaseUrl ? "external" : "embedded",
      ...(runtime.embedded ? { database_url: withoutPassword(runtime.databaseUrl) } : {}),
      queues: runtime.queues.kind,
      roles,
      ...(metricsUrl ? { metrics: metricsUrl } : {}),
    },
    [
      "",
      "finance-gateway is running",
      ...(url
        ? [
            `  REST       ${urls.rest}`,
            `  GraphQL    ${urls.graphql}`,
            `  WebSocket  ${urls.websocket}`,
            `  OpenAPI    ${urls.openapi}`,
            `  Console    ${urls.console}`,
          ]
        : ["  workers only"]),
      ...(metricsUrl ? [`  Metrics    ${metricsUrl}`] : []),
      runtime.embedded
        ? `  Database   ${database}  (embedded, data in ${config.dataDir}; full URL: npx finance-gateway db url)`
        : `  Database   ${database}`,
      `  Queues     ${runtime.queues.kind === "redis" ? "Redis" : "PostgreSQL (set REDIS_URL for Redis)"}`,
      "",
      "Get an API key with demo data:  npx finance-gateway demo",
      "Then:  curl -H 'X-Api-Key: <key>' " + (urls.rest ?? "") + "/transactions",
      "Stop:  Ctrl-C, or kill the process (SIGTERM): requests and jobs drain, then the database stops",
      "",
    ].join("\n"),
  );
}

function demoBanner(demo: Awaited<ReturnType<typeof seedDemo>>): string {
  return [
    `Demo family ${demo.family_id}${demo.transactions ? ` with ${demo.transactions} transactions` : " (already seeded; new keys issued)"}`,
    `  user            ${demo.email}  (an instance administrator: its keys can list every user and SSO provider)`,
    `  read/write key  ${demo.api_key}`,
    `  read-only key   ${demo.read_api_key}`,
    "Keys are shown once; only their hashes are stored.",
  ].join("\n");
}

function historyBanner(history: Awaited<ReturnType<typeof seedAuditHistory>>): string {
  const total = history.months.reduce((sum, month) => sum + month.events, 0);
  return [
    history.recorded
      ? `Demo audit history: ${history.recorded} events over ${history.months.length} months (user agent "finance-gateway demo history")`
      : `Demo audit history already recorded (${total} events); nothing added`,
    ...history.months.map((month) => `  ${month.month}  ${month.events} events`),
  ].join("\n");
}

function backupBanner(result: Awaited<ReturnType<typeof backupDatabase>>): string {
  return [
    `backup written to ${result.file} (${result.tables} tables, ${result.rows} rows)`,
    result.includesKey
      ? "It includes the encryption key, sealed with your passphrase: keep the passphrase apart from the file."
      : `It does not include the encryption key: stored secrets (bank connections, SSO client secrets) need it. Keep ${result.keySource} with the backup, or back up again with --passphrase-file to include it sealed.`,
  ].join("\n");
}

function restoreBanner(result: Awaited<ReturnType<typeof restoreDatabase>>): string {
  return [
    `restored ${result.rows} rows into ${result.tables} tables from a backup of ${result.createdAt}`,
    result.keyRestored
      ? `encryption key restored to ${result.keyRestored}`
      : "stored secrets need the encryption key the backed-up service used (ENCRYPTION_KEY or DATA_DIR/encryption-key)",
    "check the audit log with: npx finance-gateway audit verify",
  ].join("\n");
}
