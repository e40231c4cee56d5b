import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, Kind, valueFromASTUntyped, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import { RateLimiterRes } from "rate-limiter-flexible";
import { graphqlRefusal } from "../../platform/common/error-edges";
import { RateLimitedError } from "../../platform/common/errors";
import type { Logger } from "../../platform/common/logger";
import type { Actor } from "../../platform/security/actor";
import { limiterFor, type RateLimiters } from "../http/rate-limit";
import type { RequestContext } from "./context";
import { emptyListFilterRefusal } from "./empty-list-filters";
import { checkOperation, limitsFor, measureOperation, operationRefusal } from "./operation-limits";

/** Estimated cost per rate-limit point: a request is one point, and a costly operation is charged more. */
export const COST_PER_POINT = 100;

export type CostControlOptions = {
  schema: GraphQLSchema;
  /** Upper bound of an authenticated operation's estimated cost; 0 turns the limits (and the charge) off. */
  maxCost: number;
  rateLimiters: RateLimiters | null;
  logger: Logger;
  /**
   * Cost a root field adds by what it will read, known only from data (archive manifests): called with
   * the field's arguments for each time the operation selects it (each alias), before anything runs.
   */
  dataCosts?: Readonly<Record<string, (args: Record<string, unknown>) => Promise<number>>>;
};

export type OperationRequest = {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Readonly<Record<string, unknown>> | undefined;
  actor: Actor | null;
  /** Whose rate limit the cost is charged to (`rateLimitKey`); null when limiting is off. */
  rateLimitKey: string | null;
};

/**
 * Refuses an operation before it runs when it is too deep, too aliased, introspects too often, costs
 * too much for its caller; then charges its cost to the caller's rate limit. One rule for HTTP (the Apollo plugin below) and WebSocket (app.ts).
 */
export class CostControl {
  constructor(private readonly options: CostControlOptions) {}

  get enabled(): boolean {
    return this.options.maxCost > 0;
  }

  async refusal(request: OperationRequest): Promise<GraphQLError | null> {
    // Not a cost, but the same moment (after validation, before execution, HTTP and WebSocket alike).
    const emptyFilter = emptyListFilterRefusal(this.options.schema, request.document, request.operation, request.variables);
    if (emptyFilter) return emptyFilter;
    if (!this.enabled) return null;
    const measure = measureOperation(this.options.schema, request.document, request.operation, request.variables);
    if (request.actor) measure.cost += await this.dataCost(request);
    const refused = checkOperation(measure, limitsFor(request.actor !== null, this.options.maxCost));
    if (refused) return refused;
    return this.charge(request.rateLimitKey, Math.floor(measure.cost / COST_PER_POINT));
  }

  /** What the operation's root fields will read, as cost (dataCosts); a field whose arguments cannot be read costs nothing here. */
  private async dataCost(request: OperationRequest): Promise<number> {
    const costs = this.options.dataCosts;
    if (!costs) return 0;
    let total = 0;
    for (const selection of request.operation.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD || !costs[selection.name.value]) continue;
      const args = Object.fromEntries(
        (selection.arguments ?? []).map((argument) => [argument.name.value, valueFromASTUntyped(argument.value, request.variables ?? {})]),
      );
      total += Math.max(0, Math.ceil(await costs[selection.name.value](args)));
    }
    return total;
  }

  private async charge(key: string | null, points: number): Promise<GraphQLError | null> {
    const limiters = this.options.rateLimiters;
    if (!limiters || key === null || points <= 0) return null;
    const limiter = limiterFor(limiters, key);
    try {
      await limiter.consume(key, points);
      return null;
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) {
        this.options.logger.warn({ err: rejection }, "rate limiter unavailable; operation let through");
        return null;
      }
      const resetInSeconds = Math.ceil(rejection.msBeforeNext / 1000);
      const error = new RateLimitedError(`Rate limit exceeded by this operation's cost. Try again in ${resetInSeconds} seconds.`, {
        details: { limit: limiter.points, reset_in_seconds: resetInSeconds },
      });
      return graphqlRefusal(error, { headers: { "retry-after": String(resetInSeconds) } });
    }
  }

  /** The Apollo side: runs after validation and before execution. */
  plugin(): ApolloServerPlugin<RequestContext> {
    return {
      requestDidStart: async () => ({
        didResolveOperation: async ({ document, operation, request, contextValue }) => {
          if (!operation) return;
          if (operation.operation === "subscription")
            throw operationRefusal(
              "Subscriptions run over WebSocket (graphql-ws) on this same path, not over HTTP",
              "SUBSCRIPTION_OVER_HTTP",
            );
          const refused = await this.refusal({
            document,
            operation,
            variables: request.variables,
            actor: contextValue.actor,
            rateLimitKey: contextValue.rateLimitKey,
          });
          if (refused) throw refused;
        },
      }),
    };
  }
}
