/**
 * Categories over GraphQL: defaults, nesting, unique names, updates and deletion.
 */
import { randomUUID } from "node:crypto";
import {
  useGraphqlApp,
  type Json,
  type Gql,
  validationFailed,
  CREATE_CATEGORY,
  GET_TRANSACTION,
  createAccount,
  createTransaction,
} from "../helpers/graphql";

const { newFamily } = useGraphqlApp();

describe("categories", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });
  const UPDATE = `mutation($id: ID!, $input: CategoryInput!) { updateCategory(id: $id, input: $input) { id name classification color icon parentId } }`;

  test("get defaults for what is left out", async () => {
    const { createCategory } = await gql.ok(CREATE_CATEGORY, { input: { name: "Misc" } });
    expect(createCategory).toMatchObject({ name: "Misc", classification: "expense", color: "#737373", icon: "shapes", parentId: null });
  });

  test("can be nested under a parent of the family", async () => {
    const parent = (await gql.ok(CREATE_CATEGORY, { input: { name: "Food", color: "#eb5429", icon: "utensils" } })).createCategory;
    const child = (await gql.ok(CREATE_CATEGORY, { input: { name: "Restaurants", parentId: parent.id } })).createCategory;
    expect(child.parentId).toBe(parent.id);
    expect(await gql.fail(UPDATE, { id: parent.id, input: { parentId: parent.id } })).toMatchObject(
      validationFailed("A category cannot be placed under itself"),
    );
    // Food → Restaurants → Food would be a cycle.
    expect(await gql.fail(UPDATE, { id: parent.id, input: { parentId: child.id } })).toMatchObject(
      validationFailed("A category cannot be placed under itself"),
    );
    expect(await gql.fail(CREATE_CATEGORY, { input: { name: "Orphan", parentId: randomUUID() } })).toMatchObject(
      validationFailed("Parent category not found"),
    );
  });

  test.each([
    ["a color that is not #RRGGBB", { name: "Bad color", color: "red" }, "Color must be a hex color like #1a2b3c"],
    [
      "an icon that is not a Lucide name",
      { name: "Bad icon", icon: "Shopping Cart" },
      "Icon must be a Lucide icon name like shopping-cart",
    ],
    ["an unknown classification", { name: "Bad class", classification: "transfer" }, "Classification must be income or expense"],
    ["a blank name", { name: "" }, "Name can't be blank"],
    ["no name at all", { color: "#123456" }, "Name can't be blank"],
  ])("%s is refused", async (_case, input, message) => {
    expect(await gql.fail(CREATE_CATEGORY, { input })).toMatchObject(validationFailed(message));
  });

  test("names are unique in the family, ignoring case", async () => {
    await gql.ok(CREATE_CATEGORY, { input: { name: "Travel" } });
    expect(await gql.fail(CREATE_CATEGORY, { input: { name: "TRAVEL" } })).toMatchObject(validationFailed("Name has already been taken"));
  });

  test("are updated and listed by name", async () => {
    const category = (await gql.ok(CREATE_CATEGORY, { input: { name: "aaa first" } })).createCategory;
    const { updateCategory } = await gql.ok(UPDATE, {
      id: category.id,
      input: { name: "Salary", classification: "income", icon: "briefcase" },
    });
    expect(updateCategory).toMatchObject({
      id: category.id,
      name: "Salary",
      classification: "income",
      icon: "briefcase",
      color: "#737373",
    });
    const names = (await gql.ok("{ categories { name } }")).categories.map((c: Json) => c.name);
    expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(names).toContain("Salary");
  });

  test("deleting one leaves its transactions uncategorised and its subcategories top-level", async () => {
    const account = await createAccount(gql);
    const parent = (await gql.ok(CREATE_CATEGORY, { input: { name: "Shopping" } })).createCategory;
    const child = (await gql.ok(CREATE_CATEGORY, { input: { name: "Clothes", parentId: parent.id } })).createCategory;
    const transaction = await createTransaction(gql, { accountId: account.id, categoryId: parent.id });

    const { deleteCategory } = await gql.ok("mutation($id: ID!) { deleteCategory(id: $id) { id } }", { id: parent.id });
    expect(deleteCategory.id).toBe(parent.id);

    expect((await gql.ok(GET_TRANSACTION, { id: transaction.id })).transaction.category).toBeNull();
    const categories = (await gql.ok("{ categories { id parentId } }")).categories;
    expect(categories).toContainEqual({ id: child.id, parentId: null });
    expect(categories.map((c: Json) => c.id)).not.toContain(parent.id);
  });
});
