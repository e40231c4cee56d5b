/**
 * Tags over GraphQL: defaults, validation, unique names, and deletion from transactions.
 */
import {
  useGraphqlApp,
  type Json,
  type Gql,
  validationFailed,
  CREATE_TAG,
  GET_TRANSACTION,
  createAccount,
  createTransaction,
} from "../helpers/graphql";

const { newFamily } = useGraphqlApp();

describe("tags", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });

  test("are created with a default color, validated, updated, and unique by name", async () => {
    const tag = (await gql.ok(CREATE_TAG, { input: { name: "Essential" } })).createTag;
    expect(tag).toMatchObject({ name: "Essential", color: "#e99537" });

    expect(await gql.fail(CREATE_TAG, { input: { name: "Loud", color: "#GGGGGG" } })).toMatchObject(
      validationFailed("Color must be a hex color like #1a2b3c"),
    );
    expect(await gql.fail(CREATE_TAG, { input: { name: "essential" } })).toMatchObject(validationFailed("Name has already been taken"));

    const { updateTag } = await gql.ok(`mutation($id: ID!, $input: TagInput!) { updateTag(id: $id, input: $input) { id name color } }`, {
      id: tag.id,
      input: { color: "#00aa00" },
    });
    expect(updateTag).toEqual({ id: tag.id, name: "Essential", color: "#00aa00" });
  });

  test("deleting one removes it from every transaction", async () => {
    const account = await createAccount(gql);
    const keep = (await gql.ok(CREATE_TAG, { input: { name: "Keep" } })).createTag;
    const drop = (await gql.ok(CREATE_TAG, { input: { name: "Drop" } })).createTag;
    const transaction = await createTransaction(gql, { accountId: account.id, tagIds: [keep.id, drop.id] });
    expect(transaction.tags.map((t: Json) => t.name)).toEqual(["Drop", "Keep"]);

    await gql.ok("mutation($id: ID!) { deleteTag(id: $id) { id } }", { id: drop.id });

    expect((await gql.ok(GET_TRANSACTION, { id: transaction.id })).transaction.tags).toEqual([
      { id: keep.id, name: "Keep", color: "#e99537" },
    ]);
    expect((await gql.ok("{ tags { name } }")).tags.map((t: Json) => t.name)).not.toContain("Drop");
  });
});
