import type { GraphQLError } from "graphql";
import { asDomainError, type DomainError } from "../src/platform/common/errors";

/** The first domain error among a GraphQL result's errors, or null when the failure is unexpected. */
export function domainErrorOf(errors: readonly GraphQLError[]): DomainError | null {
  for (const error of errors) {
    const domainError = asDomainError(error.originalError);
    if (domainError) return domainError;
  }
  return null;
}
