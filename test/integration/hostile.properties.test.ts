/**
 * Property-based tests of every REST route and every GraphQL mutation with generated hostile input
 * (test/helpers/hostile-values.ts), wrong types and malformed JSON. The property: the answer is a 4xx
 * with the documented error body, or a success; never a 500; and a refused request changes nothing
 * (the family's data, its users, keys and SSO providers hash the same before and after).
 *
 * Bounded for CI: PROPERTY_RUNS (default 20) runs per route and per mutation. fast-check prints the
 * seed and path of a failure; FC_SEED=<seed> replays a run.
 */
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { buildSchema, getNamedType, isCompositeType, typeFromAST, type GraphQLInputType, type GraphQLSchema } from "graphql";
import { QueryTypes } from "sequelize";
import { prepareOperations } from "../../rest-adapter/operations";
import { routes } from "../../rest-adapter/routes";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { anyJson, hostileText, valueOf } from "../helpers/hostile-values";
import { apiKeyClient, client, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/** Read from the committed contract, so every mutation is a test of its own and a new one is tested without edits. */
const MUTATION_NAMES = Object.keys(
  buildSchema(fs.readFileSync(path.join(__dirname, "../../schema/schema.graphql"), "utf8"))
    .getMutationType()!
    .getFields(),
);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 20);
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const settings = { numRuns: RUNS, seed: SEED, endOnFailure: true };

let app: TestApp;
let schema: GraphQLSchema;
beforeAll(async () => {
  // Upstream defaults point at this machine's discard port, refused as loopback: nothing leaves it.
  app = await startTestApp({ env: { LUNCHFLOW_BASE_URL: "https://127.0.0.1:9/api/v1", RATE_LIMIT_REQUESTS: "0" } });
  schema = app.runtime.schema!;
});
afterAll(() => app.stop());

/** A family with one record of each kind, so generated ids sometimes name something real. */
async function seededFamily(): Promise<{ user: TestUser; ids: string[] }> {
  const services = app.runtime.services;
  const user = await createUser(services, { role: "admin", aiEnabled: true });
  const account = await createAccount(services, user);
  const category = await services.categories.create(user.actor, { name: "Food", classification: "expense" });
  const merchant = await services.merchants.create(user.actor, { name: "Shop" });
  const tag = await services.tags.create(user.actor, { name: "Tagged" });
  const { transaction } = await services.transactions.create(user.actor, {
    accountId: account.id,
    date: "2024-01-02",
    amount: "12.50",
    name: "Lunch",
    tagIds: [tag.id],
  });
  const chat = await services.chats.create(user.actor, { title: "Chat" });
  return { user, ids: [account.id, category.id, merchant.id, tag.id, transaction.id, chat.id, user.userId] };
}

/** Everything a request may write, hashed: a refused request must leave it as it was. */
async function fingerprint(familyId: string): Promise<string> {
  const [row] = await app.runtime.sequelize.query<{ hash: string }>(
    `SELECT md5(concat_ws('|',
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM accounts t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM categories t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM merchants t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM tags t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM transactions t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM transaction_tags t JOIN transactions x ON x.id = t.transaction_id WHERE x.family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM transfers t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM chats t JOIN users u ON u.id = t.user_id WHERE u.family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM chat_messages t JOIN chats c ON c.id = t.chat_id JOIN users u ON u.id = c.user_id WHERE u.family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM bank_connections t WHERE family_id = $1),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM audit_saved_searches t JOIN users u ON u.id = t.owner_user_id WHERE u.family_id = $1),
       (SELECT string_agg(concat_ws(':', t.id, t.name, t.scope, t.revoked_at, t.expires_at), ',' ORDER BY t.id) FROM api_keys t),
       (SELECT string_agg(concat_ws(':', t.id, t.email, t.name, t.role, t.status, t.ai_enabled, t.family_id), ',' ORDER BY t.id) FROM users t),
       (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM sso_providers t)
     )) AS hash`,
    { bind: [familyId], type: QueryTypes.SELECT },
  );
  return row.hash;
}

/**
 * The family's fingerprint before and after each request of one property. What a run finds after its
 * request is what the next run finds before its own (nothing else writes in between), so it is read once
 * for both; a run that ends before reading "after" leaves the next run to read "before" afresh.
 */
function fingerprints(familyId: string) {
  let last: string | undefined;
  return {
    async before(): Promise<string> {
      const known = last;
      last = undefined;
      return known ?? fingerprint(familyId);
    },
    async after(): Promise<string> {
      last = await fingerprint(familyId);
      return last;
    },
  };
}

