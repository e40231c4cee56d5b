import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { graphqlExtensionsOf, INTERNAL_GRAPHQL_CODE } from "../../platform/common/error-edges";
import { asDomainError, ErrorCode } from "../../platform/common/errors";
import type { Logger } from "../../platform/common/logger";

/**
 * Renders errors for GraphQL clients: domain errors keep their message and get `extensions.code`
 * (plus `restError` and field `errors`), GraphQL's own request errors pass through, and anything
 * unexpected becomes a bare INTERNAL_SERVER_ERROR after being logged here, on the server.
 */
export function formatGraphQLError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? error.originalError : error;
    const domainError = asDomainError(original);
    if (domainError) {
      // The client gets a 503 to retry; the operator needs to know why.
      if (domainError.code === ErrorCode.ServiceUnavailable)
        logger.warn({ err: original }, "database unavailable during a GraphQL operation");
      return {
        message: domainError.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: graphqlExtensionsOf(domainError),
      };
    }
    if (error instanceof GraphQLError && !original) return formatted;
    if (original instanceof GraphQLError) return formatted;
    logger.error({ err: original }, "unexpected error while executing GraphQL");
    return { message: "Internal server error", path: formatted.path, extensions: { code: INTERNAL_GRAPHQL_CODE } };
  };
}
