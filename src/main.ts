import "reflect-metadata";
import { parseArgs } from "node:util";
import type { Sequelize } from "sequelize";
import { randomUUID } from "node:crypto";
import { runInAuditContext } from "./audit/audit-context";
import { generatePassword } from "./auth/password";
import { seedDemo } from "./cli/demo";
import { DomainError } from "./common/errors";
import { createLogger, type Logger } from "./common/logger";
import { loadConfig, type Config } from "./config/config";
import { migrateToLatest } from "./db/migrator";
import { writeContracts } from "./graphql/contracts";
import { createEventBus, LocalEventBus } from "./events/event-bus";
import { createSchema } from "./graphql/schema";
import { openDatabase, startRuntime, type Roles } from "./runtime";
import { createServices, type Services } from "./services";
import { createQueueBackend } from "../workers/queues";

const USAGE = `Usage: finance-gateway <command> [options] [--json]

Service:
  start                       API and workers in one process (embedded PostgreSQL when DATABASE_URL is unset)
  api                         API only
  worker                      workers only
  migrate                     apply database migrations

Data:
  demo                        create the demo family and print API keys
  user create --email E [--family-of OTHER_EMAIL] [--role admin|auditor|member]
  api-key create --email E --scope read|read_write [--name N]
  api-key revoke --id ID
  admin create --email E [--password P]   an admin who signs in with a password (one is generated when omitted)

Audit:
  audit verify [--from DATE] [--to DATE]  check the audit hash chain; exits 1 at the first broken link

Development:
  emit-contracts              regenerate schema/schema.graphql and schema/openapi.yaml

With --json a command prints exactly one JSON object on stdout.`;

type Printer = (result: Record<string, unknown>, human: string) => void;

/** Runs one CLI command. With --json every outcome, errors included, is one JSON object on stdout. */
export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (argv.includes("--json")) console.log(JSON.stringify({ error: message }));
    else console.error(message);
    process.exitCode = 1;
  }
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: "boolean", default: false },
      email: { type: "string" },
      "family-of": { type: "string" },
      role: { type: "string" },
      scope: { type: "string" },
      name: { type: "string" },
      id: { type: "string" },
      password: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const command = positionals.join(" ");
  const print: Printer = (result, human) => console.log(values.json ? JSON.stringify(result) : human);
  if (values.help || command === "") {
    console.log(USAGE);
    return;
  }

  const config = loadConfig();
  if (command === "start" || command === "api" || command === "worker") {
    return serve(config, { api: command !== "worker", workers: command !== "api" }, print);
  }
  if (command === "emit-contracts") {
    const files = writeContracts(await createSchema(new LocalEventBus(createLogger("silent", 2))));
    return print({ written: files }, `wrote ${files.join(", ")}`);
  }

  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel, 2);
  try {
    const cliContext = { ipAddress: null, userAgent: "finance-gateway-cli", requestId: `cli:${randomUUID()}`, sessionId: null };
    await withDatabase(config, logger, (services, sequelize) => runInAuditContext(cliContext, () => runCommand(services, sequelize)));
  } catch (error) {
    const message =
      error instanceof DomainError ? (error.errors?.join("; ") ?? error.message) : error instanceof Error ? error.message : String(error);
    if (values.json) console.log(JSON.stringify({ error: message }));
    else console.error(message);
    process.exitCode = 1;
  }

  async function runCommand(services: Services, sequelize: Sequelize): Promise<void> {
    switch (command) {
      case "migrate": {
        const applied = await migrateToLatest(sequelize);
        return print({ applied }, applied.length ? `applied ${applied.join(", ")}` : "database is up to date");
      }
      case "demo": {
        const demo = await seedDemo(sequelize, services);
        return print(demo, demoBanner(demo));
      }
      case "user create": {
        const user = await services.users.create({
          email: required(values.email, "--email"),
          familyOfEmail: values["family-of"],
          role: values.role,
        });
        return print(
          { id: user.id, email: user.email, family_id: user.familyId },
          `created user ${user.email} (${user.id}) in family ${user.familyId}`,
        );
      }
      case "api-key create": {
        const user = await services.users.findByEmail(required(values.email, "--email"));
        if (!user) throw new Error(`no user with email ${values.email}`);
        const { apiKey, plaintext } = await services.apiKeys.create(user.id, {
          scope: required(values.scope, "--scope"),
          name: values.name,
        });
        return print({ api_key: plaintext, id: apiKey.id }, `API key (shown once): ${plaintext}\nid: ${apiKey.id}`);
      }
      case "api-key revoke": {
        const apiKey = await services.apiKeys.revoke(required(values.id, "--id"));
        return print({ id: apiKey.id, revoked_at: apiKey.revokedAt }, `revoked API key ${apiKey.id}`);
      }
      case "admin create": {
        const generated = values.password === undefined;
        const password = values.password ?? generatePassword();
        const user = await services.users.create({ email: required(values.email, "--email"), role: "admin", password });
        return print(
          { id: user.id, email: user.email, role: user.role, ...(generated ? { password } : {}) },
          `created admin ${user.email} (${user.id})${generated ? `\npassword (shown once): ${password}` : ""}`,
        );
      }
      case "audit verify": {
        const report = await services.audit.verify({ from: values.from, to: values.to });
        if (!report.ok) process.exitCode = 1;
        return print(
          report,
          report.ok
            ? `audit chain intact (${report.checked} events checked)`
            : `audit chain BROKEN at ${report.firstBroken!.seq === null ? `event ${report.firstBroken!.eventId}` : `sequence ${report.firstBroken!.seq}`} (${report.firstBroken!.kind}): ${report.firstBroken!.message}`,
        );
      }
      default:
        throw new Error(`unknown command "${command}"\n\n${USAGE}`);
    }
  }
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new Error(`${flag} is required`);
  return value;
}

