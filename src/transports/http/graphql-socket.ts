import { randomUUID } from "node:crypto";
import type http from "node:http";
import { execute, getOperationAST, GraphQLError, parse, validate, type GraphQLSchema } from "graphql";
import { useServer } from "graphql-ws/use/ws";
import type { Request } from "express";
import { WebSocketServer, type WebSocket } from "ws";
import { auditContextFor, runInAuditContext, type AuditContext } from "../../platform/common/audit-context";
import { rateLimitKey } from "./rate-limit";
import type { Logger } from "../../platform/common/logger";
import { RequestContext } from "../graphql/context";
import type { CostControl } from "../graphql/cost-control";
import { formatGraphQLError } from "../graphql/errors";
import { MAX_TOKENS } from "../graphql/operation-limits";
import { auditSessionOf, type Actor } from "../../platform/security/actor";
import type { Services } from "../../app/services";
import { bearerToken, readCookie, resolveActor, SESSION_COOKIE } from "./authenticate";
import { LiveSockets } from "./live-sockets";

/** Socket limits: a message as large as an HTTP body, a prompt handshake, and bounded fan-out per client. */
export const SOCKET_LIMITS = {
  maxPayloadBytes: 1024 * 1024,
  /** A client that opens a socket and never sends `connection_init` is closed (4408) after this long. */
  connectionInitTimeoutMs: 5000,
  subscriptionsPerConnection: 25,
  connectionsPerCredential: 20,
  /** Anonymous sockets (introspection only) per client address. */
  anonymousConnectionsPerAddress: 5,
} as const;

/** Closed when a credential or address already holds its share of connections. */
export const TOO_MANY_CONNECTIONS = 4429;

type SocketExtra = { actor?: Actor | null; anonymousKey?: string };

export type GraphQLSocketDeps = {
  httpServer: http.Server;
  schema: GraphQLSchema;
  services: Services;
  logger: Logger;
  costControl: CostControl;
  /** The client address of an upgrade request, by the trusted-proxy rules. */
  clientIp: (request: http.IncomingMessage) => string | undefined;
};

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

