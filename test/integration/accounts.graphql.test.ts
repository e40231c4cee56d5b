/**
 * Accounts over GraphQL: created, validated, updated and deleted within the family.
 */
import { randomUUID } from "node:crypto";
import {
  useGraphqlApp,
  type Json,
  type Gql,
  validationFailed,
  notFound,
  CREATE_ACCOUNT,
  GET_TRANSACTION,
  LIST_TRANSACTIONS,
  createAccount,
  createTransaction,
} from "../helpers/graphql";

const { newFamily } = useGraphqlApp();

describe("accounts", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });

  test("are created in the family's currency unless told, classified by type, and listed by name", async () => {
    const savings = await createAccount(gql, { name: "savings", balance: "1200.50" });
    const card = await createAccount(gql, { name: "Amex", accountType: "credit_card", currency: "eur" });

    expect(savings).toMatchObject({ name: "savings", accountType: "depository", classification: "asset", currency: "USD" });
    expect(Number(savings.balance)).toBe(1200.5);
    expect(card).toMatchObject({ accountType: "credit_card", classification: "liability", currency: "EUR" });

    const { accounts } = await gql.ok("{ accounts { id } }");
    expect(accounts.map((account: Json) => account.id)).toEqual([card.id, savings.id]);
    expect((await gql.ok("query($id: ID!) { account(id: $id) { id name } }", { id: card.id })).account).toEqual({
      id: card.id,
      name: "Amex",
    });
  });

  test("are validated", async () => {
    const error = await gql.fail(CREATE_ACCOUNT, { input: { name: " ", accountType: "piggy_bank", currency: "XYZ" } });
    expect(error).toMatchObject(
      validationFailed(
        "Name can't be blank",
        "Account type must be one of depository, investment, crypto, property, vehicle, other_asset, credit_card, loan, other_liability",
        "Currency is not a valid ISO 4217 code",
      ),
    );
  });

  test("an unknown id is NOT_FOUND", async () => {
    expect(await gql.fail("query($id: ID!) { account(id: $id) { id } }", { id: randomUUID() })).toMatchObject(notFound("Account"));
  });

  test("are updated field by field; a new type brings its classification", async () => {
    const account = await createAccount(gql, { name: "Old", balance: "5" });
    const { updateAccount } = await gql.ok(
      `mutation($id: ID!, $input: AccountInput!) { updateAccount(id: $id, input: $input) { name accountType classification balance } }`,
      {
        id: account.id,
        input: { name: "Mortgage", accountType: "loan" },
      },
    );
    expect(updateAccount).toMatchObject({ name: "Mortgage", accountType: "loan", classification: "liability" });
    expect(Number(updateAccount.balance)).toBe(5);
  });

  test("deleting one deletes its transactions, and only its", async () => {
    const doomed = await createAccount(gql, { name: "Doomed" });
    const kept = await createAccount(gql, { name: "Kept" });
    const gone = await createTransaction(gql, { accountId: doomed.id });
    const stays = await createTransaction(gql, { accountId: kept.id });

    const { deleteAccount } = await gql.ok("mutation($id: ID!) { deleteAccount(id: $id) { id name } }", { id: doomed.id });
    expect(deleteAccount).toEqual({ id: doomed.id, name: "Doomed" });

    expect(await gql.fail("query($id: ID!) { account(id: $id) { id } }", { id: doomed.id })).toMatchObject(notFound("Account"));
    expect(await gql.fail(GET_TRANSACTION, { id: gone.id })).toMatchObject(notFound("Transaction"));
    expect((await gql.ok(GET_TRANSACTION, { id: stays.id })).transaction.id).toBe(stays.id);
    const remaining = (await gql.ok(LIST_TRANSACTIONS, { filter: { accountId: doomed.id } })).transactions;
    expect(remaining.pagination.totalCount).toBe(0);
  });
});
