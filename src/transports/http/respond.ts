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

/**
 * Answers an error raised outside a GraphQL execution (authentication, the rate limit, body parsing,
 * a route's handler, the final handler), through the one edge per transport: REST clients get the
 * docs/rest-compat.md body, GraphQL clients a GraphQL error response, both with the status of the
 * error's code.
 */
export function sendError(req: Request, res: Response, error: unknown): void {
  const { status, body } = restErrorOf(error);
  // Refusals made before routing (a credential in the query string) have no baseUrl yet.
  if ((req.baseUrl || req.path).startsWith("/graphql")) {
    res.status(status).json({ errors: [{ message: body.message, extensions: graphqlExtensionsOf(error) }] });
    return;
  }
  res.status(status).json(body);
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
