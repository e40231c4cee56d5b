import { GraphQLError } from "graphql";
import { asDomainError, type DomainError, ErrorCode } from "./errors";

/**
 * The two edges where a domain error leaves the service: one function per transport, used by every
 * router, the REST adapter, authentication, the rate limiter, the final express handler and the
 * GraphQL error formatter. Nothing else maps an ErrorCode to a status or a GraphQL code.
 */

/** The REST error body of docs/rest-compat.md. */
export type RestErrorBody = {
  error: string;
  message: string;
  errors?: string[];
  details?: Record<string, unknown>;
  [field: string]: unknown;
};

export type RestErrorResponse = { status: number; body: RestErrorBody };

export type GraphQLErrorExtensions = {
  code: string;
  restError?: string;
  errors?: string[];
  details?: Record<string, unknown>;
};

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.MethodNotAllowed]: 405,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.ValidationFailed]: 422,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.UpstreamUnavailable]: 503,
  [ErrorCode.UpstreamFailed]: 502,
  [ErrorCode.QueryTimeout]: 503,
  [ErrorCode.ServiceUnavailable]: 503,
};

/** What a fault of ours looks like from outside: no message, no stack, no code of ours. */
export const INTERNAL_REST_ERROR: RestErrorResponse = {
  status: 500,
  body: { error: "internal_server_error", message: "An unexpected error occurred" },
};

export const INTERNAL_GRAPHQL_CODE = "INTERNAL_SERVER_ERROR";

/** REST edge: the HTTP status and body for anything thrown; a non-domain error is a bare 500. */
export function restErrorOf(thrown: unknown): RestErrorResponse {
  const error = asDomainError(thrown);
  if (!error) return INTERNAL_REST_ERROR;
  const body: RestErrorBody = { error: error.restError, ...error.restFields, message: error.message };
  if (error.errors) body.errors = error.errors;
  if (error.details) body.details = error.details;
  return { status: STATUS_BY_CODE[error.code], body };
}

/** GraphQL edge: the `extensions` for anything thrown; a non-domain error is a bare INTERNAL_SERVER_ERROR. */
export function graphqlExtensionsOf(thrown: unknown): GraphQLErrorExtensions {
  const error = asDomainError(thrown);
  if (!error) return { code: INTERNAL_GRAPHQL_CODE };
  return { code: error.code, restError: error.restError, errors: error.errors, details: error.details };
}

/**
 * GraphQL edge for a refusal before execution (operation limits, the cost charge), which GraphQL
 * servers answer with an HTTP status of its own: the status is the domain error's. `graphqlCode` names
 * a refusal more precisely than the error's code (`QUERY_TOO_DEEP` rather than `BAD_REQUEST`) and then
 * stands alone in `extensions`; `headers` go on the HTTP answer (a rate limit's `retry-after`).
 */
export function graphqlRefusal(error: DomainError, options: { graphqlCode?: string; headers?: Record<string, string> } = {}): GraphQLError {
  const extensions = options.graphqlCode ? { code: options.graphqlCode } : graphqlExtensionsOf(error);
  const http = { status: STATUS_BY_CODE[error.code], ...(options.headers ? { headers: new Map(Object.entries(options.headers)) } : {}) };
  return new GraphQLError(error.message, { extensions: { ...extensions, http } });
}
