import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type Request, type Response } from "express";
import { execute, type GraphQLSchema } from "graphql";
import { useServer } from "graphql-ws/use/ws";
import proxyAddr from "proxy-addr";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { WebSocketServer } from "ws";
import { createRestRouter, unknownRouteGuard } from "../../rest-adapter/rest-router";
import { API_PREFIX } from "../../rest-adapter/routes";
import type { Logger } from "../common/logger";
import type { Config } from "../config/config";
import type { Actor } from "../identity/actor";
import { projectRoot } from "../config/project-root";
import { RequestContext } from "../graphql/context";
import { formatGraphQLError } from "../graphql/errors";
import type { Services } from "../services";
import { createAuthRouter } from "../auth/auth.router";
import { createSsoRouter } from "../sso/sso.router";
import { createExportRouter } from "../exports/export.router";
import { auditContextFor, runInAuditContext, type AuditContext } from "../audit/audit-context";
import { createAdminConsoleRouter, explorerPage } from "./admin-console";
import { authenticate, bearerToken, enterRequestOrigin, readCookie, resolveActor, SESSION_COOKIE } from "./authenticate";
import { LiveSockets } from "./live-sockets";
import { rateLimit } from "./rate-limit";
import { assignRequestId } from "./request-id";
import { requestLog } from "./request-log";
import { finalErrorHandler, noRouteHandler } from "./respond";

export type AppDeps = {
  config: Config;
  services: Services;
  schema: GraphQLSchema;
  logger: Logger;
  rateLimiter: RateLimiterAbstract | null;
  /** Names each backend that does not answer; empty when ready. */
  readiness: () => Promise<string[]>;
};

export type App = { app: express.Express; httpServer: http.Server; close(): Promise<void> };

const BODY_LIMIT = "1mb";

/**
 * The console's session cookie on a WebSocket upgrade, when the upgrade comes from this site: a
 * browser sends the cookie with any page's upgrade request, so another site's page must not ride on it.
 */
function socketSessionCookie(request: http.IncomingMessage): string | undefined {
  const session = readCookie({ get: (name: string) => request.headers[name.toLowerCase()] } as unknown as Request, SESSION_COOKIE);
  if (session === undefined) return undefined;
  const origin = request.headers.origin;
  if (origin === undefined) return session;
  const host = request.headers.host;
  try {
    return new URL(origin).host === host ? session : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Builds the express app, the HTTP server, Apollo and the graphql-ws server without listening, so
 * tests, the CLI and benchmarks attach to the same thing.
 */
export async function createApp(deps: AppDeps): Promise<App> {
  const { config, services, schema, logger } = deps;
  const app = express();
  const httpServer = http.createServer(app);
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  app.set("query parser", "simple");

  app.use((req, res, next) => {
    res.locals.requestId = assignRequestId(req, res);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
    next();
  });
  app.use(enterRequestOrigin);
  // Mounted only when its lines are wanted: below info it would time every request for nothing.
  if (logger.isLevelEnabled("info")) app.use(requestLog(logger));

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const down = await deps.readiness();
    res.status(down.length ? 503 : 200).json(down.length ? { status: "unavailable", down } : { status: "ready" });
  });

  const contextOf = (res: Response) =>
    new RequestContext(services, res.locals.actor, res.locals.requestId, logger, res.locals.rateLimit ?? null);
  const limit = deps.rateLimiter ? [rateLimit(deps.rateLimiter, logger)] : [];

  const openapi = fs.readFileSync(path.join(projectRoot, "schema", "openapi.yaml"), "utf8");
  app.get(`${API_PREFIX}/openapi.yaml`, (_req, res) => {
    res.type("application/yaml").send(openapi);
  });
  // Before /api/v1's own routes: upstream's /api/v1/auth/login and /refresh are served here, unauthenticated.
  app.use(createAuthRouter(services, limit));
  const restRouter = createRestRouter(schema, (req) => contextOf(req.res!));
  app.use(
    API_PREFIX,
    unknownRouteGuard(),
    authenticate(services, { required: true }),
    ...limit,
    express.json({ limit: BODY_LIMIT }),
    restRouter,
  );
  app.use(createSsoRouter(services, limit));
  app.use(createExportRouter(services, limit));
  app.use(createAdminConsoleRouter());

  /**
   * The WebSocket transport's origins: one per connection (its authentication) and one per operation,
   * each with its own request id, made current here and nowhere else (the HTTP one is enterRequestOrigin).
   */
  const socketOrigin = (request: http.IncomingMessage) =>
    auditContextFor({
      clientIp: proxyAddr(request, app.get("trust proxy fn")),
      userAgent: request.headers["user-agent"],
      requestId: randomUUID(),
    });
  const operationOrigins = new WeakMap<RequestContext, AuditContext>();
  // Upgrades are handed over here rather than by attaching ws to the HTTP server, which would re-emit
  // the server's own errors (a port in use) on the ws server, where graphql-ws prints them as a stack trace.
  const wsServer = new WebSocketServer({ noServer: true });
  httpServer.on("upgrade", (request, socket, head) => {
    if (new URL(request.url ?? "/", "http://localhost").pathname !== "/graphql") return void socket.destroy();
    wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit("connection", ws, request));
  });
  const liveSockets = new LiveSockets(logger);
  liveSockets.listen(services.events);
  const formatError = formatGraphQLError(logger);
  type SocketExtra = { actor?: Actor | null };
  const wsCleanup = useServer<Record<string, unknown>, SocketExtra>(
    {
      schema,
      // A wrong credential closes the socket with 4403 Forbidden at connection time; none connects anonymously.
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const apiKey = params["X-Api-Key"] ?? params["x-api-key"];
        const authorization = params["Authorization"] ?? params["authorization"];
        const bearer = authorization === undefined ? undefined : bearerToken({ get: () => String(authorization) } as unknown as Request);
        const session = apiKey === undefined && bearer === undefined ? socketSessionCookie(ctx.extra.request) : undefined;
        if (apiKey === undefined && bearer === undefined && session === undefined) return true;
        try {
          // Like an HTTP request's: presenting an expired session records its expiry with the socket's origin.
          const origin = socketOrigin(ctx.extra.request);
          const credentials = { bearer, apiKey: apiKey === undefined ? undefined : String(apiKey), session };
          ctx.extra.actor = await runInAuditContext(origin, () => resolveActor(services, credentials));
          liveSockets.add(ctx.extra.socket, ctx.extra.actor);
          return true;
        } catch {
          return false;
        }
      },
      context: (ctx) => {
        const origin = socketOrigin(ctx.extra.request);
        const context = new RequestContext(services, ctx.extra.actor ?? null, origin.requestId!, logger);
        operationOrigins.set(context, origin);
        return context;
      },
      // Queries and mutations over the socket record audit events with the operation's origin, as HTTP requests do.
      execute: (args) => runInAuditContext(operationOrigins.get(args.contextValue as RequestContext)!, () => execute(args)),
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) } : undefined,
    },
    wsServer,
  );
  const apollo = new ApolloServer<RequestContext>({
    schema,
    introspection: true,
    // Apollo adds stack traces to error responses unless NODE_ENV is production or test, and nothing sets it.
    includeStacktraceInErrorResponses: false,
    formatError,
    // The service's own shutdown drains Apollo; Apollo's signal handlers would race it.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      {
        serverWillStart: async () => ({
          drainServer: async () => {
            await liveSockets.stop();
            await wsCleanup.dispose();
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
      await apollo.stop();
      if (httpServer.listening) await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
