import {
  coerceInputValue,
  getNamedType,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { BadRequestError, ValidationError } from "../src/platform/common/errors";
import { MAX_PER_PAGE } from "../src/platform/common/pagination";
import { camelToSnake, snakeToCamel } from "./case";

export type RestInput = {
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** The object under the route's body key, when the route has one. */
  body?: Record<string, unknown>;
  /**
   * The whole body of a route with a body key: a scalar variable missing from the query string is read
   * from its top-level key (sure-cli sends `{"valuation": {…}, "upsert": true}`).
   */
  bodyRoot?: Record<string, unknown>;
};

/** Where one variable of an operation comes from, worked out once per route. */
type VariableSource = {
  name: string;
  type: GraphQLInputType;
  /** params: a path parameter; input: the body; object: query keys named like its fields; scalar: its own query key. */
  from: "params" | "input" | "object" | "scalar";
  /** The query key of a scalar (snake_case, or as named on a camelCase route). */
  key: string;
  /** An input object's fields with their query keys. */
  fields: Array<{ name: string; type: GraphQLInputType; key: string }>;
  /**
   * An input object none of whose query keys was sent is left out rather than given empty, when
   * leaving it out means the same: the variable is nullable and no field has a default. The resolver
   * then gets no object to convert (TypeGraphQL builds its input class field by field on every call).
   */
  omitWhenEmpty: boolean;
};

/**
 * What building a route's variables needs that its request does not change: where each variable comes
 * from and which query keys the route knows. Worked out at boot, so a request only reads its values.
 */
export type VariablePlan = {
  sources: VariableSource[];
  known: ReadonlySet<string>;
};

/** The plan of `operation` on a route whose path parameters are `paramNames`. */
export function planVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  route: {
    paramNames: readonly string[];
    queryKeys?: "camelCase";
    /** Query keys upstream's clients send that the route accepts and does not use (documented on the route). */
    ignoredQueryKeys?: string[];
  },
): VariablePlan {
  const params = Object.fromEntries(route.paramNames.map((name) => [name, ""]));
  const sources = (operation.variableDefinitions ?? []).map((definition): VariableSource => {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType;
    const named = getNamedType(type);
    const key = route.queryKeys === "camelCase" ? name : camelToSnake(name);
    const source = { name, type, key, fields: [], omitWhenEmpty: false };
    if (name in params) return { ...source, from: "params" };
    if (name === "input") return { ...source, from: "input" };
    if (isInputObjectType(named) && !isListType(type)) {
      const definitions = Object.values(named.getFields());
      const fields = definitions.map((def) => ({ name: def.name, type: def.type, key: camelToSnake(def.name) }));
      const omitWhenEmpty = !isNonNullType(type) && definitions.every((def) => def.defaultValue === undefined);
      return { ...source, from: "object", fields, omitWhenEmpty };
    }
    return { ...source, from: "scalar" };
  });
  const known = new Set([...knownQueryKeys(schema, operation, { params, queryKeys: route.queryKeys }), ...(route.ignoredQueryKeys ?? [])]);
  return { sources, known };
}

/**
 * Builds an operation's variables from a REST request, by its route's plan. A variable named like a
 * path parameter comes from the path; an `input` variable from the body; a scalar from the query key
 * of the same (snake_case) name; an input object from the query keys named like its fields. Values are
 * then coerced by their GraphQL types, and coercion problems become one 422 naming each field.
 */
export function buildVariables(plan: VariablePlan, input: RestInput): Record<string, unknown> {
  refuseUnknownQueryKeys(plan.known, input.query);
  const variables: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const { name, type, from, key, fields, omitWhenEmpty } of plan.sources) {
    let raw: unknown;
    if (from === "params") raw = input.params[name];
    else if (from === "input") raw = input.body && fromRestObject(type, input.body);
    else if (from === "object") raw = fromQueryObject(fields, input.query, omitWhenEmpty);
    else {
      raw = fromQueryValue(type, queryValue(input.query, key), key);
      if (raw === undefined && input.bodyRoot && key in input.bodyRoot && !isInputObjectType(getNamedType(type))) raw = input.bodyRoot[key];
    }
    if (raw === undefined) {
      if (isNonNullType(type)) throw new BadRequestError(`param is missing or the value is empty: ${camelToSnake(name)}`);
      continue;
    }
    variables[name] = coerceInputValue(raw, type, (path, _value, error) => {
      const field = path.filter((part): part is string => typeof part === "string").pop() ?? name;
      problems.push(`${humanize(camelToSnake(field))} ${describe(error.message)}`);
    });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return variables;
}

/**
 * The query keys a route reads: its scalar variables and the fields of its input-object variables,
 * list ones also with Rails' brackets (`tag_ids[]`).
 */
