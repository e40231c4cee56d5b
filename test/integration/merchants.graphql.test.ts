/**
 * Merchants over GraphQL: paging, order, color and logo.
 */
import { useGraphqlApp, type Json, CREATE_MERCHANT } from "../helpers/graphql";

const { newFamily } = useGraphqlApp();

describe("merchants", () => {
  test("are paged and ordered by name", async () => {
    const { gql } = await newFamily();
    for (const name of ["Cafe", "bakery", "Deli"]) await gql.ok(CREATE_MERCHANT, { input: { name } });

    const query = `query($page: Int, $perPage: Int) { merchants(page: $page, perPage: $perPage) { items { name } pagination { page perPage totalCount totalPages } } }`;
    const first = (await gql.ok(query, { perPage: 2 })).merchants;
    expect(first.items.map((m: Json) => m.name)).toEqual(["bakery", "Cafe"]);
    expect(first.pagination).toEqual({ page: 1, perPage: 2, totalCount: 3, totalPages: 2 });
    const second = (await gql.ok(query, { page: 2, perPage: 2 })).merchants;
    expect(second.items.map((m: Json) => m.name)).toEqual(["Deli"]);
  });

  test("keep their color and logo", async () => {
    const { gql } = await newFamily();
    const { createMerchant } = await gql.ok(CREATE_MERCHANT, {
      input: { name: "Logo Co", color: "#112233", logoUrl: "https://example.test/l.png" },
    });
    const { merchant } = await gql.ok("query($id: ID!) { merchant(id: $id) { name color logoUrl } }", { id: createMerchant.id });
    expect(merchant).toEqual({ name: "Logo Co", color: "#112233", logoUrl: "https://example.test/l.png" });
  });
});
