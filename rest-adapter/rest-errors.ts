import type { GraphQLError } from "graphql";
import { asDomainError, type DomainError, ErrorCode } from "../src/common/errors";

export type RestErrorBody = { error: string; message: string; errors?: string[]; details?: Record<string, unknown> };

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.ValidationFailed]: 422,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.UpstreamUnavailable]: 503,
  [ErrorCode.QueryTimeout]: 503,
};

export const INTERNAL_ERROR: RestErrorBody = { error: "internal_server_error", message: "An unexpected error occurred" };

export function restError(status: number, error: string, message: string): { status: number; body: RestErrorBody } {
  return { status, body: { error, message } };
}

export function fromDomainError(error: DomainError): { status: number; body: RestErrorBody } {
  const body: RestErrorBody = { error: error.restError, message: error.message };
  if (error.errors) body.errors = error.errors;
  if (error.details) body.details = error.details;
  return { status: STATUS_BY_CODE[error.code], body };
}

/** The first domain error among a GraphQL result's errors, or null when the failure is unexpected. */
export function domainErrorOf(errors: readonly GraphQLError[]): DomainError | null {
  for (const error of errors) {
    const domainError = asDomainError(error.originalError);
    if (domainError) return domainError;
  }
  return null;
}
