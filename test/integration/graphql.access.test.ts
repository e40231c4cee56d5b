/**
 * Access to the GraphQL API over POST /graphql with X-Api-Key, who `me` is, and how errors reach clients
 * (extensions.code, no stacks, no SQL).
 */
import { createUser, type TestUser } from "../helpers/fixtures";
import { useGraphqlApp, type Json, type Gql, CREATE_TAG } from "../helpers/graphql";
import { type HttpResponse } from "../helpers/http";

const { app, graphqlAs, newFamily } = useGraphqlApp();

describe("access", () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(app().runtime.services);
  });

  test("without a key, every field answers UNAUTHENTICATED", async () => {
    const response = await graphqlAs().raw("{ me { id } }");
    expect(response.body.data).toBeNull();
    expect(response.body.errors).toEqual([
      expect.objectContaining({
        message: "Access token or API key is invalid, expired, or missing",
        path: ["me"],
        extensions: expect.objectContaining({ code: "UNAUTHENTICATED" }),
      }),
    ]);
  });

  test("a wrong key is refused with 401 before anything runs", async () => {
    const response = await graphqlAs("fgk_not-a-real-key").raw("{ me { id } }");
    expect(response.status).toBe(401);
    expect(response.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "UNAUTHENTICATED" }) })]);
  });

  test("a read key can query, but a mutation answers FORBIDDEN and changes nothing", async () => {
    const reader = graphqlAs(user.readKey);
    expect((await reader.ok("{ me { id } }")).me.id).toBe(user.userId);

    const error = await reader.fail(CREATE_TAG, { input: { name: "Nope" } });
    expect(error).toMatchObject({
      message: "This action requires the 'write' scope",
      extensions: { code: "FORBIDDEN", restError: "insufficient_scope" },
    });
    expect((await reader.ok("{ tags { id } }")).tags).toEqual([]);
  });

  test("introspection works without a key", async () => {
    const data = await graphqlAs().ok(
      `{ __schema { queryType { name } mutationType { name } } __type(name: "Transaction") { fields { name } } }`,
    );
    expect(data.__schema).toEqual({ queryType: { name: "Query" }, mutationType: { name: "Mutation" } });
    expect(data.__type.fields.map((field: Json) => field.name)).toEqual(
      expect.arrayContaining(["account", "category", "merchant", "tags", "transfer"]),
    );
  });
});

describe("errors never leak internals", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });

  test("an unexpected failure is a bare INTERNAL_SERVER_ERROR: no stack, no SQL", async () => {
    // A real database failure, not a mock: the table the query reads is briefly missing.
    await app().runtime.sequelize.query("ALTER TABLE tags RENAME TO tags_hidden_by_test");
    let response: HttpResponse;
    try {
      response = await gql.raw("{ tags { id } }");
    } finally {
      await app().runtime.sequelize.query("ALTER TABLE tags_hidden_by_test RENAME TO tags");
    }
    expect(response.body).toEqual({
      data: null,
      errors: [{ message: "Internal server error", path: ["tags"], extensions: { code: "INTERNAL_SERVER_ERROR" } }],
    });
    expect(response.text).not.toMatch(/tags_hidden_by_test|relation|SELECT|Sequelize/i);
  });

  test.each([
    ["a syntax error", "{ me { id ", undefined, "GRAPHQL_PARSE_FAILED"],
    ["an unknown field", "{ me { password } }", undefined, "GRAPHQL_VALIDATION_FAILED"],
    [
      "a variable its scalar rejects",
      "query($d: Date) { transactions(filter: { startDate: $d }) { items { id } } }",
      { d: "2024-13-01" },
      "BAD_USER_INPUT",
    ],
  ])("%s says what is wrong, without a stack trace", async (_case, query, variables, code) => {
    const response = await gql.raw(query, variables);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ message: expect.any(String), extensions: { code } })]);
    expect(response.text).not.toMatch(/stacktrace|node_modules|\/src\//);
  });
});

describe("me", () => {
  test("is the user the key belongs to", async () => {
    const { user, gql } = await newFamily();
    const { me } = await gql.ok("{ me { id email familyId role name aiEnabled } }");
    expect(me).toEqual({ id: user.userId, email: user.email, familyId: user.familyId, role: "member", name: null, aiEnabled: false });
  });
});
