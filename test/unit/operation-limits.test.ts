import { getIntrospectionQuery, getOperationAST, parse, type GraphQLSchema } from "graphql";
import { prepareOperations } from "../../rest-adapter/operations";
import { routes } from "../../rest-adapter/routes";
import { createLogger } from "../../src/platform/common/logger";
import { LocalEventBus } from "../../src/platform/events/event-bus";
import { checkOperation, limitsFor, MAX_TOKENS, measureOperation } from "../../src/transports/graphql/operation-limits";
import { createSchema } from "../../src/app/schema";

/** The estimate is what stands between one small document and unbounded work, so its figures are pinned here. */
describe("operation limits", () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await createSchema(new LocalEventBus(createLogger("silent")));
  });

  const measure = (query: string, variables?: Record<string, unknown>) => {
    const document = parse(query, { maxTokens: MAX_TOKENS });
    return measureOperation(schema, document, getOperationAST(document)!, variables);
  };
  const refusalCode = (query: string, authenticated: boolean, variables?: Record<string, unknown>) =>
    checkOperation(measure(query, variables), limitsFor(authenticated, 50000))?.extensions.code ?? null;

  test("the full introspection query of GraphQL tools fits an anonymous client's limits, once", () => {
    const introspection = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    expect(refusalCode(introspection, false)).toBeNull();
    expect(measure(introspection).depth).toBeLessThanOrEqual(15);
    const twice = `{ a: __schema { types { name } } b: __schema { types { name } } }`;
    expect(refusalCode(twice, false)).toBe("TOO_MANY_INTROSPECTIONS");
    // Looking up named types is priced by cost, not counted as a walk of the whole schema.
    expect(refusalCode(`{ __schema { queryType { name } } __type(name: "Transaction") { fields { name } } }`, false)).toBeNull();
  });

  test("an introspection that asks for a type's fields inside a type's fields is refused: each level multiplies the answer", () => {
    expect(refusalCode(`{ __schema { types { fields { type { fields { name } } } } } }`, false)).toBe("QUERY_TOO_DEEP");
    expect(
      refusalCode(`{ __type(name: "Query") { fields { type { ...Deeper } } } } fragment Deeper on __Type { inputFields { name } }`, true),
    ).toBe("QUERY_TOO_DEEP");
    expect(refusalCode(`{ __type(name: "Query") { fields { type { name ofType { name } } } } }`, false)).toBeNull();
  });

  test("the probe's anonymous document of 300 aliased introspection walks cannot even be parsed", () => {
    const walks = Array.from({ length: 300 }, (_, i) => `w${i}: __schema { types { name fields { name type { name } } } }`);
    expect(() => parse(`{ ${walks.join(" ")} }`, { maxTokens: MAX_TOKENS })).toThrow(/tokens/);
    expect(refusalCode(`{ ${walks.slice(0, 6).join(" ")} }`, false)).toBe("TOO_MANY_ALIASES");
  });

  test("aliased transaction pages are priced by page size, so their number is bounded by cost", () => {
    const page = (alias: string) => `${alias}: transactions(perPage: 100) { items { id name amount category { name } tags { name } } }`;
    // Each item: itself, 3 fields, a category with a field, 10 tags (a guess for an unpaged list) with a field each.
    expect(measure(`{ ${page("a")} }`).cost).toBe(1 + 100 * (1 + 3 + 2 + (1 + 10 * 1)));
    expect(refusalCode(`{ ${Array.from({ length: 30 }, (_, i) => page(`p${i}`)).join(" ")} }`, true)).toBe("QUERY_TOO_COSTLY");
    expect(refusalCode(`{ ${Array.from({ length: 41 }, (_, i) => `k${i}: me { id }`).join(" ")} }`, true)).toBe("TOO_MANY_ALIASES");
    expect(refusalCode(`query($n: Int) { transactions(perPage: $n) { items { id } } }`, true, { n: 5000 })).toBeNull();
    expect(measure(`query($n: Int) { transactions(perPage: $n) { items { id } } }`, { n: 5000 }).cost).toBe(1 + 1000 * 2);
  });

  test("depth counts every level of fields", () => {
    expect(measure(`{ transactions { items { account { id } } } }`).depth).toBe(4);
    const deep = `{ bankConnections { accounts { account { id } balances { id } } syncRuns { id } } }`;
    expect(refusalCode(deep, true)).toBeNull();
  });

  test("every REST operation, sent to /graphql as it is, fits an authenticated client's limits", () => {
    const prepared = prepareOperations(schema, [...new Set(routes.map((route) => route.operation))]);
    for (const operation of prepared.values()) {
      const measured = measureOperation(schema, operation.document, operation.definition, { perPage: 100 });
      expect([operation.name, checkOperation(measured, limitsFor(true, 50000))]).toEqual([operation.name, null]);
    }
  });
});
