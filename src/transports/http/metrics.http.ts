import { timingSafeEqual, createHash } from "node:crypto";
import http from "node:http";
import type { NextFunction, Request, Response } from "express";
import { explainListenError } from "../../platform/common/connection-errors";
import { ForbiddenError, RouteNotFoundError, UnauthenticatedError } from "../../platform/common/errors";
import type { Logger } from "../../platform/common/logger";
import type { Config } from "../../platform/config/config";
import type { ServiceMetrics } from "../../platform/metrics/metrics";
import { sendError } from "./respond";

/**
 * The route a request matched, as a template (`/api/v1/transactions/{id}`), never its raw path: a
 * label per id would grow without bound. The REST adapter names its route in res.locals.route;
 * express routes are `baseUrl + route.path`; GraphQL and the console are one route each.
 */
export function routeTemplateOf(req: Request, res: Response): string {
  if (typeof res.locals.route === "string") return res.locals.route;
  if (req.route && typeof req.route.path === "string") return `${req.baseUrl}${req.route.path}`;
  const path = req.originalUrl.split("?")[0];
  if (path === "/graphql" || path.startsWith("/graphql/")) return "/graphql";
  if (path === "/admin" || path.startsWith("/admin/")) return "/admin";
  return "unmatched";
}

/** Counts and times every request once its answer is finished (or its connection closed). */
export function recordRequests(metrics: ServiceMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const done = metrics.requestStarted();
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      done();
      // A connection closed before the answer counts with status 499, as proxies log it.
      const status = res.writableFinished ? res.statusCode : 499;
      metrics.requestFinished(req.method, routeTemplateOf(req, res), status, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once("finish", record);
    res.once("close", record);
    next();
  };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const FORWARDED = ["forwarded", "x-forwarded-for", "x-real-ip"];

function sameToken(given: string, expected: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Who may read /metrics. With METRICS_TOKEN set: whoever sends `Authorization: Bearer <token>`, from
 * anywhere. Without it: only a client on this machine, connected directly: the socket's peer is a
 * loopback address and the request carries no forwarding header (a reverse proxy on this machine
 * would otherwise make every outside client look local). TRUST_PROXY is deliberately not consulted.
 */
export function metricsAccess(
  config: Config,
  req: http.IncomingMessage,
): { ok: true } | { ok: false; error: UnauthenticatedError | ForbiddenError } {
  const token = config.metrics.token;
  if (token) {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match && sameToken(match[1], token)
      ? { ok: true }
      : { ok: false, error: new UnauthenticatedError("/metrics needs the bearer token set in METRICS_TOKEN") };
  }
  const local = LOOPBACK.test(req.socket.remoteAddress ?? "") && !FORWARDED.some((name) => name in req.headers);
  return local
    ? { ok: true }
    : { ok: false, error: new ForbiddenError("/metrics answers loopback clients only; set METRICS_TOKEN to read it from elsewhere") };
}

/** GET /metrics in Prometheus' text format, after the access rule above. */
export async function answerMetrics(
  config: Config,
  metrics: ServiceMetrics,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const access = metricsAccess(config, req);
  if (!access.ok) {
    const challenge: Record<string, string> =
      access.error instanceof UnauthenticatedError ? { "www-authenticate": 'Bearer realm="metrics"' } : {};
    sendError(req, res, access.error, { headers: challenge });
    return;
  }
  const body = await metrics.registry.metrics();
  res.writeHead(200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" });
  res.end(body);
}

export function metricsRoute(config: Config, metrics: ServiceMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    answerMetrics(config, metrics, req, res).catch(next);
  };
}

/**
 * A worker-only process has no HTTP server; with METRICS_PORT set it serves /metrics (and /healthz)
 * on HOST:METRICS_PORT. Returns the URL and how to stop it.
 */
export async function startMetricsServer(
  config: Config,
  metrics: ServiceMetrics,
  logger: Logger,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      answerMetrics(config, metrics, req, res).catch((error) => {
        logger.error({ err: error }, "metrics failed");
        if (!res.headersSent) sendError(req, res, error);
        else res.end();
      });
      return;
    }
    if (req.method === "GET" && path === "/healthz") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ status: "ok" }));
      return;
    }
    sendError(req, res, new RouteNotFoundError("this port serves GET /metrics and GET /healthz only"));
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(explainListenError(error, config.host, port)));
    server.listen(port, config.host, () => resolve());
  });
  const address = server.address() as { port: number };
  return {
    url: `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeIdleConnections();
        server.close(() => resolve());
      }),
  };
}
