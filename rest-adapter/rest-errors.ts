import type { GraphQLError } from "graphql";
import { asDomainError, DomainError, ErrorCode } from "../src/platform/common/errors";

/** A parameter sent to a route that takes none: upstream's 422 `invalid_params` (FamilyExportsController#create). */
export class InvalidParamsError extends DomainError {
  readonly code = ErrorCode.ValidationFailed;
  readonly restError = "invalid_params";
}

/** The first domain error among a GraphQL result's errors, or null when the failure is unexpected. */
export function domainErrorOf(errors: readonly GraphQLError[]): DomainError | null {
  for (const error of errors) {
    const domainError = asDomainError(error.originalError);
    if (domainError) return domainError;
  }
  return null;
}
