import {
  BREAK,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLString,
  getArgumentValues,
  getNullableType,
  getVariableValues,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  locatedError,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLField,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from "graphql";

/**
 * What a planned query answers: its response body, already JSON; or the errors its root field raised,
 * as a GraphQL execution reports them; or `unplanned` when the request strays from what the plan
 * covers (a variable that does not coerce, a value GraphQL would reject or convert: null in a non-null
 * field, a promise, a leaf its scalar refuses), which the compiled operation then answers in full,
 * reading the root field again (a query's root field is a read) and reporting GraphQL's own error.
 */
export type PlanOutcome = { body: string } | { errors: readonly GraphQLError[] } | "unplanned";

export type QueryPlan = { run(context: unknown, variables: Record<string, unknown>): Promise<PlanOutcome> };

/** A value the plan does not write the way GraphQL would: the request is answered by the compiled operation. */
class Unplanned extends Error {}
const UNPLANNED = new Unplanned();

function unplanned(): never {
  throw UNPLANNED;
}

/**
 * Gives a non-null value of one output type as graphql-jit's result holds it: the same keys in the
 * same order, every leaf serialised.
 */
type Shaper = (value: unknown) => unknown;

/** A selected field: its response key, the property it reads, its type and the shaper of its non-null values. */
type PlannedField = { key: string; property: string; type: GraphQLOutputType; shape: Shaper };

type Fragments = Record<string, FragmentDefinitionNode>;

/**
 * A query route's operation run without a GraphQL execution: its one root field's resolver is called
 * as an execution calls it (same arguments, context and resolve info, so the field's access rule,
 * TypeGraphQL's argument handling and the resolver's own read-ahead all run), and the result is shaped
 * by functions generated once from the selection (one object literal per selection set, each leaf
 * serialised as GraphQL serialises it), then stringified. graphql-jit's execution does the same shaping
 * with error paths, promise checks and non-null bookkeeping around every field.
 *
 * Only what reads the result as plain data is planned: every type below the root field is an object
 * type whose selected fields have no resolver of their own (simpleResolvers, so GraphQL reads the
 * property), with no abstract types, directives or isTypeOf checks. Anything else gets no plan (null)
 * and the route runs its compiled operation.
 */
export function planQuery(
  schema: GraphQLSchema,
  document: DocumentNode,
  definition: OperationDefinitionNode,
  responsePath: readonly string[] | undefined,
): QueryPlan | null {
  const queryType = schema.getQueryType();
  if (definition.operation !== "query" || !queryType || !responsePath || responsePath.length !== 1) return null;
  if (hasDirectives(document)) return null;
  const fragments: Fragments = Object.fromEntries(
    document.definitions
      .filter((node): node is FragmentDefinitionNode => node.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
  const roots = collectFields(queryType, [definition.selectionSet], fragments);
  if (!roots || roots.size !== 1) return null;
  const [[responseKey, fieldNodes]] = [...roots];
  if (responseKey !== responsePath[0]) return null;
  const field = queryType.getFields()[fieldNodes[0].name.value];
  if (!field?.resolve) return null;
  const valueShaper = shaperOf(field.type, fieldNodes, fragments);
  if (!valueShaper) return null;
  const shape = orNull(field.type, valueShaper);
  const resolve = field.resolve;
  const variableDefinitions = definition.variableDefinitions ?? [];
  const infoOf = (variableValues: Record<string, unknown>): GraphQLResolveInfo => ({
    fieldName: field.name,
    fieldNodes,
    returnType: field.type,
    parentType: queryType,
    path: { prev: undefined, key: responseKey, typename: queryType.name },
    schema,
    fragments,
    rootValue: undefined,
    operation: definition,
    variableValues,
  });

  return {
    async run(context, variables) {
      const coerced = getVariableValues(schema, variableDefinitions, variables);
      if (coerced.errors) return "unplanned";
      const info = infoOf(coerced.coerced);
      let value: unknown;
      try {
        const args = argumentsOf(field, fieldNodes[0], coerced.coerced);
        value = await resolve(undefined, args, context, info);
      } catch (error) {
        return { errors: [locatedError(error, fieldNodes, [responseKey])] };
      }
      try {
        return { body: responseJson(shape(value)) };
      } catch (error) {
        if (error instanceof Unplanned) return "unplanned";
        throw error;
      }
    },
  };
}

/** The body as res.json() writes it. Its own function so the benchmark's CPU profile names serialisation apart from shaping. */
function responseJson(shaped: unknown): string {
  return JSON.stringify(shaped);
}

/** The root field's arguments as an execution gives them; one that does not coerce is left to the compiled operation. */
function argumentsOf(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: Record<string, unknown>): Record<string, unknown> {
  try {
    return getArgumentValues(field, node, variables);
  } catch {
    return unplanned();
  }
}

/**
 * The shaper of a field's value of `type`, selected by `nodes`; null when the selection holds anything
 * the plan does not cover.
 */
function shaperOf(type: GraphQLOutputType, nodes: readonly FieldNode[], fragments: Fragments): Shaper | null {
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const item = shaperOf(nullable.ofType, nodes, fragments);
    if (!item) return null;
    const shapeItem = orNull(nullable.ofType, item);
    return (value) => {
      if (!Array.isArray(value)) return unplanned();
      const items = new Array<unknown>(value.length);
      for (let index = 0; index < value.length; index++) items[index] = shapeItem(value[index]);
      return items;
    };
  }
  if (isLeafType(nullable)) return leafShaper(nullable);
  if (!isObjectType(nullable) || nullable.isTypeOf) return null;
  const fields = plannedFields(
    nullable,
    nodes.map((node) => node.selectionSet).filter((set): set is SelectionSetNode => set !== undefined),
    fragments,
  );
  return fields && objectShaper(fields);
}

/**
 * One object literal per selection set, generated once: every object it gives has the same keys in the
 * same order, which V8 builds and JSON.stringify walks faster than objects filled key by key. The keys
 * and property names come from the operation's own text (JSON-quoted); the values from the field shapers.
 */
function objectShaper(fields: PlannedField[]): Shaper {
  const entries = fields.map(
    (field, index) => `${JSON.stringify(field.key)}: shapers[${index}](source[${JSON.stringify(field.property)}])`,
  );
  const build = new Function("shapers", `return (source) => ({ ${entries.join(", ")} });`) as (shapers: Shaper[]) => Shaper;
  const literal = build(fields.map((field) => orNull(field.type, field.shape)));
  return (value) => (typeof value !== "object" || isThenable(value as object) ? unplanned() : literal(value));
}

function plannedFields(type: GraphQLObjectType, sets: readonly SelectionSetNode[], fragments: Fragments): PlannedField[] | null {
  const collected = collectFields(type, sets, fragments);
  if (!collected) return null;
  const planned: PlannedField[] = [];
  for (const [key, nodes] of collected) {
    // As a literal's key it would set the prototype instead (GraphQL reserves names starting with __).
    if (key === "__proto__") return null;
    const name = nodes[0].name.value;
    if (name === "__typename") {
      planned.push({ key, property: name, type: new GraphQLNonNull(GraphQLString), shape: () => type.name });
      continue;
    }
    const field = type.getFields()[name];
    // A field with its own resolver (a field resolver, middleware or field-level authorization) is
    // not a property read: the compiled operation runs it.
    if (!field || field.resolve) return null;
    const shape = shaperOf(field.type, nodes, fragments);
    if (!shape) return null;
    planned.push({ key, property: name, type: field.type, shape });
  }
  return planned;
}

/** A field of `type` holding null or undefined gives null where the type allows it; GraphQL's error for a non-null one is the compiled operation's to report. */
function orNull(type: GraphQLOutputType, shape: Shaper): Shaper {
  const required = isNonNullType(type);
  return (value) => {
    if (value === null || value === undefined) return required ? unplanned() : null;
    // GraphQL's default resolver would call it.
    if (typeof value === "function") return unplanned();
    return shape(value);
  };
}

/**
 * A scalar or enum: its own serialize(), as GraphQL applies it. graphql's String, ID, Boolean, Int and
 * Float give back a value of their own kind unchanged, so one is kept without the call. A promise, or
 * serialize giving nothing or failing, is left to GraphQL.
 */
function leafShaper(type: GraphQLLeafType): Shaper {
  const serialized: Shaper = (value) => {
    if (typeof value === "object" && isThenable(value)) return unplanned();
    let output: unknown;
    try {
      output = type.serialize(value);
    } catch {
      return unplanned();
    }
    return output === null || output === undefined ? unplanned() : output;
  };
  if (type === GraphQLString || type === GraphQLID) return (value) => (typeof value === "string" ? value : serialized(value));
  if (type === GraphQLBoolean) return (value) => (typeof value === "boolean" ? value : serialized(value));
  if (type === GraphQLInt)
    return (value) =>
      typeof value === "number" && Number.isInteger(value) && value <= INT_MAX && value >= INT_MIN ? value : serialized(value);
  if (type === GraphQLFloat) return (value) => (typeof value === "number" && Number.isFinite(value) ? value : serialized(value));
  return serialized;
}

const INT_MAX = 2 ** 31 - 1;
const INT_MIN = -(2 ** 31);

function isThenable(value: object | null): boolean {
  return value !== null && typeof (value as { then?: unknown }).then === "function";
}

/**
 * The fields a selection asks of `type`, by response key in the order GraphQL answers them (first
 * appearance, the same key's nodes merged), through fragments on that very type; null when a fragment
 * names another type (an abstract selection).
 */
function collectFields(type: GraphQLObjectType, sets: readonly SelectionSetNode[], fragments: Fragments): Map<string, FieldNode[]> | null {
  const fields = new Map<string, FieldNode[]>();
  const walk = (set: SelectionSetNode): boolean => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        fields.set(key, [...(fields.get(key) ?? []), selection]);
        continue;
      }
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments[selection.name.value];
      if (!fragment) return false;
      if (fragment.typeCondition && fragment.typeCondition.name.value !== type.name) return false;
      if (!walk(fragment.selectionSet)) return false;
    }
    return true;
  };
  for (const set of sets) if (!walk(set)) return null;
  return fields;
}

/** Whether any node of the document carries a directive (@skip, @include or another): the plan evaluates none. */
function hasDirectives(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive() {
      found = true;
      return BREAK;
    },
  });
  return found;
}