export function knownQueryKeys(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  input: { params: Record<string, string>; queryKeys?: "camelCase" },
): string[] {
  const keys: string[] = [];
  const add = (name: string, type: GraphQLInputType) => {
    const key = input.queryKeys === "camelCase" ? name : camelToSnake(name);
    keys.push(key);
    if (isListType(isNonNullType(type) ? type.ofType : type)) keys.push(`${key}[]`);
  };
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (name in input.params || name === "input") continue;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType;
    const named = getNamedType(type);
    if (isInputObjectType(named) && !isListType(type)) for (const [field, def] of Object.entries(named.getFields())) add(field, def.type);
    else add(name, type);
  }
  return keys;
}

/**
 * An unknown query key is a 400 naming it: a filter we do not apply must never pass for one we do
 * (a misspelt or unsupported filter would otherwise answer with more rows than asked for).
 */
function refuseUnknownQueryKeys(known: ReadonlySet<string>, query: Record<string, unknown>): void {
  const unknown = Object.keys(query).filter((key) => !known.has(key));
  if (unknown.length === 0) return;
  const accepted = [...known].filter((key) => !key.endsWith("[]"));
  throw new BadRequestError(
    `Unknown query parameter${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}` +
      (accepted.length ? ` (this route takes ${accepted.join(", ")})` : " (this route takes none)"),
    { details: { unknown_parameters: unknown } },
  );
}

/** Keeps the keys the input type knows (as Rails strong parameters do) and renames them to camelCase. */
function fromRestObject(type: GraphQLInputType, body: Record<string, unknown>): Record<string, unknown> {
  const inputType = getNamedType(type);
  if (!isInputObjectType(inputType)) return body;
  const fields = inputType.getFields();
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const fieldName = snakeToCamel(key);
    if (fieldName in fields) result[fieldName] = value;
  }
  return result;
}

function fromQueryObject(
  fields: VariableSource["fields"],
  query: Record<string, unknown>,
  omitWhenEmpty: boolean,
): Record<string, unknown> | undefined {
  const result: Record<string, unknown> = {};
  let given = false;
  for (const field of fields) {
    const value = fromQueryValue(field.type, queryValue(query, field.key), field.key);
    if (value !== undefined) {
      result[field.name] = value;
      given = true;
    }
  }
  return given || !omitWhenEmpty ? result : undefined;
}

/**
 * A key's values as clients spell them: `ids[]=a&ids[]=b` (Rails' brackets), `ids=a&ids=b`, or both
 * at once; all of them count.
 */
function queryValue(query: Record<string, unknown>, key: string): unknown {
  const plain = query[key];
  const bracketed = query[`${key}[]`];
  if (plain === undefined) return bracketed;
  if (bracketed === undefined) return plain;
  return [plain, bracketed].flat();
}

/**
 * A list value: every given value, each also split on commas (`account_ids=a,b` as the MCP server sends
 * it), blanks dropped. A key left empty (`tag_ids=`) is not given, as for any key; but one that holds
 * only separators (`tag_ids=,,,`) is refused: dropping it would silently widen the list to everything,
 * the opposite of the narrowing its sender meant.
 */
function listOf(value: unknown, key: string): string[] | undefined {
  const given = (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === "string");
  const items = given
    .flatMap((item) => item.split(","))
    .map((item) => item.trim())
    .filter((item) => item !== "");
  if (items.length > 0) return items;
  if (given.some((item) => item !== "")) throw new ValidationError([`${key} names no value: give at least one, or leave the key out`]);
  return undefined;
}

const INT_MAX = 2 ** 31 - 1;
const INT_MIN = -(2 ** 31);

/** Query strings are text: numbers are parsed, and non-numbers fall back to the default (docs/rest-compat.md). */
function fromQueryValue(type: GraphQLInputType, value: unknown, key: string): unknown {
  if (value === undefined || value === "") return undefined;
  if (isListType(isNonNullType(type) ? type.ofType : type)) return listOf(value, key);
  const text = Array.isArray(value) ? value[value.length - 1] : value;
  if (typeof text !== "string") return undefined;
  const named = getNamedType(type).name;
  if (named === "Int") {
    if (!/^-?\d+$/.test(text.trim())) return undefined;
    const number = Number.parseInt(text, 10);
    // Upstream's controllers (safe_per_page_param) take a page size from 1 to 100 and any other as their
    // default: per_page=500 or 0 is a page of the route's default size, not of 100 or 1.
    if (key === "per_page") return number >= 1 && number <= MAX_PER_PAGE ? number : undefined;
    // Other out-of-range numbers are clamped to GraphQL's 32-bit Int.
    return Math.min(Math.max(number, INT_MIN), INT_MAX);
  }
  if (named === "Boolean") return text === "true" || text === "1";
  return text;
}

function humanize(key: string): string {
  const words = key.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Our scalars say what is wrong in lower case ("must be a number"); graphql-js' own messages are kept. */
function describe(message: string): string {
  return /^[a-z]/.test(message) ? message : `is invalid: ${message}`;
}
