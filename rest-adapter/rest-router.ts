import type { GraphQLSchema } from "graphql";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { restErrorOf, type RestErrorResponse } from "../src/common/error-edges";
import { BadRequestError, DomainError, MethodNotAllowedError, RouteNotFoundError } from "../src/common/errors";
import type { RequestContext } from "../src/graphql/context";
import { canWrite, insufficientScope } from "../src/identity/actor";
import { prepareOperations, type PreparedOperation } from "./operations";
import { domainErrorOf } from "./rest-errors";
import { type RestRoute, routes as allRoutes } from "./routes";
import { buildVariables } from "./variables";

type CompiledRoute = RestRoute & { pattern: RegExp; paramNames: string[]; prepared: PreparedOperation };

export type RestContextFactory = (req: Request) => RequestContext;

function compile(route: RestRoute, prepared: PreparedOperation): CompiledRoute {
  const paramNames: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    paramNames.push(name);
    return "([^/]+)";
  });
  return { ...route, pattern: new RegExp(`^${source}/?$`), paramNames, prepared };
}

function valueAt(data: unknown, path: string[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string, unknown> | null)?.[key], data);
}

/**
 * One express handler for every /api/v1 route. Each request runs its route's pre-parsed operation
 * (compiled once by graphql-jit) against the same schema and per-request context as /graphql; REST never reaches
 * resolvers any other way.
 */
export function createRestRouter(schema: GraphQLSchema, contextOf: RestContextFactory, routes: RestRoute[] = allRoutes): RequestHandler {
  const prepared = prepareOperations(
    schema,
    routes.map((route) => route.operation),
  );
  const compiled = routes.map((route) => compile(route, prepared.get(route.operation)!));

  return async (req: Request, res: Response, next: NextFunction) => {
    const matching = compiled.filter((route) => route.pattern.test(req.path));
    if (matching.length === 0)
      return sendError(res, restErrorOf(new RouteNotFoundError(`No route matches ${req.method} ${req.originalUrl.split("?")[0]}`)));
    const route = matching.find((candidate) => candidate.method === req.method);
    if (!route) {
      res.setHeader("Allow", matching.map((candidate) => candidate.method).join(", "));
      return sendError(res, restErrorOf(new MethodNotAllowedError(`${req.method} is not allowed here`)));
    }
    try {
      await run(route, schema, req, res, contextOf(req));
    } catch (error) {
      if (error instanceof DomainError) return sendError(res, restErrorOf(error));
      next(error);
    }
  };
}

async function run(route: CompiledRoute, schema: GraphQLSchema, req: Request, res: Response, context: RequestContext): Promise<void> {
  // A read-only key is refused before its body is looked at, so it gets 403 rather than a 400 or 422.
  if (route.prepared.definition.operation === "mutation" && context.actor && !canWrite(context.actor)) throw insufficientScope();
  const match = route.pattern.exec(req.path)!;
  const params = Object.fromEntries(route.paramNames.map((name, index) => [name, decodeSegment(match[index + 1])]));
  let body: Record<string, unknown> | undefined;
  if (route.bodyKey || route.bodyAtRoot) {
    if (!req.is("application/json")) throw new BadRequestError("Content-Type must be application/json");
    const value: unknown = route.bodyKey ? (req.body as Record<string, unknown> | undefined)?.[route.bodyKey] : req.body;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new BadRequestError(
        route.bodyKey ? `param is missing or the value is empty: ${route.bodyKey}` : "Request body must be a JSON object",
      );
    }
    body = value as Record<string, unknown>;
  }

  const variableValues = buildVariables(schema, route.prepared.definition, {
    params,
    query: req.query as Record<string, unknown>,
    body,
    queryKeys: route.queryKeys,
  });

  const result = await route.prepared.run(context, variableValues);
  if (result.errors?.length) {
    const domainError = domainErrorOf(result.errors);
    if (domainError) return sendError(res, restErrorOf(domainError));
    context.logger.error(
      { errors: result.errors.map((e) => ({ message: e.message, path: e.path, cause: e.originalError })) },
      "REST operation failed",
    );
    return sendError(res, restErrorOf(null));
  }
  const status =
    route.alternateStatus && valueAt(result.data, route.alternateStatus.when) === route.alternateStatus.equals
      ? route.alternateStatus.status
      : route.status;
  if (route.message) res.status(status).json({ message: route.message });
  else if (route.resultPath) res.status(status).json(valueAt(result.data, route.resultPath));
  else res.status(status).end();
}

/** A segment with broken percent-encoding cannot name anything: it is kept as sent, so lookups answer 404, not 500. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function sendError(res: Response, { status, body }: RestErrorResponse): void {
  res.status(status).json(body);
}
