import type { JobType } from "bullmq";
import type { GraphQLSchema } from "graphql";
import type { ClassType } from "type-graphql";
import IORedis from "ioredis";
import type { Sequelize } from "sequelize";
import { createQueueBackend, QueueName, type QueueBackend } from "../../workers/queues";
import { WorkerHost } from "../../workers/worker-host";
import { createLogger, type Logger } from "../platform/common/logger";
import type { Config } from "../platform/config/config";
import type { Resolver } from "../platform/outbound/outbound.guard";
import { createSequelize, pingDatabase } from "../platform/db/database";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../platform/db/embedded-postgres";
import { checkRedisReachable, explainDatabaseError, explainListenError } from "../platform/common/connection-errors";
import { migrateToLatest } from "../platform/db/migrator";
import { initModels } from "./models";
import { createEventBus } from "../platform/events/event-bus";
import type { App } from "./http-app";
import { createServices, type Services } from "./services";
import { createServiceMetrics, type ServiceMetrics } from "../platform/metrics/metrics";
import { startMetricsServer } from "../transports/http/metrics.http";

export type Roles = { api: boolean; workers: boolean };

export type RuntimeOptions = {
  logger?: Logger;
  /** Sees every SQL statement; tests count statements with it. */
  onStatement?: (sql: string) => void;
  /** How the outbound guard resolves host names; tests inject a hostile DNS. */
  resolve?: Resolver;
  /** Resolvers added to the schema: the authorization matrix plants a fixture field that breaks its rule. */
  extraResolvers?: ClassType[];
};

/** The wired service. Everything a process role needs, created once, stopped in reverse order. */
export type Runtime = {
  config: Config;
  logger: Logger;
  sequelize: Sequelize;
  services: Services;
  queues: QueueBackend;
  databaseUrl: string;
  /** The embedded PostgreSQL, when DATABASE_URL is unset. */
  embedded?: EmbeddedPostgres;
  schema?: GraphQLSchema;
  app?: App;
  /** Prometheus metrics of this process (GET /metrics). */
  metrics: ServiceMetrics;
  /** http://host:port once listening. */
  url?: string;
  /** The job workers and the audit stream pump, in a process with the workers role (tests await its drain()). */
  workers?: WorkerHost;
  /** A worker-only process's /metrics server, when METRICS_PORT is set. */
  metricsUrl?: string;
  stop(): Promise<void>;
};

export type Stoppable = () => Promise<unknown>;

/** Connects to the configured database (or starts the embedded one) and applies migrations. */
export async function openDatabase(
  config: Config,
  logger: Logger,
  stops: Stoppable[],
  onStatement?: (sql: string) => void,
): Promise<{ sequelize: Sequelize; url: string; embedded?: EmbeddedPostgres }> {
  const { url, embedded } = await databaseUrl(config, logger, stops);
  try {
    // Migrations may rewrite large tables: they run on their own connections, without the statement timeout.
    const migrating = createSequelize({ url, poolMax: 2 });
    try {
      await migrateToLatest(migrating);
    } finally {
      await migrating.close();
    }
  } catch (error) {
    const explained = explainDatabaseError(error, url, embedded ? "embedded" : "DATABASE_URL");
    throw explained ? new Error(explained) : error;
  }
  const sequelize = createSequelize({
    url,
    poolMax: config.databasePoolMax,
    onStatement,
    statementTimeoutMs: config.databaseStatementTimeoutMs || undefined,
  });
  stops.push(() => sequelize.close());
  initModels(sequelize);
  return { sequelize, url, embedded };
}

/** DATABASE_URL, or the URL of the embedded PostgreSQL, started unless another process runs it. */
export async function databaseUrl(
  config: Config,
  logger: Logger,
  stops: Stoppable[],
): Promise<{ url: string; embedded?: EmbeddedPostgres }> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, logger);
  stops.push(() => embedded.stop());
  return { url: embedded.url, embedded };
}

