import { apiKeyClient, client, type HttpResponse } from "./http";
import { createUser, type TestUser } from "./fixtures";
import { startTestApp, type TestApp } from "./test-app";

/** Shared by the GraphQL tests of each feature (`<feature>.graphql.test.ts`). */

export type Json = Record<string, any>;

/**
 * The service as `finance-gateway start` runs it: with no NODE_ENV, so Apollo runs with its
 * development defaults in production. Started the same way, error responses look here as they do there.
 */
export async function startAppAsDeployed(env?: Record<string, string>): Promise<TestApp> {
  const nodeEnv = process.env.NODE_ENV;
  delete process.env.NODE_ENV;
  try {
    return await startTestApp({ env });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
}

/** A GraphQL client for one key (or none): `raw` returns the HTTP response, `ok` the data, `fail` the one error. */
export function graphqlClient(app: TestApp, key?: string) {
  const http = key ? apiKeyClient(app.url, key) : client(app.url);
  const raw = (query: string, variables?: Json): Promise<HttpResponse> => http.graphql(query, variables);
  return {
    raw,
    async ok(query: string, variables?: Json): Promise<Json> {
      const response = await raw(query, variables);
      expect(response.body.errors).toBeUndefined();
      expect(response.status).toBe(200);
      return response.body.data;
    },
    async fail(query: string, variables?: Json): Promise<Json> {
      const response = await raw(query, variables);
      expect(response.body.errors).toHaveLength(1);
      return response.body.errors[0];
    },
  };
}
export type Gql = ReturnType<typeof graphqlClient>;

/**
 * One app for the calling test file, started before its tests and stopped after them, with clients
 * bound to it: what every `<feature>.graphql.test.ts` needs.
 */
/** The app as deployed for the file's tests; `env` overrides settings, as startTestApp's does. */
export function useGraphqlApp(env?: Record<string, string>) {
  let app: TestApp;
  beforeAll(async () => {
    app = await startAppAsDeployed(env);
  });
  afterAll(() => app.stop());
  return {
    app: () => app,
    graphqlAs: (key?: string) => graphqlClient(app, key),
    newFamily: () => newFamilyIn(app),
  };
}

/** A user in a new family and a GraphQL client with their read_write key. */
export async function newFamilyIn(app: TestApp): Promise<{ user: TestUser; gql: Gql }> {
  const user = await createUser(app.runtime.services);
  return { user, gql: graphqlClient(app, user.key) };
}

export const validationFailed = (...errors: string[]) => ({ extensions: expect.objectContaining({ code: "VALIDATION_FAILED", errors }) });
export const notFound = (what: string) => ({ message: `${what} not found`, extensions: expect.objectContaining({ code: "NOT_FOUND" }) });

export const CREATE_ACCOUNT = `mutation($input: AccountInput!) { createAccount(input: $input) { id name accountType classification currency balance } }`;
export const CREATE_CATEGORY = `mutation($input: CategoryInput!) { createCategory(input: $input) { id name classification color icon parentId } }`;
export const CREATE_TAG = `mutation($input: TagInput!) { createTag(input: $input) { id name color } }`;
export const CREATE_MERCHANT = `mutation($input: MerchantInput!) { createMerchant(input: $input) { id name color logoUrl } }`;

export const TRANSACTION_FIELDS = `
  id date amount formattedAmount amountCents signedAmountCents currency name notes classification pending externalId source
  account { id name accountType }
  category { id name }
  merchant { id name }
  tags { id name color }
  transfer { id amount formattedAmount currency otherAccount { id name } }`;
export const CREATE_TRANSACTION = `mutation($input: TransactionInput!) { createTransaction(input: $input) { created transaction { ${TRANSACTION_FIELDS} } } }`;
export const GET_TRANSACTION = `query($id: ID!) { transaction(id: $id) { ${TRANSACTION_FIELDS} } }`;
export const LIST_TRANSACTIONS = `query($filter: TransactionFilter, $page: Int, $perPage: Int) {
  transactions(filter: $filter, page: $page, perPage: $perPage) {
    items { ${TRANSACTION_FIELDS} }
    pagination { page perPage totalCount totalPages }
  }
}`;
export const CREATE_TRANSFER = `mutation($input: TransferInput!) {
  createTransfer(input: $input) { id outflow { ${TRANSACTION_FIELDS} } inflow { ${TRANSACTION_FIELDS} } }
}`;

export async function createAccount(gql: Gql, input: Json = {}): Promise<Json> {
  return (await gql.ok(CREATE_ACCOUNT, { input: { name: "Checking", accountType: "depository", ...input } })).createAccount;
}

export async function createTransaction(gql: Gql, input: Json): Promise<Json> {
  return (await gql.ok(CREATE_TRANSACTION, { input: { date: "2024-01-15", amount: "10", name: "Coffee", ...input } })).createTransaction
    .transaction;
}
