import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type NextFunction, type Request, type Response } from "express";
import type { GraphQLSchema } from "graphql";
import proxyAddr from "proxy-addr";
import { createRestRouter, unknownRouteGuard } from "../../rest-adapter/rest-router";
import { enteredOnItsPaths } from "../transports/http/route-gate";
import { API_PREFIX } from "../../rest-adapter/routes";
import type { Logger } from "../platform/common/logger";
import type { Config } from "../platform/config/config";
import { projectRoot } from "../platform/config/project-root";
import { RequestContext } from "../transports/graphql/context";
import { CostControl } from "../transports/graphql/cost-control";
import { formatGraphQLError } from "../transports/graphql/errors";
import { MAX_TOKENS } from "../transports/graphql/operation-limits";
import type { Services } from "./services";
import type { ServiceMetrics } from "../platform/metrics/metrics";
import { healthRoutes } from "../transports/http/health";
import { metricsRoute, recordRequests } from "../transports/http/metrics.http";
import { createAuthRouter } from "../finance/auth/auth.router";
import { createMobileSsoApiRouter, createSsoRouter } from "../audit/sso/sso.router";
import { createExportRouter } from "../audit/exports/export.router";
import { createAdminConsoleRouter, explorerPage } from "../transports/http/admin-console";
import { authenticate, enterRequestOrigin } from "../transports/http/authenticate";
import { createImportUploadRouter } from "../finance/imports/import.router";
import { createFamilyExportRouter } from "../finance/exports/family-export.router";
import { answerClientErrors } from "../transports/http/client-errors";
import { attachGraphQLSocket } from "../transports/http/graphql-socket";
import { rateLimit, type RateLimiters } from "../transports/http/rate-limit";
import { refuseCredentialsInQuery } from "../transports/http/query-credentials";
import { securityHeaders } from "../transports/http/security-headers";
import { assignRequestId } from "../transports/http/request-id";
import { requestLog } from "../transports/http/request-log";
import { finalErrorHandler, noRouteHandler } from "../transports/http/respond";

export type AppDeps = {
  config: Config;
  services: Services;
  schema: GraphQLSchema;
  logger: Logger;
  rateLimiters: RateLimiters | null;
  /** Names each backend that does not answer; empty when ready. */
  readiness: () => Promise<string[]>;
  /** Counts requests and serves GET /metrics (see src/platform/metrics). */
  metrics?: ServiceMetrics;
};

export type App = { app: express.Express; httpServer: http.Server; close(): Promise<void> };

const BODY_LIMIT = "1mb";
export const SERVER_TIMEOUTS = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 } as const;

/** How long a connection accepted just before shutdown has to deliver its request before idle ones are ended. */
const LAST_REQUESTS_GRACE_MS = 500;

/**
 * The first step of a graceful stop. Closing the listening socket refuses new connections at once;
 * Node's http server.close() would also destroy every connection without a request under way, and a
 * connection accepted a moment ago whose request has not been read yet is among them: its client would
 * see a reset for a request it had sent. So the listener is closed alone (after the connections already
 * queued are accepted), and such requests get a moment to arrive; Apollo's drain then ends the
 * connections still idle and waits for the requests in flight. (A connection the kernel queues in the
 * instant between the last accept and the close is reset by the kernel: its request never reached the
 * service, so nothing of it ran.)
 */
async function stopAccepting(httpServer: http.Server, draining: { now: boolean }): Promise<void> {
  if (!httpServer.listening) return;
  draining.now = true;
  // Through one more poll phase: connections already queued by the kernel are accepted, not reset.
  for (let i = 0; i < 2; i += 1) await new Promise((resolve) => setImmediate(resolve));
  net.Server.prototype.close.call(httpServer);
  await new Promise((resolve) => setTimeout(resolve, LAST_REQUESTS_GRACE_MS));
}

/**
 * Builds the express app, the HTTP server, Apollo and the graphql-ws server without listening, so
 * tests, the CLI and benchmarks attach to the same thing.
 */
