import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

/**
 * What selectedFieldNames found, by the field's nodes and the path below them. A parsed operation never
 * changes, and a compiled one (every REST route's, run by graphql-jit) hands the same nodes to each
 * execution: its requests walk no fragments. Other executions' nodes are new each time and are
 * forgotten with them.
 */
const walked = new WeakMap<readonly FieldNode[], Map<string, ReadonlySet<string>>>();

/**
 * The names of the fields selected at `path` below the field being resolved (e.g. ["items"] under a
 * page), following fragments and looking through aliases. Lets a resolver read ahead what the query
 * will ask of its result. @skip/@include are not evaluated: a conditional field counts as selected.
 */
export function selectedFieldNames(info: GraphQLResolveInfo, path: readonly string[]): ReadonlySet<string> {
  let byPath = walked.get(info.fieldNodes);
  if (!byPath) walked.set(info.fieldNodes, (byPath = new Map()));
  // Field names cannot hold a dot.
  const key = path.join(".");
  let names = byPath.get(key);
  if (!names) byPath.set(key, (names = walk(info, path)));
  return names;
}

function walk(info: GraphQLResolveInfo, path: readonly string[]): Set<string> {
  let level = info.fieldNodes.map((node) => node.selectionSet).filter((set): set is SelectionSetNode => set !== undefined);
  for (const name of path) {
    const next: SelectionSetNode[] = [];
    forEachField(info, level, (field) => {
      if (field.name.value === name && field.selectionSet) next.push(field.selectionSet);
    });
    level = next;
  }
  const names = new Set<string>();
  forEachField(info, level, (field) => names.add(field.name.value));
  return names;
}

function forEachField(
  info: GraphQLResolveInfo,
  sets: readonly SelectionSetNode[],
  visit: (field: { name: { value: string }; selectionSet?: SelectionSetNode }) => void,
): void {
  for (const set of sets) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) visit(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) forEachField(info, [selection.selectionSet], visit);
      else {
        const fragment = info.fragments[selection.name.value];
        if (fragment) forEachField(info, [fragment.selectionSet], visit);
      }
    }
  }
}