/** graphql-ws on /graphql: authentication at connection, the same cost rules as HTTP, and the socket limits above. */
export function attachGraphQLSocket(deps: GraphQLSocketDeps): { dispose(): Promise<void> } {
  const { schema, services, logger, costControl } = deps;
  /**
   * The WebSocket transport's origins: one per connection (its authentication) and one per operation,
   * each with its own request id, made current here and nowhere else (the HTTP one is enterRequestOrigin).
   */
  const socketOrigin = (request: http.IncomingMessage) =>
    auditContextFor({ clientIp: deps.clientIp(request), userAgent: request.headers["user-agent"], requestId: randomUUID() });
  const operationOrigins = new WeakMap<RequestContext, AuditContext>();
  // Upgrades are handed over here rather than by attaching ws to the HTTP server, which would re-emit
  // the server's own errors (a port in use) on the ws server, where graphql-ws prints them as a stack trace.
  const wsServer = new WebSocketServer({ noServer: true, maxPayload: SOCKET_LIMITS.maxPayloadBytes });
  deps.httpServer.on("upgrade", (request, socket, head) => {
    if (new URL(request.url ?? "/", "http://localhost").pathname !== "/graphql") return void socket.destroy();
    wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit("connection", ws, request));
  });
  const liveSockets = new LiveSockets(logger);
  liveSockets.listen(services.events);
  const anonymous = new Map<string, number>();
  const formatError = formatGraphQLError(logger);

  const refuseConnection = (socket: WebSocket, message: string) => {
    socket.close(TOO_MANY_CONNECTIONS, message);
    return false;
  };

  const cleanup = useServer<Record<string, unknown>, SocketExtra>(
    {
      schema,
      connectionInitWaitTimeout: SOCKET_LIMITS.connectionInitTimeoutMs,
      // A wrong credential closes the socket with 4403 Forbidden at connection time; without one it may only introspect.
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const apiKey = params["X-Api-Key"] ?? params["x-api-key"];
        const authorization = params["Authorization"] ?? params["authorization"];
        const bearer = authorization === undefined ? undefined : bearerToken({ get: () => String(authorization) } as unknown as Request);
        const session = apiKey === undefined && bearer === undefined ? socketSessionCookie(ctx.extra.request) : undefined;
        const origin = socketOrigin(ctx.extra.request);
        if (apiKey === undefined && bearer === undefined && session === undefined) {
          const key = origin.ipAddress ?? "unknown";
          const open = anonymous.get(key) ?? 0;
          if (open >= SOCKET_LIMITS.anonymousConnectionsPerAddress)
            return refuseConnection(ctx.extra.socket, "Too many connections without credentials from this address");
          anonymous.set(key, open + 1);
          ctx.extra.anonymousKey = key;
          return true;
        }
        try {
          // Like an HTTP request's: presenting an expired session records its expiry with the socket's origin.
          const credentials = { bearer, apiKey: apiKey === undefined ? undefined : String(apiKey), session };
          const actor = await runInAuditContext(origin, () => resolveActor(services, credentials));
          if (liveSockets.count(actor) >= SOCKET_LIMITS.connectionsPerCredential)
            return refuseConnection(ctx.extra.socket, "Too many connections for this credential");
          ctx.extra.actor = actor;
          liveSockets.add(ctx.extra.socket, actor);
          return true;
        } catch {
          return false;
        }
      },
      onClose: (ctx) => {
        const key = ctx.extra.anonymousKey;
        if (key === undefined) return;
        const left = (anonymous.get(key) ?? 1) - 1;
        if (left > 0) anonymous.set(key, left);
        else anonymous.delete(key);
      },
      // Parsed, validated and measured here rather than by graphql-ws, so a syntax error is a client error and the cost rules apply.
      onSubscribe: async (ctx, _id, payload) => {
        if (Object.keys(ctx.subscriptions).length > SOCKET_LIMITS.subscriptionsPerConnection)
          return [
            clientError(
              `At most ${SOCKET_LIMITS.subscriptionsPerConnection} operations may run at once on one connection`,
              "TOO_MANY_SUBSCRIPTIONS",
            ),
          ];
        let document;
        try {
          document = parse(payload.query, { maxTokens: MAX_TOKENS });
        } catch (error) {
          return [clientError((error as Error).message, "GRAPHQL_PARSE_FAILED")];
        }
        const invalid = validate(schema, document);
        if (invalid.length) return invalid.map((error) => clientError(error.message, "GRAPHQL_VALIDATION_FAILED"));
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return [clientError("Unable to identify the operation to run", "BAD_REQUEST")];
        const actor = ctx.extra.actor ?? null;
        const origin = socketOrigin(ctx.extra.request);
        const refused = await costControl.refusal({
          document,
          operation,
          variables: payload.variables ?? undefined,
          actor,
          rateLimitKey: rateLimitKey(actor, origin.ipAddress),
        });
        if (refused) return [refused];
        const contextValue = new RequestContext(services, actor, origin.requestId!, logger);
        // As over HTTP: the operation's events name the credential that asked.
        origin.sessionId = auditSessionOf(actor);
        operationOrigins.set(contextValue, origin);
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue,
        };
      },
      // Queries and mutations over the socket record audit events with the operation's origin, as HTTP requests do.
      execute: (args) => runInAuditContext(operationOrigins.get(args.contextValue as RequestContext)!, () => execute(args)),
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) } : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => withoutHttp(error.toJSON())),
    },
    wsServer,
  );
  // graphql-ws answers a socket error (a message over maxPayload, a broken frame) by printing it to
  // stderr as an internal error; these are the client's doing, ws already closes the socket (1009, 1002),
  // so they are logged as what they are instead.
  wsServer.on("connection", (socket) => {
    socket.removeAllListeners("error");
    socket.on("error", (error) => logger.info({ err: error.message }, "WebSocket client error; socket closed"));
  });
  return {
    async dispose() {
      await liveSockets.stop();
      await cleanup.dispose();
    },
  };
}

function clientError(message: string, code: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** The HTTP status a refusal carries for Apollo means nothing on a socket. */
function withoutHttp<T extends { extensions?: Record<string, unknown> }>(formatted: T): T {
  if (!formatted.extensions || !("http" in formatted.extensions)) return formatted;
  const { http: _http, ...extensions } = formatted.extensions;
  return { ...formatted, extensions };
}