export async function startRuntime(config: Config, roles: Roles, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? createLogger(config.logLevel, 1, config.logFormat);
  const stops: Stoppable[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error) => logger.error({ err: error }, "error while stopping"));
    stops.length = 0;
  };
  try {
    if (config.redisUrl) await checkRedisReachable(config.redisUrl);
    const { sequelize, url: databaseUrl, embedded } = await openDatabase(config, logger, stops, options.onStatement);
    const events = createEventBus({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, databaseUrl }, logger);
    stops.push(() => events.close());
    await events.ready();
    const queues = createQueueBackend(config, databaseUrl);
    stops.push(() => queues.close());
    // The URL is known once the server listens (PORT=0 picks a free port); services ask for it later.
    let runtime: Runtime | undefined = undefined;
    const publicUrl = () => runtime?.url ?? config.publicUrl ?? `http://localhost:${config.port}`;
    const services = createServices(sequelize, events, { config, queues, logger, publicUrl, resolve: options.resolve });
    stops.push(async () => services.outbound.close());
    // Stream URLs stored before their credentials were sealed are sealed now (a no-op once done).
    const sealedUrls = await services.streamDestinations.sealUrlCredentials();
    if (sealedUrls > 0) logger.info({ destinations: sealedUrls }, "stream destination URLs with credentials sealed");
    // Manual accounts whose holdings an earlier price rule valued are revalued now (a no-op once done).
    const revaluation = await services.trades.revaluePending();
    if (revaluation.revalued > 0) logger.info({ accounts: revaluation.revalued }, "investment accounts revalued by the current price rule");
    for (const { accountId, error } of revaluation.failed)
      logger.error({ accountId, error }, "investment account not revalued: its holdings keep the earlier price rule's values");
    // Before the event bus and the database close: events committed just now get linked and published.
    stops.push(() => services.audit.settle());
    const metrics = createServiceMetrics(roles.api ? (roles.workers ? "all" : "api") : "worker", {
      sequelize,
      queues: {
        names: Object.values(QueueName),
        jobCounts: (name, ...states) => queues.queue(name as QueueName).getJobCounts(...(states as JobType[])),
      },
      events,
      audit: services.audit,
    });
    runtime = { config, logger, sequelize, services, queues, databaseUrl, embedded, metrics, stop };

    if (roles.workers && !roles.api && config.metrics.workerPort !== undefined) {
      const server = await startMetricsServer(config, metrics, logger, config.metrics.workerPort);
      stops.push(() => server.close());
      runtime.metricsUrl = server.url;
    }
    if (roles.workers) {
      const host = new WorkerHost(queues, { services, logger }, metrics);
      await host.start();
      runtime.workers = host;
      // Registered after the HTTP server's stop (below), so requests drain first, then jobs.
      stops.push(() => host.stop());
    }
    if (roles.api) {
      const redis = config.redisUrl ? new IORedis(config.redisUrl, { maxRetriesPerRequest: 2 }) : null;
      if (redis) {
        // While Redis is away the limiter lets requests through (see rate-limit.ts); ioredis reconnects by itself.
        redis.on("error", (error: Error) => logger.debug({ err: error }, "rate-limit connection to Redis failed; reconnecting"));
        stops.push(async () => redis.disconnect());
      }
      // The API's modules (GraphQL schema and resolvers, Apollo, Express, the SSO client) load only in a
      // process that serves it: some 40 MB that a worker, a CLI command or an import never uses.
      const [{ createSchema }, { createApp }, { createRateLimiters }] = await Promise.all([
        import("./schema.js"),
        import("./http-app.js"),
        import("../transports/http/rate-limit.js"),
      ]);
      const rateLimiters = createRateLimiters(config, redis ? { redis } : { sequelize });
      runtime.schema = await createSchema(events, options.extraResolvers ?? []);
      runtime.app = await createApp({
        config,
        services,
        schema: runtime.schema,
        logger,
        rateLimiters,
        readiness: () => readiness(sequelize, queues),
        metrics,
      });
      const { httpServer } = runtime.app;
      await new Promise<void>((resolve, reject) => {
        httpServer.once("error", (error) => reject(explainListenError(error, config.host, config.port)));
        httpServer.listen(config.port, config.host, () => resolve());
      });
      stops.push(() => runtime.app!.close());
      const address = httpServer.address() as { port: number };
      runtime.url = config.publicUrl ?? `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${address.port}`;
    }
    return runtime;
  } catch (error) {
    await stop();
    throw error;
  }
}

async function readiness(sequelize: Sequelize, queues: QueueBackend): Promise<string[]> {
  const withTimeout = (check: Promise<unknown>) =>
    Promise.race([check.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref())]).catch(
      () => false,
    );
  const [database, queue] = await Promise.all([withTimeout(pingDatabase(sequelize)), withTimeout(queues.ping())]);
  return [...(database ? [] : ["database"]), ...(queue ? [] : ["queue"])];
}
