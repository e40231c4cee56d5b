import type { ExecutionResult, GraphQLSchema } from "graphql";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { BadRequestError, DomainError, MethodNotAllowedError, RouteNotFoundError } from "../src/platform/common/errors";
import type { RequestContext } from "../src/transports/graphql/context";
import { canWrite, insufficientScope } from "../src/platform/security/actor";
import { prepareOperations, type PreparedOperation } from "./operations";
import { sendError } from "../src/transports/http/respond";
import { domainErrorOf, InvalidParamsError } from "./rest-errors";
import { API_PREFIX, importUploadRoutes, type RestRoute, routes as allRoutes } from "./routes";
import { planQuery, type QueryPlan } from "./query-plan";
import { buildVariables, planVariables, type VariablePlan } from "./variables";

type RoutePattern = { pattern: RegExp; paramNames: string[] };
type CompiledRoute = RestRoute &
  RoutePattern & {
    prepared: PreparedOperation;
    variables: VariablePlan;
    /** A read whose body is its root field's value answered without a GraphQL execution (query-plan.ts); null: the compiled operation answers. */
    plan: QueryPlan | null;
  };

export type RestContextFactory = (req: Request) => RequestContext;

function patternOf(path: string): RoutePattern {
  const paramNames: string[] = [];
  const source = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    paramNames.push(name);
    return "([^/]+)";
  });
  return { pattern: new RegExp(`^${source}/?$`), paramNames };
}

/** PUT is PATCH, as upstream's Rails resources route it (sure-cli's `propose rules --apply` sends PUT). */
/** PUT is PATCH's alias; HEAD is served wherever GET is: the same operation and headers, no body (express sends none for HEAD). */
function routeMethodOf(method: string): string {
  if (method === "HEAD") return "GET";
  return method === "PUT" ? "PATCH" : method;
}

type Resolution = { kind: "route"; index: number } | { kind: "error"; error: DomainError; allow?: string };

/** A method and path template: a route of the table, or an upload served beside it. */
type Routed = { method: string; path: string };

/** A route table grouped by the path's first segment, so a request tests only the few routes that can match it. */
type RouteTable<R extends RoutePattern & Routed> = { routes: R[]; byFirstSegment: Map<string, number[]>; anyFirst: number[] };

function firstSegmentOf(path: string): string {
  const end = path.indexOf("/", 1);
  return end === -1 ? path.slice(1) : path.slice(1, end);
}

function routeTable<R extends RoutePattern & Routed>(routes: R[]): RouteTable<R> {
  const byFirstSegment = new Map<string, number[]>();
  const anyFirst: number[] = [];
  routes.forEach((route, index) => {
    const first = firstSegmentOf(route.path);
    if (first.includes("{")) anyFirst.push(index);
    else byFirstSegment.set(first, [...(byFirstSegment.get(first) ?? []), index]);
  });
  // A route whose first segment is a parameter can match any path: it joins every group, in table order.
  for (const [first, indexes] of byFirstSegment)
    byFirstSegment.set(
      first,
      [...indexes, ...anyFirst].sort((a, b) => a - b),
    );
  return { routes, byFirstSegment, anyFirst };
}

/**
 * The route whose pattern and method match; else 404, or 405 naming the methods the path has. A
 * literal path (/imports/preflight) is that route, never an id of a templated one (/imports/{id}).
 */
function resolve<R extends RoutePattern & Routed>(table: RouteTable<R>, method: string, path: string, originalUrl: string): Resolution {
  const group = table.byFirstSegment.get(firstSegmentOf(path)) ?? table.anyFirst;
  const candidates = group.filter((index) => table.routes[index].pattern.test(path));
  const literal = candidates.filter((index) => !table.routes[index].path.includes("{"));
  const matching = literal.length > 0 ? literal : candidates;
  if (matching.length === 0)
    return { kind: "error", error: new RouteNotFoundError(`No route matches ${method} ${originalUrl.split("?")[0]}`) };
  const wanted = routeMethodOf(method);
  const found = matching.find((index) => table.routes[index].method === wanted);
  if (found !== undefined) return { kind: "route", index: found };
  const aliases: Record<string, string[]> = { GET: ["GET", "HEAD"], PATCH: ["PATCH", "PUT"] };
  const methods = matching.flatMap((index) => aliases[table.routes[index].method] ?? [table.routes[index].method]);
  return { kind: "error", error: new MethodNotAllowedError(`${method} is not allowed here`), allow: methods.join(", ") };
}

/** The matched route's template, for the request metrics: `/api/v1/transactions/{id}`, never the raw path. */
function nameRoute(res: Response, route: Routed): void {
  res.locals.route = `${API_PREFIX}${route.path}`;
}

/** Answers a request no route serves: 404, or 405 with the Allow header. */
function refuse(req: Request, res: Response, resolution: Extract<Resolution, { kind: "error" }>): void {
  if (resolution.allow) res.setHeader("Allow", resolution.allow);
  sendError(req, res, resolution.error);
}

/**
 * Answers requests no route serves (404, or 405 with Allow) before authentication, as upstream does:
 * a client probing a route with no or a wrong key learns the route is missing, not that its key is bad.
 * The uploads served before it (POST /imports, /imports/preflight) count as routes: another method on
 * them is a 405 whose Allow names POST.
 */
