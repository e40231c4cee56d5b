import fs from "node:fs";
import path from "node:path";
import {
  Kind,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  visit,
} from "graphql";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import { projectRoot } from "../src/platform/config/project-root";

export const OPERATIONS_DIR = path.join(projectRoot, "rest-adapter", "operations");

export type PreparedOperation = {
  name: string;
  document: DocumentNode;
  definition: OperationDefinitionNode;
  /** The operation compiled to a function once (graphql-jit): same resolvers, none of execute()'s per-request planning. */
  run: (context: unknown, variables: Record<string, unknown>) => Promise<ExecutionResult>;
};

function loadFragments(): Map<string, FragmentDefinitionNode> {
  const document = parse(fs.readFileSync(path.join(OPERATIONS_DIR, "fragments.graphql"), "utf8"));
  return new Map(
    document.definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
}

/** The fragments an operation spreads, directly or through other fragments. */
function fragmentsUsedBy(root: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const pending: Array<OperationDefinitionNode | FragmentDefinitionNode> = [root];
  while (pending.length > 0) {
    visit(pending.pop()!, {
      FragmentSpread(node) {
        const fragment = fragments.get(node.name.value);
        if (!fragment) throw new Error(`unknown fragment ${node.name.value}`);
        if (!used.has(fragment.name.value)) {
          used.set(fragment.name.value, fragment);
          pending.push(fragment);
        }
      },
    });
  }
  return [...used.values()];
}

/**
 * Parses and validates every named operation once, at boot: a route whose operation no longer fits
 * the schema stops the service from starting instead of failing on its first request.
 */
export function prepareOperations(schema: GraphQLSchema, names: string[]): Map<string, PreparedOperation> {
  const fragments = loadFragments();
  const prepared = new Map<string, PreparedOperation>();
  for (const name of new Set(names)) {
    const source = parse(fs.readFileSync(path.join(OPERATIONS_DIR, `${name}.graphql`), "utf8"));
    const definition = source.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (!definition) throw new Error(`operations/${name}.graphql holds no operation`);
    const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [definition, ...fragmentsUsedBy(definition, fragments)] };
    const errors = validate(schema, document);
    if (errors.length > 0) throw new Error(`operations/${name}.graphql is invalid: ${errors.map((e) => e.message).join("; ")}`);
    const compiled = compileQuery(schema, document);
    if (!isCompiledQuery(compiled))
      throw new Error(`operations/${name}.graphql cannot be compiled: ${compiled.errors?.map((e) => e.message).join("; ")}`);
    const run = async (context: unknown, variables: Record<string, unknown>) =>
      (await compiled.query(undefined, context, variables)) as ExecutionResult;
    prepared.set(name, { name, document, definition, run });
  }
  return prepared;
}
