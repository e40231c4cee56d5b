import {
  GraphQLEnumType,
  GraphQLError,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  Kind,
  parse,
  type OperationDefinitionNode,
} from "graphql";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import { planQuery } from "../../rest-adapter/query-plan";

/**
 * A planned route must answer, byte for byte, what its compiled operation answers, and leave to the
 * compiled operation everything it does not shape the same way. Each case runs both on one schema.
 */
describe("a REST query plan", () => {
  let item: Record<string, unknown> | null;
  let failure: Error | null;

  const Money = new GraphQLScalarType({ name: "Money", serialize: (value) => `$${Number(value).toFixed(2)}` });
  const ItemKind = new GraphQLEnumType({ name: "Kind", values: { income: { value: "IN" }, expense: { value: "OUT" } } });
  const Tag = new GraphQLObjectType({
    name: "Tag",
    fields: { id: { type: new GraphQLNonNull(GraphQLID) }, name: { type: GraphQLString } },
  });
  const Item = new GraphQLObjectType({
    name: "Item",
    fields: {
      id: { type: new GraphQLNonNull(GraphQLID) },
      name: { type: GraphQLString },
      count: { type: GraphQLInt },
      amount: { type: Money },
      kind: { type: ItemKind },
      tags: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Tag))) },
      parent: { type: Tag },
      computed: { type: GraphQLString, resolve: () => "from a resolver" },
    },
  });
  const Either = new GraphQLUnionType({ name: "Either", types: [Tag, Item], resolveType: () => "Tag" });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: "Query",
      fields: {
        item: {
          type: Item,
          args: { id: { type: new GraphQLNonNull(GraphQLID) } },
          resolve: (_root, args: { id: string }) => {
            if (failure) throw failure;
            return item && { ...item, id: item.id ?? args.id };
          },
        },
        either: { type: Either, resolve: () => ({ id: "t" }) },
      },
    }),
  });

  const SELECTION = `query Get($id: ID!) {
    item(id: $id) { ...Fields name: name tags { id label: name } parent { id } }
  }
  fragment Fields on Item { id name how_many: count amount kind }`;

  function both(query: string, variables: Record<string, unknown>) {
    const document = parse(query);
    const definition = document.definitions.find((node): node is OperationDefinitionNode => node.kind === Kind.OPERATION_DEFINITION)!;
    const compiled = compileQuery(schema, document);
    if (!isCompiledQuery(compiled)) throw new Error("does not compile");
    const responseKey = (definition.selectionSet.selections[0] as { alias?: { value: string }; name: { value: string } }).name.value;
    const plan = planQuery(schema, document, definition, [responseKey]);
    return {
      plan,
      planned: () => plan!.run({}, variables),
      compiled: async () => {
        const result = await compiled.query(undefined, {}, variables);
        return { body: JSON.stringify((result.data as Record<string, unknown> | null | undefined)?.[responseKey]), errors: result.errors };
      },
    };
  }

  beforeEach(() => {
    item = {
      id: "1",
      name: 'a "quoted" name\n',
      count: 3,
      amount: "12.5",
      kind: "OUT",
      tags: [
        { id: "t1", name: "one" },
        { id: "t2", name: null },
      ],
      parent: null,
    };
    failure = null;
  });

  test("answers the compiled operation's bytes: aliases, fragments, custom scalars, enums, lists and nulls", async () => {
    const { planned, compiled } = both(SELECTION, { id: "1" });
    expect(await planned()).toEqual({ body: (await compiled()).body });
    item = null;
    expect(await planned()).toEqual({ body: "null" });
    expect((await compiled()).body).toBe("null");
  });

  test("leaves to the compiled operation a value GraphQL would refuse or convert", async () => {
    const { planned, compiled } = both(SELECTION, { id: "1" });
    item!.tags = [{ id: null, name: "no id" }];
    expect(await planned()).toBe("unplanned");
    expect((await compiled()).errors?.[0].message).toMatch(/non-nullable/);
    item!.tags = [];
    item!.kind = "SIDEWAYS";
    expect(await planned()).toBe("unplanned");
    item!.kind = "IN";
    item!.name = Promise.resolve("later");
    expect(await planned()).toBe("unplanned");
    item!.name = "now";
    expect(await planned()).toEqual({ body: (await compiled()).body });
  });

  test("reports the root field's error as an execution does, with the thrown error as its origin", async () => {
    failure = new Error("not yours");
    const outcome = await both(SELECTION, { id: "1" }).planned();
    expect(outcome).toEqual({ errors: [expect.any(GraphQLError)] });
    expect((outcome as { errors: GraphQLError[] }).errors[0].originalError).toBe(failure);
  });

  test("a variable that does not coerce is the compiled operation's to refuse", async () => {
    expect(await both(SELECTION, {}).planned()).toBe("unplanned");
  });

  test("plans nothing below a field with its own resolver, an abstract type or a directive", () => {
    expect(both(`query { item(id: "1") { computed } }`, {}).plan).toBeNull();
    expect(both(`query { either { ... on Tag { id } } }`, {}).plan).toBeNull();
    expect(both(`query { item(id: "1") { id name @include(if: false) } }`, {}).plan).toBeNull();
    expect(both(`query { item(id: "1") { id } }`, {}).plan).not.toBeNull();
  });
});
