/**
 * Typed domain errors. Services throw these; the transports map them at their edge, each with one
 * function of `error-edges.ts` (REST status and body, GraphQL `extensions`). Anything else is an
 * internal error whose details never leave the server.
 */
export enum ErrorCode {
  BadRequest = "BAD_REQUEST",
  Unauthenticated = "UNAUTHENTICATED",
  Forbidden = "FORBIDDEN",
  NotFound = "NOT_FOUND",
  ValidationFailed = "VALIDATION_FAILED",
  Conflict = "CONFLICT",
  RateLimited = "RATE_LIMITED",
  UpstreamUnavailable = "UPSTREAM_UNAVAILABLE",
  /** The other side answered, but not with anything usable (an identity provider's failed token exchange). */
  UpstreamFailed = "UPSTREAM_FAILED",
  /** Transport-level refusals: a REST path that exists for other methods, a request body over the limit. */
  MethodNotAllowed = "METHOD_NOT_ALLOWED",
  PayloadTooLarge = "PAYLOAD_TOO_LARGE",
  QueryTimeout = "QUERY_TIMEOUT",
  /** The database (or Redis) does not answer: restarting, unreachable. The request may be sent again. */
  ServiceUnavailable = "SERVICE_UNAVAILABLE",
}

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  /** snake_case code for the REST error body (docs/rest-compat.md). */
  abstract readonly restError: string;
  readonly errors?: string[];
  readonly details?: Record<string, unknown>;
  /** Fields a protocol puts at the top of its REST error body, next to `error` and `message` (SSO's `reason`). */
  readonly restFields?: Readonly<Record<string, string | boolean>>;

  constructor(message: string, options: { errors?: string[]; details?: Record<string, unknown> } = {}) {
    super(message);
    this.name = new.target.name;
    this.errors = options.errors;
    this.details = options.details;
  }
}

export class BadRequestError extends DomainError {
  readonly code = ErrorCode.BadRequest;
  readonly restError = "bad_request";
}

export class UnauthenticatedError extends DomainError {
  readonly code = ErrorCode.Unauthenticated;
  readonly restError = "unauthorized";
  constructor(message = "Access token or API key is invalid, expired, or missing") {
    super(message);
  }
}

export class ForbiddenError extends DomainError {
  readonly code = ErrorCode.Forbidden;
  constructor(
    message: string,
    readonly restError: "insufficient_scope" | "feature_disabled" | "forbidden" = "forbidden",
  ) {
    super(message);
  }
}

export class NotFoundError extends DomainError {
  readonly code = ErrorCode.NotFound;
  readonly restError = "not_found";
  constructor(what: string) {
    super(`${what} not found`);
  }
}

/** No route answers this path: the message names what was asked for, as sent. */
export class RouteNotFoundError extends DomainError {
  readonly code = ErrorCode.NotFound;
  readonly restError = "not_found";
}

export class MethodNotAllowedError extends DomainError {
  readonly code = ErrorCode.MethodNotAllowed;
  readonly restError = "method_not_allowed";
}

export class PayloadTooLargeError extends DomainError {
  readonly code = ErrorCode.PayloadTooLarge;
  readonly restError = "payload_too_large";
}

export class ValidationError extends DomainError {
  readonly code = ErrorCode.ValidationFailed;
  readonly restError = "validation_failed";
  constructor(errors: string[]) {
    super(`Validation failed: ${errors.join(", ")}`, { errors });
  }
}

export class ConflictError extends DomainError {
  readonly code = ErrorCode.Conflict;
  readonly restError = "conflict";
}

export class RateLimitedError extends DomainError {
  readonly code = ErrorCode.RateLimited;
  readonly restError = "rate_limit_exceeded";
}

export class UpstreamUnavailableError extends DomainError {
  readonly code = ErrorCode.UpstreamUnavailable;
  readonly restError = "upstream_unavailable";
}

/**
 * The outbound guard would not send a request: the URL, or the address it resolves to (or redirects
 * to), is not one the service may reach. Comes from a URL someone supplied, so at an edge it is a 422;
 * senders log it as a refused delivery. The message names the problem without secrets (no query
 * string, no userinfo) and reads after "the URL": "must be an http or https URL".
 */
export class OutboundRefusedError extends DomainError {
  readonly code = ErrorCode.ValidationFailed;
  readonly restError = "outbound_refused";
  constructor(
    readonly reason: "url" | "scheme" | "address" | "resolve" | "redirect",
    message: string,
  ) {
    super(message, { errors: [`Url ${message}`] });
  }
}

/**
 * An allowed outbound request did not complete: no connection in time, no full answer in time, an
 * answer too large, a network error. The other side is unavailable: a 503 at an edge.
 */
export class OutboundFailedError extends DomainError {
  readonly code = ErrorCode.UpstreamUnavailable;
  readonly restError = "upstream_unavailable";
  constructor(
    readonly reason: "connect_timeout" | "timeout" | "too_large" | "network" | "aborted",
    message: string,
  ) {
    super(message);
  }
}