/** A lone surrogate cannot be percent-encoded: no client can put it in a URL. */
function encodable(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

const DOCUMENTED_REST_ERROR = (body: any) =>
  body !== null &&
  typeof body === "object" &&
  typeof body.error === "string" &&
  typeof body.message === "string" &&
  Object.keys(body).every((key) => ["error", "message", "errors", "details"].includes(key)) &&
  (body.errors === undefined || (Array.isArray(body.errors) && body.errors.every((e: unknown) => typeof e === "string")));

/** The property's verdict on one answer; throws (with the answer) when it does not hold. */
function expectDocumentedAnswer(response: HttpResponse, before: string, after: string, graphql: boolean): void {
  const failure = (why: string) => new Error(`${why}: ${response.status} ${response.text.slice(0, 500)}`);
  if (response.status >= 500) throw failure("server error");
  if (graphql) {
    const errors: Array<{ extensions?: { code?: string } }> = response.body?.errors ?? [];
    if (response.status !== 200 && !errors.length) throw failure("a refusal without GraphQL errors");
    for (const error of errors)
      if (!error.extensions?.code || error.extensions.code === "INTERNAL_SERVER_ERROR") throw failure("an error without a client code");
    const refused = errors.length > 0 && (response.body?.data === null || response.body?.data === undefined);
    if (refused && before !== after) throw failure("refused, yet something was written");
    return;
  }
  if (response.status >= 400) {
    if (!DOCUMENTED_REST_ERROR(response.body)) throw failure("an error body that is not the documented one");
    if (before !== after) throw failure("refused, yet something was written");
  }
}

describe("every REST route", () => {
  let family: { user: TestUser; ids: string[] };
  beforeAll(async () => {
    family = await seededFamily();
  });

  const QUERY_KEYS = [
    "page",
    "per_page",
    "start_date",
    "end_date",
    "account_id",
    "category_id",
    "merchant_id",
    "tag_ids",
    "tag_ids[]",
    "min_amount",
    "max_amount",
    "type",
    "search",
    "first",
    "after",
    "from",
    "to",
    "eventTypes",
    "ipAddress",
  ];

  test.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))("%s", async (_name, route) => {
    const operation = prepareOperations(schema, [route.operation]).get(route.operation)!;
    const inputVariable = operation.definition.variableDefinitions?.find((definition) => definition.variable.name.value === "input");
    const inputType = inputVariable ? (typeFromAST(schema, inputVariable.type) as GraphQLInputType) : undefined;
    const pathValue = fc.oneof(
      fc.constantFrom(...family.ids),
      fc.uuid(),
      hostileText.filter((text) => text.length > 0 && encodable(text)),
    );
    const bodyObject = inputType ? valueOf(inputType, { ids: family.ids, snakeCase: true }) : anyJson;
    const body = fc.oneof(
      { arbitrary: bodyObject.map((value) => JSON.stringify(route.bodyKey ? { [route.bodyKey]: value } : value)), weight: 6 },
      { arbitrary: anyJson.map((value) => JSON.stringify(value)), weight: 1 },
      { arbitrary: fc.constantFrom("{", '{"transaction": ', "[1,2", "\u0000", '{"a":"\\ud800"}', "not json at all"), weight: 1 },
    );
    const query = fc.dictionary(fc.constantFrom(...QUERY_KEYS), hostileText, { maxKeys: 4 });
    const state = fingerprints(family.user.familyId);

    await fc.assert(
      fc.asyncProperty(fc.array(pathValue, { minLength: 2, maxLength: 2 }), query, body, async ([first, second], params, text) => {
        let seen = 0;
        const path = route.path.replace(/\{\w+\}/g, () => encodeURIComponent(seen++ === 0 ? first : second));
        const search = new URLSearchParams(params).toString();
        const before = await state.before();
        const api = apiKeyClient(`${app.url}/api/v1`, family.user.key);
        const url = `${path}${search ? `?${search}` : ""}`;
        const response =
          route.method === "GET"
            ? await api.get(url)
            : route.method === "DELETE"
              ? await api.delete(url)
              : await (route.method === "POST" ? api.post : api.patch)(url, text);
        expectDocumentedAnswer(response, before, await state.after(), false);
      }),
      settings,
    );
  });
});

describe("every GraphQL mutation", () => {
  const mutations = () => Object.values(app.runtime.schema!.getMutationType()!.getFields());

  test("the schema's mutations are the committed contract's, all of them tested here", () => {
    expect(
      mutations()
        .map((field) => field.name)
        .sort(),
    ).toEqual([...MUTATION_NAMES].sort());
  });

  test.each(MUTATION_NAMES)("%s", async (name) => {
    const field = app.runtime.schema!.getMutationType()!.getFields()[name];
    const family = await seededFamily();
    const selection = isCompositeType(getNamedType(field.type)) ? " { __typename }" : "";
    const declared = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(", ");
    const passed = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(", ");
    const document = `mutation${declared ? `(${declared})` : ""} { ${field.name}${passed ? `(${passed})` : ""}${selection} }`;
    const variables = fc.record(Object.fromEntries(field.args.map((arg) => [arg.name, valueOf(arg.type, { ids: family.ids })])), {
      requiredKeys: [],
    });
    const state = fingerprints(family.user.familyId);
    await fc.assert(
      fc.asyncProperty(variables, async (values) => {
        const before = await state.before();
        const response = await client(app.url, { "x-api-key": family.user.key }).graphql(document, values);
        expectDocumentedAnswer(response, before, await state.after(), true);
      }),
      settings,
    );
  });
});