export function unknownRouteGuard(routes: RestRoute[] = allRoutes, uploads: Routed[] = importUploadRoutes): RequestHandler {
  const table = routeTable<Routed & RoutePattern>([...routes, ...uploads].map((route) => ({ ...route, ...patternOf(route.path) })));
  return (req, res, next) => {
    const resolution = resolve(table, req.method, req.path, req.originalUrl);
    if (resolution.kind === "route") {
      nameRoute(res, table.routes[resolution.index]);
      // The REST router below serves the same routes (the uploads come first, after the table's): it
      // takes this answer instead of resolving again.
      if (resolution.index < routes.length) res.locals.restRoute = { routes, index: resolution.index };
      return next();
    }
    refuse(req, res, resolution);
  };
}

declare module "express-serve-static-core" {
  interface Locals {
    /** The route unknownRouteGuard resolved, in the route list it was given. */
    restRoute?: { routes: RestRoute[]; index: number };
  }
}

function valueAt(data: unknown, path: string[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string, unknown> | null)?.[key], data);
}

/**
 * One express handler for every /api/v1 route. Each request runs its route's pre-parsed operation
 * (compiled once by graphql-jit) against the same schema and per-request context as /graphql; a read
 * whose result is plain data calls the operation's root field's resolver itself and shapes the answer
 * from the same selection (query-plan.ts). REST never reaches resolvers any other way.
 */
export function createRestRouter(
  schema: GraphQLSchema,
  contextOf: RestContextFactory,
  parseBody: RequestHandler,
  routes: RestRoute[] = allRoutes,
): RequestHandler {
  const prepared = prepareOperations(
    schema,
    routes.map((route) => route.operation),
  );
  const table = routeTable<CompiledRoute>(
    routes.map((route) => {
      const pattern = patternOf(route.path);
      const operation = prepared.get(route.operation)!;
      return {
        ...route,
        ...pattern,
        prepared: operation,
        variables: planVariables(schema, operation.definition, { ...route, ...pattern }),
        plan: route.message || route.alternateStatus ? null : planQuery(schema, operation.document, operation.definition, route.resultPath),
      };
    }),
  );

  return async (req: Request, res: Response, next: NextFunction) => {
    const guarded = res.locals.restRoute;
    const resolution: Resolution =
      guarded?.routes === routes ? { kind: "route", index: guarded.index } : resolve(table, req.method, req.path, req.originalUrl);
    if (resolution.kind === "error") return refuse(req, res, resolution);
    const route = table.routes[resolution.index];
    nameRoute(res, route);
    try {
      const context = contextOf(req);
      // A read-only key is refused before its body is even parsed: 403, not the 400 of a body that does not parse, as upstream.
      if (route.prepared.definition.operation === "mutation" && context.actor && !canWrite(context.actor)) throw insufficientScope();
      if (hasBody(req))
        await new Promise<void>((resolve, reject) => parseBody(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
      await run(route, req, res, context);
    } catch (error) {
      if (error instanceof DomainError) return sendError(req, res, error);
      next(error);
    }
  };
}

async function run(route: CompiledRoute, req: Request, res: Response, context: RequestContext): Promise<void> {
  const match = route.pattern.exec(req.path)!;
  const params = Object.fromEntries(route.paramNames.map((name, index) => [name, decodeSegment(match[index + 1])]));
  let body: Record<string, unknown> | undefined;
  if (route.refusesParameters && typeof req.body === "object" && req.body !== null && Object.keys(req.body as object).length > 0)
    throw new InvalidParamsError(route.refusesParameters);
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

  const variableValues = buildVariables(route.variables, {
    params,
    query: req.query as Record<string, unknown>,
    body,
    bodyRoot: route.bodyKey ? (req.body as Record<string, unknown>) : undefined,
  });

  const planned = route.plan ? await route.plan.run(context, variableValues) : "unplanned";
  if (typeof planned === "object" && "body" in planned) {
    // As res.json() sends what it stringified.
    if (!res.get("Content-Type")) res.set("Content-Type", "application/json");
    res.status(route.status).send(planned.body);
    return;
  }
  const result: ExecutionResult = planned === "unplanned" ? await route.prepared.run(context, variableValues) : planned;
  if (result.errors?.length) {
    const domainError = domainErrorOf(result.errors);
    if (domainError) return sendError(req, res, domainError);
    context.logger.error(
      { errors: result.errors.map((e) => ({ message: e.message, path: e.path, cause: e.originalError })) },
      "REST operation failed",
    );
    return sendError(req, res, null);
  }
  const status =
    route.alternateStatus && valueAt(result.data, route.alternateStatus.when) === route.alternateStatus.equals
      ? route.alternateStatus.status
      : route.status;
  if (route.message) res.status(status).json({ message: route.message });
  else if (route.resultPath && route.resultChoice) {
    const choices = valueAt(result.data, route.resultPath) as Record<string, unknown>;
    res.status(status).json(route.resultChoice.map((key) => choices[key]).find((value) => value !== null && value !== undefined));
  } else if (route.resultPath) res.status(status).json(valueAt(result.data, route.resultPath));
  else res.status(status).end();
}

/**
 * Whether a body follows the headers, as the body parser decides it (type-is's hasBody): one that does
 * not would only find out that nothing is there, and every GET a client sends has none.
 */
function hasBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || !Number.isNaN(Number(req.headers["content-length"]));
}

/** A segment with broken percent-encoding cannot name anything: it is kept as sent, so lookups answer 404, not 500. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