async function withDatabase<T>(config: Config, logger: Logger, work: (services: Services, sequelize: Sequelize) => Promise<T>): Promise<T> {
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const { sequelize, url } = await openDatabase(config, logger, stops);
    const events = createEventBus({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, databaseUrl: url }, logger);
    stops.push(() => events.close());
    const queues = createQueueBackend(config, url);
    stops.push(() => queues.close());
    const services = createServices(sequelize, events, { config, queues, logger });
    stops.push(() => services.audit.settle());
    return await work(services, sequelize);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

async function serve(config: Config, roles: Roles, print: Printer): Promise<void> {
  const runtime = await startRuntime(config, roles);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.logger.info({ signal }, "shutting down: draining requests and jobs");
    const timer = setTimeout(() => {
      runtime.logger.error("shutdown timed out");
      process.exit(1);
    }, config.shutdownTimeoutMs);
    await runtime.stop();
    clearTimeout(timer);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

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
  print(
    { ...urls, database: config.databaseUrl ? "external" : "embedded", queues: runtime.queues.kind, roles },
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
      `  Database   ${config.databaseUrl ? "DATABASE_URL" : `embedded PostgreSQL in ${config.dataDir}`}`,
      `  Queues     ${runtime.queues.kind === "redis" ? "Redis" : "PostgreSQL (set REDIS_URL for Redis)"}`,
      "",
      "Get an API key with demo data:  npx finance-gateway demo",
      "Then:  curl -H 'X-Api-Key: <key>' " + (urls.rest ?? "") + "/transactions",
      "",
    ].join("\n"),
  );
}

function demoBanner(demo: Awaited<ReturnType<typeof seedDemo>>): string {
  return [
    `Demo family ${demo.family_id}${demo.transactions ? ` with ${demo.transactions} transactions` : " (already seeded; new keys issued)"}`,
    `  user            ${demo.email}`,
    `  read/write key  ${demo.api_key}`,
    `  read-only key   ${demo.read_api_key}`,
    "Keys are shown once; only their hashes are stored.",
  ].join("\n");
}
