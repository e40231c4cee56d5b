import type http from "node:http";
import type { NextFunction, Request, Response } from "express";
import { graphqlExtensionsOf, restErrorOf } from "../../platform/common/error-edges";
import {
  asDomainError,
  BadRequestError,
  type DomainError,
  ErrorCode,
  PayloadTooLargeError,
  RouteNotFoundError,
} from "../../platform/common/errors";
import type { Logger } from "../../platform/common/logger";

export type SendErrorOptions = {
  /** Extra headers of the answer (`www-authenticate`). */
  headers?: Record<string, string>;
  /** A page for browsers that ask for HTML (the SSO flow), given the error's message. */
  page?: (message: string) => string;
};

/**
 * Answers an error raised outside a GraphQL execution (authentication, the rate limit, body parsing,
 * a route's handler, the final handler, the metrics port), through the one edge per transport: REST
 * clients get the docs/rest-compat.md body, GraphQL clients a GraphQL error response, both with the
 * status of the error's code. Works on express' response and on a bare node one (the worker's metrics port).
 */
export function sendError(req: http.IncomingMessage, res: http.ServerResponse, error: unknown, options: SendErrorOptions = {}): void {
  const { status, body } = restErrorOf(error);
  // Refusals made before routing (a credential in the query string) have no baseUrl yet.
  const express = req as Partial<Request>;
  const path = express.baseUrl || express.path || (req.url ?? "/").split("?")[0];
  const answer = path.startsWith("/graphql") ? { errors: [{ message: body.message, extensions: graphqlExtensionsOf(error) }] } : body;
  for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  const page = options.page && (req.headers.accept ?? "").includes("text/html") ? options.page(body.message) : null;
  if (isExpress(res)) {
    if (page !== null) res.status(status).type("html").send(page);
    else res.status(status).json(answer);
    return;
  }
  res.writeHead(status, { "content-type": page === null ? "application/json; charset=utf-8" : "text/html; charset=utf-8" });
  res.end(page ?? JSON.stringify(answer));
}

function isExpress(res: http.ServerResponse): res is Response {
  return typeof (res as Partial<Response>).json === "function";
}

/** Mounted after every route: nothing answered this path. */
export function noRouteHandler(req: Request, res: Response): void {
  sendError(req, res, new RouteNotFoundError(`No route matches ${req.method} ${req.path}`));
}

/**
 * The final express error handler: body-parser refusals become the 400/413 they mean, a domain error
 * gets the status of its code (a ConflictError is a 409 here too), anything else is logged and a 500.
 */
export function finalErrorHandler(logger: Logger, bodyLimit: string) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const answer = bodyParserError(error, bodyLimit) ?? error;
    const domainError = asDomainError(answer);
    if (!domainError) logger.error({ err: error, requestId: res.locals.requestId }, "unhandled error");
    else if (domainError.code === ErrorCode.ServiceUnavailable)
      logger.warn({ err: error, requestId: res.locals.requestId }, "database unavailable");
    if (!res.headersSent) sendError(req, res, answer);
  };
}

/** What body-parser's errors mean to the client; null for anything else. */
function bodyParserError(error: unknown, bodyLimit: string): DomainError | null {
  const { status, type } = (error ?? {}) as { status?: number; type?: string };
  if (status === 413) return new PayloadTooLargeError(`Request body exceeds ${bodyLimit}`);
  if (type === "entity.parse.failed") return new BadRequestError("Request body is not valid JSON");
  if (status === 400 || status === 415) return new BadRequestError("Request body could not be read");
  return null;
}
