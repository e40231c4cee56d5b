import {
  type GraphQLError,
  type FieldNode,
  type FragmentSpreadNode,
  type InlineFragmentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type GraphQLCompositeType,
  type ValueNode,
  type DocumentNode,
} from "graphql";
import { isPreloadedList } from "./cost-hints";
import { graphqlRefusal } from "../../platform/common/error-edges";
import { BadRequestError } from "../../platform/common/errors";

/**
 * What an operation will cost before it runs, so a client cannot make the service do unbounded work
 * with one small document: nesting depth, aliases, introspection walks and an estimate of the fields
 * it resolves. A list multiplies the cost of what it selects by its page size (its `first`, `limit` or
 * `perPage` argument, else the argument's default, else `DEFAULT_PAGE_SIZE`); a page's own item list
 * is not counted twice. Introspection has a fixed price: its size depends on the schema, not on the query.
 *
 * The project's own validation rather than a library's: the limits depend on who asks (an anonymous
 * client may do little more than introspect once), and the estimate is charged to the caller's rate limit.
 */
export type OperationMeasure = {
  depth: number;
  aliases: number;
  introspections: number;
  /** Whether a type's fields are asked for again below another type's fields (`fields { type { fields } }`): each level multiplies the answer. */
  recursiveIntrospection: boolean;
  cost: number;
};

export type OperationLimits = { maxDepth: number; maxAliases: number; maxIntrospections: number; maxCost: number };

/** Tokens in one document (graphql's parser stops counting there), for everyone: it bounds parsing and validation. */
export const MAX_TOKENS = 5000;
const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 1000;
const UNPAGED_LIST_SIZE = 10;
const INTROSPECTION_COST = { __schema: 500, __type: 50 } as const;
const PAGE_SIZE_ARGUMENTS = new Set(["first", "limit", "perPage"]);
/** The fields of `__Type` that list other types' members: selecting them at two levels of one path is recursion. */
const TYPE_EXPANSIONS = new Set(["fields", "inputFields", "interfaces", "possibleTypes", "enumValues"]);

/**
 * Anonymous clients can only introspect (every other field needs credentials), so they get one walk of
 * the schema (Apollo Sandbox's or GraphiQL's introspection query is about depth 13) and little else.
 * Authenticated clients get room for the REST layer's own operations sent as they are: upstream's
 * balance row alone has 30 money keys (each figure formatted and in cents), all aliases here; the cost
 * estimate, not the alias count, is what bounds the work of a document.
 */
export function limitsFor(authenticated: boolean, maxCost: number): OperationLimits {
  return authenticated
    ? { maxDepth: 15, maxAliases: 40, maxIntrospections: 1, maxCost }
    : { maxDepth: 15, maxAliases: 5, maxIntrospections: 1, maxCost: Math.min(maxCost, 1000) };
}

/** A refusal before execution, with a code per limit; a bad request at the edge. */
export function operationRefusal(message: string, code: string): GraphQLError {
  return graphqlRefusal(new BadRequestError(message), { graphqlCode: code });
}

/** The first limit the operation exceeds, as a GraphQL error, or null. */
export function checkOperation(measure: OperationMeasure, limits: OperationLimits): GraphQLError | null {
  if (measure.depth > limits.maxDepth)
    return operationRefusal(`Query is nested ${measure.depth} levels deep; at most ${limits.maxDepth} are allowed`, "QUERY_TOO_DEEP");
  if (measure.aliases > limits.maxAliases)
    return operationRefusal(`Query uses ${measure.aliases} aliases; at most ${limits.maxAliases} are allowed`, "TOO_MANY_ALIASES");
  if (measure.recursiveIntrospection)
    return operationRefusal(
      "Query asks for a type's fields inside another type's fields; introspect one level at a time",
      "QUERY_TOO_DEEP",
    );
  if (measure.introspections > limits.maxIntrospections)
    return operationRefusal(
      `Query walks the whole schema (__schema) ${measure.introspections} times; at most ${limits.maxIntrospections} is allowed`,
      "TOO_MANY_INTROSPECTIONS",
    );
  if (measure.cost > limits.maxCost)
    return operationRefusal(`Query is estimated to cost ${measure.cost}; at most ${limits.maxCost} is allowed`, "QUERY_TOO_COSTLY");
  return null;
}

/** Measures a validated operation (validation has ruled out fragment cycles and unknown fields). */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | undefined,
): OperationMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const root = schema.getRootType(operation.operation);
  const measure: OperationMeasure = { depth: 0, aliases: 0, introspections: 0, recursiveIntrospection: false, cost: 0 };
  if (!root) return measure;
  const walker = new Walker(schema, fragments, variables ?? {}, measure);
  measure.cost = walker.selectionCost(operation.selectionSet, root, 1, false, 0);
  return measure;
}

