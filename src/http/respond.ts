import type { Request, Response } from "express";

export type ErrorBody = { error: string; message: string; errors?: string[]; details?: Record<string, unknown> };

const GRAPHQL_CODES: Record<number, string> = { 401: "UNAUTHENTICATED", 429: "RATE_LIMITED", 400: "BAD_REQUEST", 413: "BAD_REQUEST" };

/**
 * Errors raised before a request reaches its transport (authentication, rate limit, body parsing):
 * REST clients get the docs/rest-compat.md body, GraphQL clients a GraphQL error response.
 */
export function sendError(req: Request, res: Response, status: number, body: ErrorBody): void {
  if (req.baseUrl.startsWith("/graphql")) {
    res.status(status).json({
      errors: [{ message: body.message, extensions: { code: GRAPHQL_CODES[status] ?? "INTERNAL_SERVER_ERROR", ...body.details } }],
    });
    return;
  }
  res.status(status).json(body);
}
