/**
 * Hints a type's field gives the operation cost estimate (operation-limits.ts), as GraphQL field
 * extensions so they sit beside the field they describe.
 *
 * PRELOADED_LIST: a list the parent object already holds when it is resolved (loaded with the parent in
 * the same query, walked in memory), such as a rule's conditions and actions. Walking it costs its fields,
 * not a fetch per item, so the estimate counts it as one item instead of the default guess for an unpaged
 * list; without this a page of 100 rules with nested conditions is priced as a million fetches.
 */
export const PRELOADED_LIST = { cost: { preloadedList: true } } as const;

/** Whether a field's extensions mark it as a preloaded list. */
export function isPreloadedList(extensions: Readonly<Record<string, unknown>> | null | undefined): boolean {
  const cost = extensions?.cost as { preloadedList?: boolean } | undefined;
  return cost?.preloadedList === true;
}
