/**
 * GraphQL over HTTP against hostile documents: a document is measured (depth, aliases, introspection,
 * estimated cost) for its caller before it runs, refused with a GraphQL error and a clear code, and its
 * cost is charged to the caller's rate limit.
 */
import { getIntrospectionQuery } from "graphql";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

function useApp(env?: Record<string, string>): () => TestApp {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env });
  });
  afterAll(() => app.stop());
  return () => app;
}

const walks = (count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `w${i}: __schema { types { name fields { name type { name ofType { name } } } } }`).join(" ")} }`;
const pages = (count: number, perPage = 100) =>
  `{ ${Array.from({ length: count }, (_, i) => `p${i}: transactions(perPage: ${perPage}) { items { id name amount date notes category { name } tags { name } } }`).join(" ")} }`;

describe("cost control", () => {
  const app = useApp();
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(app().runtime.services);
  });

  test("the probe's anonymous 300 aliased introspection walks are refused at parse, and /healthz does not wait", async () => {
    const document = walks(300);
    expect(document.length).toBeGreaterThan(20_000);
    // Refused by the parser's token limit (the code and the message say so): nothing after parsing runs.
    const [refused, health] = await Promise.all([client(app().url).graphql(document), client(app().url).get("/healthz")]);
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(refused.body.errors[0].message).toMatch(/5000 tokens/);
    expect(refused.text.length).toBeLessThan(1000);
    expect(health.status).toBe(200);
  });

  test("an anonymous client may walk the schema once per operation, not six times", async () => {
    const once = await client(app().url).graphql(getIntrospectionQuery());
    expect(once.status).toBe(200);
    expect(once.body.data.__schema.queryType.name).toBe("Query");

    const six = await client(app().url).graphql(walks(6));
    expect(six.status).toBe(400);
    expect(six.body).toEqual({
      errors: [{ message: "Query uses 6 aliases; at most 5 are allowed", extensions: { code: "TOO_MANY_ALIASES" } }],
    });
    const twice = await client(app().url).graphql(`{ __schema { types { name } } again: __schema { queryType { name } } }`);
    expect(twice.body.errors[0].extensions.code).toBe("TOO_MANY_INTROSPECTIONS");
  });

  test("recursive introspection (a type's fields inside a type's fields) is refused before it runs", async () => {
    // Three levels are refused by graphql's own validation, two by ours: each level multiplies the answer by the schema's size.
    const three = await client(app().url).graphql(`{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }`);
    expect(three.body.errors[0]).toMatchObject({
      message: "Maximum introspection depth exceeded",
      extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
    });
    const two = await client(app().url).graphql(`{ __schema { types { fields { type { fields { name } } } } } }`);
    expect(two.status).toBe(400);
    expect(two.body.errors[0].extensions.code).toBe("QUERY_TOO_DEEP");
  });

  test("a read-only key's aliased transaction pages are refused by estimated cost, before any statement runs", async () => {
    const api = apiKeyClient(app().url, user.readKey);
    expect((await api.graphql(pages(1))).body.errors).toBeUndefined();

    app().statements.length = 0;
    const response = await api.graphql(pages(30));
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { message: "Query is estimated to cost 57030; at most 50000 is allowed", extensions: { code: "QUERY_TOO_COSTLY" } },
    ]);
    // Authentication reads the key; nothing of the operation ran.
    expect(app().statements.filter((sql) => /transactions/.test(sql))).toEqual([]);

    // The probe's 1,000 aliases do not even parse.
    expect((await api.graphql(pages(1000))).body.errors[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
  });

  test("too deep a query is refused", async () => {
    const nested = `{ bankConnections { accounts { account { id } } } }`;
    expect((await apiKeyClient(app().url, user.key).graphql(nested)).body.errors).toBeUndefined();
    const deep = `{ __type(name: "Query") { ${"ofType { ".repeat(15)} name ${"} ".repeat(15)} } }`;
    const response = await apiKeyClient(app().url, user.key).graphql(deep);
    expect(response.body.errors[0].extensions.code).toBe("QUERY_TOO_DEEP");
  });

  test("a subscription sent over HTTP is a client error that says where subscriptions run", async () => {
    const response = await apiKeyClient(app().url, user.key).graphql(
      `subscription { chatEvents(chatId: "00000000-0000-4000-8000-000000000000") { kind } }`,
    );
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe("SUBSCRIPTION_OVER_HTTP");
    expect(response.body.errors[0].message).toMatch(/WebSocket/);
  });
});

describe("the rate limit charges by cost", () => {
  const app = useApp({ RATE_LIMIT_REQUESTS: "100" });

  test("one costly operation spends as many points as its cost, cheap ones one each", async () => {
    const user = await createUser(app().runtime.services);
    const api = apiKeyClient(app().url, user.key);
    // 1 + 50 × (1 + 5 fields + category 2 + tags 1 + 10 × 1) = 951 → 9 points beside the request's own.
    const costly = pages(1, 50);
    const first = await api.graphql(costly);
    expect(first.body.errors).toBeUndefined();
    expect(Number(first.headers.get("x-ratelimit-remaining"))).toBe(99);
    const cheap = await api.graphql(`{ me { id } }`);
    expect(Number(cheap.headers.get("x-ratelimit-remaining"))).toBe(100 - 1 - 9 - 1);

    let refused;
    for (let attempt = 0; attempt < 20 && !refused; attempt++) {
      const response = await api.graphql(costly);
      if (response.status === 429) refused = response;
    }
    expect(refused).toBeDefined();
    expect(refused!.body.errors[0].extensions.code).toBe("RATE_LIMITED");
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