class Walker {
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Map<string, FragmentDefinitionNode>,
    private readonly variables: Readonly<Record<string, unknown>>,
    private readonly measure: OperationMeasure,
  ) {}

  /**
   * Cost of a selection set on `type`, at nesting `depth`; `paged` when its parent already counted a
   * page; `expansions` counts the `__Type`s above it on this path that list their members.
   */
  selectionCost(selectionSet: SelectionSetNode, type: GraphQLCompositeType, depth: number, paged: boolean, expansions: number): number {
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) cost += this.fieldCost(selection, type, depth, paged, expansions);
      else {
        const fragment = this.fragmentOf(selection);
        if (!fragment) continue;
        const condition = fragment.typeCondition ? fragment.typeCondition.name.value : undefined;
        cost += this.selectionCost(fragment.selectionSet, this.typeNamed(condition) ?? type, depth, paged, expansions);
      }
    }
    return cost;
  }

  private fieldCost(node: FieldNode, parent: GraphQLCompositeType, depth: number, paged: boolean, expansions: number): number {
    const name = node.name.value;
    if (node.alias) this.measure.aliases += 1;
    this.measure.depth = Math.max(this.measure.depth, depth);
    if (name === "__typename") return 0;
    const field = name === "__schema" || name === "__type" ? undefined : fieldOf(parent, name);
    const childType =
      name === "__schema"
        ? this.schema.getType("__Schema")
        : name === "__type"
          ? this.schema.getType("__Type")
          : field && getNamedType(field.type);
    if (!node.selectionSet || !childType || !isCompositeType(childType)) return 1;
    let below = expansions;
    if (childType.name === "__Type" && this.expands(node.selectionSet)) {
      below += 1;
      if (below > 1) this.measure.recursiveIntrospection = true;
    }
    if (name === "__schema" || name === "__type") {
      // Walked for depth, aliases and recursion; priced as a whole. Only `__schema` walks the whole schema.
      if (name === "__schema") this.measure.introspections += 1;
      this.selectionCost(node.selectionSet, childType, depth + 1, true, below);
      return INTROSPECTION_COST[name];
    }
    const pageSize = this.pageSize(node, field!);
    const isList = isListType(getNullableType(field!.type));
    const multiplier = pageSize ?? (isList && !paged && !isPreloadedList(field!.extensions) ? UNPAGED_LIST_SIZE : 1);
    return 1 + multiplier * this.selectionCost(node.selectionSet, childType, depth + 1, pageSize !== undefined, below);
  }

  /** Whether a selection on `__Type` (fragments included) lists the type's members. */
  private expands(selectionSet: SelectionSetNode, seen = new Set<string>()): boolean {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (TYPE_EXPANSIONS.has(selection.name.value)) return true;
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        if (seen.has(selection.name.value)) continue;
        seen.add(selection.name.value);
      }
      const fragment = this.fragmentOf(selection);
      if (fragment && this.expands(fragment.selectionSet, seen)) return true;
    }
    return false;
  }

  private fragmentOf(selection: InlineFragmentNode | FragmentSpreadNode): InlineFragmentNode | FragmentDefinitionNode | undefined {
    return selection.kind === Kind.INLINE_FRAGMENT ? selection : this.fragments.get(selection.name.value);
  }

  /** The page size a field asks for, or undefined when it has no page-size argument. */
  private pageSize(node: FieldNode, field: GraphQLField<unknown, unknown>): number | undefined {
    const argument = field.args.find((candidate) => PAGE_SIZE_ARGUMENTS.has(candidate.name));
    if (!argument) return undefined;
    const given = node.arguments?.find((candidate) => candidate.name.value === argument.name);
    const value = given ? this.valueOf(given.value) : undefined;
    const size = typeof value === "number" ? value : typeof argument.defaultValue === "number" ? argument.defaultValue : DEFAULT_PAGE_SIZE;
    return Math.min(Math.max(Math.trunc(size), 1), MAX_PAGE_SIZE);
  }

  private valueOf(node: ValueNode): unknown {
    if (node.kind === Kind.VARIABLE) return this.variables[node.name.value];
    if (node.kind === Kind.INT) return Number(node.value);
    return undefined;
  }

  private typeNamed(name: string | undefined): GraphQLCompositeType | undefined {
    const type = name ? this.schema.getType(name) : undefined;
    return type && isCompositeType(type) ? type : undefined;
  }
}

function fieldOf(parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}