export async function createApp(deps: AppDeps): Promise<App> {
  const { config, services, schema, logger } = deps;
  const app = express();
  const httpServer = http.createServer(app);
  // Chosen rather than Node's defaults (60 s for headers, 300 s for a whole request): a client that
  // sends slowly holds a socket this long at most, then gets 408. Idle keep-alive sockets close after 5 s.
  httpServer.headersTimeout = SERVER_TIMEOUTS.headersMs;
  httpServer.requestTimeout = SERVER_TIMEOUTS.requestMs;
  httpServer.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveMs;
  answerClientErrors(httpServer);
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  app.set("query parser", "simple");

  // First, so every request counts, refused ones too.
  if (deps.metrics) app.use(recordRequests(deps.metrics));
  // While shutting down, every answer closes its connection: the client opens its next one elsewhere.
  const draining = { now: false };
  app.use((_req, res, next) => {
    if (draining.now) res.setHeader("connection", "close");
    next();
  });
  app.use(securityHeaders());
  app.use((req, res, next) => {
    res.locals.requestId = assignRequestId(req, res);
    next();
  });
  // Before anything logs the URL: a credential in the query string is refused, never written down.
  app.use(refuseCredentialsInQuery);
  app.use(enterRequestOrigin);
  // Mounted only when its lines are wanted: below info it would time every request for nothing.
  if (logger.isLevelEnabled("info")) app.use(requestLog(logger));

  app.use(enteredOnItsPaths(healthRoutes(deps.readiness)));
  // Not behind API keys or rate limits: its own rule (a bearer token, or loopback only) in metrics.http.ts.
  if (deps.metrics) app.get("/metrics", metricsRoute(config, deps.metrics));

  const contextOf = (res: Response) =>
    new RequestContext(
      services,
      res.locals.actor,
      res.locals.requestId,
      logger,
      res.locals.rateLimit ?? null,
      res.locals.rateLimitKey ?? null,
    );
  const limit = deps.rateLimiters ? [rateLimit(deps.rateLimiters, logger)] : [];

  const openapi = fs.readFileSync(path.join(projectRoot, "schema", "openapi.yaml"), "utf8");
  app.get(`${API_PREFIX}/openapi.yaml`, (_req, res) => {
    res.type("application/yaml").send(openapi);
  });
  // Before /api/v1's own routes: upstream's /api/v1/auth/login and /refresh are served here, unauthenticated.
  app.use(enteredOnItsPaths(createAuthRouter(services, limit)));
  app.use(enteredOnItsPaths(createMobileSsoApiRouter(services, limit)));
  // File uploads stream in: served beside the route table, before /api/v1's unknown-route guard.
  app.use(enteredOnItsPaths(createImportUploadRouter(services, schema, (req) => contextOf(req.res!), limit, deps.config.imports.maxBytes)));
  // A download answers with a redirect (and the file), which no GraphQL result is: served beside the route table.
  app.use(enteredOnItsPaths(createFamilyExportRouter(services, schema, (req) => contextOf(req.res!), limit)));
  // The router parses the body itself, after the credential's scope is checked.
  const restRouter = createRestRouter(schema, (req) => contextOf(req.res!), express.json({ limit: BODY_LIMIT }));
  app.use(API_PREFIX, unknownRouteGuard(), authenticate(services, { required: true }), ...limit, restRouter);
  app.use(createSsoRouter(services, limit));
  app.use(createExportRouter(services, limit));
  app.use(createAdminConsoleRouter());

  const costControl = new CostControl({
    schema,
    maxCost: config.graphqlMaxCost,
    rateLimiters: deps.rateLimiters,
    logger,
    dataCosts: archiveReadCosts(services),
  });
  const socket = attachGraphQLSocket({
    httpServer,
    schema,
    services,
    logger,
    costControl,
    clientIp: (request) => proxyAddr(request, app.get("trust proxy fn")),
  });
  const formatError = formatGraphQLError(logger);
  const apollo = new ApolloServer<RequestContext>({
    schema,
    introspection: true,
    // Bounds parsing and validation of any document; depth, aliases and cost are checked once the caller is known.
    parseOptions: { maxTokens: MAX_TOKENS },
    // Apollo adds stack traces to error responses unless NODE_ENV is production or test, and nothing sets it.
    includeStacktraceInErrorResponses: false,
    formatError,
    // The service's own shutdown drains Apollo; Apollo's signal handlers would race it.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      costControl.plugin(),
      {
        serverWillStart: async () => ({
          drainServer: async () => {
            await socket.dispose();
          },
        }),
      },
      // A browser opening /graphql gets the bundled explorer (explorerPage), never a page loaded from a CDN.
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await apollo.start();
  if (config.graphqlLandingPage) app.get("/graphql", explorerPage());
  app.use(
    "/graphql",
    // Apollo serves GET only; Node already sends no body in answer to HEAD, whatever the handler writes.
    (req: Request, _res: Response, next: NextFunction) => {
      if (req.method === "HEAD") req.method = "GET";
      next();
    },
    authenticate(services, { required: false, cookie: true }),
    ...limit,
    express.json({ limit: BODY_LIMIT }),
    expressMiddleware(apollo, { context: async ({ res }) => contextOf(res) }),
  );

  app.use(noRouteHandler);
  app.use(finalErrorHandler(logger, BODY_LIMIT));

  return {
    app,
    httpServer,
    async close() {
      await stopAccepting(httpServer, draining);
      // Waits for requests in flight, ends idle connections, closes the GraphQL sockets.
      await apollo.stop();
      if (httpServer.listening) await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

/** Archive bytes a field will read (from the manifests) per unit of GraphQL cost: 1 GiB of archives costs 16 384. */
const ARCHIVE_BYTES_PER_COST = 64 * 1024;

/** Archive search and whole-chain verification cost what they will read, each archive id counted once. */
function archiveReadCosts(services: Services): Record<string, (args: Record<string, unknown>) => Promise<number>> {
  return {
    auditArchiveSearch: async (args) => {
      const ids = Array.isArray(args.archiveIds) ? args.archiveIds.filter((id): id is string => typeof id === "string") : [];
      return (await services.retention.searchBytes(ids)) / ARCHIVE_BYTES_PER_COST;
    },
    auditChainVerification: async (args) =>
      args.from || args.to ? 0 : (await services.retention.verificationBytes()) / ARCHIVE_BYTES_PER_COST,
  };
}
