/**
 * The REST surface of /api/v1 as data. Each route names one GraphQL operation in operations/, where
 * its variables come from, which part of the result is the response body, and its success status.
 * Variables are taken from the path, then the query string, then the body (under `bodyKey`), with
 * snake_case keys turned into the GraphQL names and coerced by their GraphQL types.
 */
export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export type RestRoute = {
  method: HttpMethod;
  /** OpenAPI-style template: /transactions/{id}. */
  path: string;
  operation: string;
  summary: string;
  tag: string;
  /** The body must be an object holding this key, whose value becomes the `input` variable. */
  bodyKey?: string;
  /** The body object itself becomes the `input` variable (routes whose clients send `{"title": …}` unwrapped). */
  bodyAtRoot?: boolean;
  /** Upstream refuses any body parameter here: a non-empty body is a 422 `invalid_params` with this message (its clients send `{}`). */
  refusesParameters?: string;
  /** Path into the GraphQL result that is the response body. */
  resultPath?: string[];
  /**
   * The object at resultPath holds these fields, exactly one of them set: that one is the body (upstream's
   * POST /trades answers with a trade, a transaction or a transfer, by the type sent).
   */
  resultChoice?: string[];
  /** A fixed body instead of a result path (deletes answer with a message, as upstream does). */
  message?: string;
  /** With neither resultPath nor message the route answers with no body; its status is then 204. */
  status: number;
  /** Default page size of a paged route, for its documentation (the service applies it); 25 when unset. */
  perPageDefault?: number;
  /** Query keys upstream's clients send here that the route accepts without using them (any other unknown key is a 400). */
  ignoredQueryKeys?: string[];
  /** How query keys are spelled: snake_case as upstream's routes (default), or camelCase where the route documents that (audit-logs). */
  queryKeys?: "camelCase";
  /** A second success status chosen by the result, e.g. 200 for an idempotent replay of a create. */
  alternateStatus?: { status: number; when: string[]; equals: unknown; description: string };
};

export const API_PREFIX = "/api/v1";
