/**
 * A GraphQL list filter given as `[]` is refused naming the argument, as REST refuses `tag_ids=,,,`:
 * read as "no narrowing" it would silently return every row, the opposite of what its sender meant.
 * Lists that set something (a transaction's tags) may still be empty.
 */
import { createUser } from "../helpers/fixtures";
import {
  CREATE_TAG,
  createAccount,
  createTransaction,
  graphqlClient,
  useGraphqlApp,
  validationFailed,
  type Gql,
  type Json,
} from "../helpers/graphql";

const { app, newFamily } = useGraphqlApp();

const TRANSACTIONS = `query($filter: TransactionFilter) { transactions(filter: $filter) { items { id name } pagination { totalCount } } }`;
const names = (data: Json): string[] => data.transactions.items.map((item: Json) => item.name).sort();

describe("empty list filters over GraphQL", () => {
  let gql: Gql;
  let tagId: string;
  let accountId: string;

  beforeAll(async () => {
    ({ gql } = await newFamily());
    accountId = (await createAccount(gql)).id;
    tagId = (await gql.ok(CREATE_TAG, { input: { name: "Holiday" } })).createTag.id;
    await createTransaction(gql, { accountId, name: "Tagged", tagIds: [tagId] });
    await createTransaction(gql, { accountId, name: "Untagged" });
  });

  test("tagIds: [] is refused naming the argument, as a variable and as a literal; one tag narrows", async () => {
    const message = "filter.tagIds names no value: give at least one, or leave the argument out";
    expect(await gql.fail(TRANSACTIONS, { filter: { tagIds: [] } })).toMatchObject(validationFailed(message));
    expect(await gql.fail(`{ transactions(filter: { tagIds: [] }) { items { id } } }`)).toMatchObject(validationFailed(message));

    expect(names(await gql.ok(TRANSACTIONS, { filter: { tagIds: [tagId] } }))).toEqual(["Tagged"]);
    expect(names(await gql.ok(TRANSACTIONS, {}))).toEqual(["Tagged", "Untagged"]);
  });

  test("every list of the transaction filter, in a fragment too, and the error names each", async () => {
    const response = await gql.raw(
      `query($ids: [ID!]) { ...list } fragment list on Query { transactions(filter: { accountIds: $ids, categoryIds: [], merchantIds: [] }) { items { id } } }`,
      { ids: [] },
    );
    expect(response.status).toBe(422);
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors[0]).toMatchObject(
      validationFailed(
        "filter.accountIds names no value: give at least one, or leave the argument out",
        "filter.categoryIds names no value: give at least one, or leave the argument out",
        "filter.merchantIds names no value: give at least one, or leave the argument out",
      ),
    );
  });

  test("audit filters too, nested in an export's input; the report's user list", async () => {
    const admin = await createUser(app().runtime.services, { role: "admin" });
    const adminGql = graphqlClient(app(), admin.key);
    expect(await adminGql.fail(`{ auditEvents(filter: { userIds: [] }) { nodes { id } } }`)).toMatchObject(
      validationFailed("filter.userIds names no value: give at least one, or leave the argument out"),
    );
    expect(await adminGql.fail(`mutation { createAuditExport(input: { format: CSV, filter: { eventTypes: [] } }) { id } }`)).toMatchObject(
      validationFailed("input.filter.eventTypes names no value: give at least one, or leave the argument out"),
    );
    expect(
      await adminGql.fail(
        `mutation { createAuditReport(input: { template: CUSTOM, format: CSV, from: "2026-01-01", to: "2026-01-31", userIds: [] }) { id } }`,
      ),
    ).toMatchObject(validationFailed("input.userIds names no value: give at least one, or leave the argument out"));
    // With a value, the same search runs.
    await adminGql.ok(`query($u: [ID!]) { auditEvents(filter: { userIds: $u }) { nodes { id } } }`, { u: [admin.userId] });
  });

  test("a list that sets something may be empty: tagIds: [] clears a transaction's tags", async () => {
    const transaction = await createTransaction(gql, { accountId, name: "Cleared", tagIds: [tagId] });
    const { updateTransaction } = await gql.ok(
      `mutation($id: ID!, $input: TransactionInput!) { updateTransaction(id: $id, input: $input) { tags { id } } }`,
      {
        id: transaction.id,
        input: { tagIds: [] },
      },
    );
    expect(updateTransaction.tags).toEqual([]);
  });
});
