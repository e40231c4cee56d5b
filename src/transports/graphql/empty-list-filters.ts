import {
  type DocumentNode,
  getArgumentValues,
  getNullableType,
  getVariableValues,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  isInputObjectType,
  isListType,
  Kind,
  type OperationDefinitionNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from "graphql";
import { graphqlRefusal } from "../../platform/common/error-edges";
import { ValidationError } from "../../platform/common/errors";

/**
 * List filters that name nothing are refused, as REST refuses `tag_ids=,,,` (422 naming the key).
 *
 * A filter's list narrows: `tagIds: [a, b]` means "transactions carrying a or b". Left out, it does not
 * narrow at all. An empty list is the one value where the two readings part: a client that builds the
 * list from a selection and sends `[]` when nothing is selected would silently get every row (upstream's
 * Rails controllers treat an empty `tag_ids[]` as absent). So the empty list is refused with
 * BAD_USER_INPUT naming the argument, before anything runs: the sender either leaves the key out (no
 * narrowing) or names at least one value.
 *
 * Which lists are filters: every list field of an input type named `…Filter`, and the listed fields of the
 * inputs below (the report's "only these users" lists). Lists that set something (an API key's scopes, an
 * alert rule's channels, a provider's allowed domains) may be empty and are not touched.
 */
const FILTER_LISTS_OF_INPUTS: Readonly<Record<string, readonly string[]>> = {
  AuditReportInput: ["eventTypes", "providers", "userIds"],
};

function isFilterList(inputTypeName: string, fieldName: string): boolean {
  return inputTypeName.endsWith("Filter") || (FILTER_LISTS_OF_INPUTS[inputTypeName]?.includes(fieldName) ?? false);
}

/** Paths (`filter.tagIds`) of the empty filter lists in one input value. */
function emptyFilterLists(type: GraphQLInputType, value: unknown, path: string, found: string[]): void {
  const nullable = getNullableType(type);
  if (value === null || value === undefined) return;
  if (isListType(nullable)) {
    if (Array.isArray(value)) value.forEach((item, index) => emptyFilterLists(nullable.ofType, item, `${path}[${index}]`, found));
    return;
  }
  if (!isInputObjectType(nullable) || typeof value !== "object") return;
  const fields = nullable.getFields();
  for (const [name, field] of Object.entries(fields)) {
    const fieldValue = (value as Record<string, unknown>)[name];
    const fieldPath = `${path}.${name}`;
    if (
      Array.isArray(fieldValue) &&
      fieldValue.length === 0 &&
      isListType(getNullableType(field.type)) &&
      isFilterList(nullable.name, name)
    )
      found.push(fieldPath);
    else emptyFilterLists(field.type, fieldValue, fieldPath, found);
  }
}

/**
 * The refusal for an operation that passes an empty filter list anywhere (literal or variable), or null.
 * Arguments that do not coerce are left to execution, which reports them as graphql-js does.
 */
export function emptyListFilterRefusal(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | undefined,
): GraphQLError | null {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
  if (coerced.errors) return null;
  const found: string[] = [];
  const typeInfo = new TypeInfo(schema);
  const definitions = document.definitions.filter((definition) => definition === operation || definition.kind === Kind.FRAGMENT_DEFINITION);
  for (const definition of definitions) {
    visit(
      definition,
      visitWithTypeInfo(typeInfo, {
        Field(node) {
          const field = typeInfo.getFieldDef();
          if (!field || field.args.length === 0 || !node.arguments?.length) return;
          let values: Record<string, unknown>;
          try {
            values = getArgumentValues(field, node, coerced.coerced);
          } catch {
            return;
          }
          for (const argument of field.args) emptyFilterLists(argument.type, values[argument.name], argument.name, found);
        },
      }),
    );
  }
  if (found.length === 0) return null;
  const unique = [...new Set(found)];
  return graphqlRefusal(new ValidationError(unique.map((path) => `${path} names no value: give at least one, or leave the argument out`)));
}