/** A credential sent in a URL's query string, where logs, proxies and browser history keep it. */
export class CredentialsInQueryError extends DomainError {
  readonly code = ErrorCode.BadRequest;
  readonly restError = "credentials_in_query";
}

/** A database statement ran past the statement timeout and was cancelled: the request asked for too much at once. */
export class QueryTimeoutError extends DomainError {
  readonly code = ErrorCode.QueryTimeout;
  readonly restError = "query_timeout";
  constructor() {
    super("The request took too long and was stopped; narrow it down (fewer rows, a shorter range) and try again");
  }
}

/**
 * A backend the service cannot work without (PostgreSQL, Redis) does not answer: it is restarting or
 * unreachable. The client may send the request again once it answers (a create with an external id is idempotent).
 */
export class ServiceUnavailableError extends DomainError {
  readonly code = ErrorCode.ServiceUnavailable;
  readonly restError = "service_unavailable";
  constructor() {
    super("The service is temporarily unavailable (its database is not answering); try again in a few seconds");
  }
}

/** Collects per-field messages and throws one ValidationError with all of them. */
export class ValidationErrors {
  private readonly messages: string[] = [];

  add(message: string): void {
    this.messages.push(message);
  }

  get empty(): boolean {
    return this.messages.length === 0;
  }

  throwIfAny(): void {
    if (this.messages.length > 0) throw new ValidationError(this.messages);
  }
}

/**
 * The domain meaning of an error thrown anywhere below a resolver, or null when it is a fault of ours.
 * PostgreSQL "data exceptions" (SQLSTATE class 22: a value out of range, bytes it cannot store) can
 * only come from a value a client sent, so they are validation failures, not server errors.
 */
export function asDomainError(error: unknown): DomainError | null {
  if (error instanceof DomainError) return error;
  const sqlState = (error as { parent?: { code?: unknown } } | null)?.parent?.code;
  if (typeof sqlState === "string" && sqlState.startsWith("22")) return new ValidationError(["A value could not be stored as sent"]);
  if (sqlState === "57014") return new QueryTimeoutError();
  if (isBackendUnavailable(error)) return new ServiceUnavailableError();
  if (sqlState === "23503") return vanishedReference((error as { parent: { detail?: unknown } }).parent.detail);
  return null;
}

/**
 * A row a write pointed at was deleted between the write's checks and its insert (a race, since the
 * checks passed): PostgreSQL's detail names the column, e.g. `Key (family_id, category_id)=(…) is
 * not present in table "categories".`, and the answer names it as the checks would have.
 */
function vanishedReference(detail: unknown): ValidationError {
  const columns = typeof detail === "string" ? /^Key \(([^)]*)\)/.exec(detail)?.[1].split(", ") : undefined;
  const column = columns?.filter((name) => name !== "family_id").pop();
  if (!column) return new ValidationError(["A referenced record no longer exists"]);
  const label = column.replace(/_id$/, "").replace(/_/g, " ");
  return new ValidationError([`${label.charAt(0).toUpperCase()}${label.slice(1)} not found`]);
}

/**
 * Sequelize's connection errors (refused, timed out, no connection from the pool in time) and the
 * PostgreSQL states of a server going away: class 08 (connection exception), 57P01-57P03 (the server
 * is shutting down, crashed, or still starting), 53300 (too many connections). A pg connection cut
 * mid-statement, or a pooled client pg already closed because of it, has no SQLSTATE, only its message
 * (or the socket's own code, when the server reset it or closed it under a write).
 */
const UNAVAILABLE_ERROR_NAMES = new Set([
  "SequelizeConnectionError",
  "SequelizeConnectionRefusedError",
  "SequelizeConnectionTimedOutError",
  "SequelizeConnectionAcquireTimeoutError",
  "SequelizeHostNotFoundError",
  "SequelizeHostNotReachableError",
]);
const UNAVAILABLE_SQL_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);
/** The socket to the server refused, reset or closed under a write: the server went away mid-conversation. */
const UNAVAILABLE_SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE"]);
const CUT_CONNECTION =
  /^Connection terminated|^Client has encountered a connection error|^Client was closed and is not queryable|^Connection is closed/;

export function isBackendUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== "object" || depth > 3) return false;
  const { name, parent, original, code, message } = error as {
    name?: unknown;
    parent?: unknown;
    original?: unknown;
    code?: unknown;
    message?: unknown;
  };
  if (typeof name === "string" && UNAVAILABLE_ERROR_NAMES.has(name)) return true;
  if (typeof code === "string" && (code.startsWith("08") || UNAVAILABLE_SQL_STATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code)))
    return true;
  if (typeof message === "string" && CUT_CONNECTION.test(message)) return true;
  const cause = parent ?? original;
  return cause !== undefined && isBackendUnavailable(cause, depth + 1);
}
