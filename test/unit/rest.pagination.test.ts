import { clampPage, pageInfo } from "../../src/platform/common/pagination";

describe("page-number paging clamps instead of failing", () => {
  test.each([
    [undefined, undefined, { page: 1, perPage: 25 }],
    [0, 500, { page: 1, perPage: 100 }],
    [-3, 0, { page: 1, perPage: 25 }],
    [2, 10, { page: 2, perPage: 10 }],
    [1.5, 2.5, { page: 1, perPage: 25 }],
  ])("page %p per_page %p → %p", (page, perPage, expected) => {
    expect(clampPage(page, perPage, 25)).toEqual(expected);
  });

  test("total pages round up, and an empty list is one page (as upstream's pagy counts it)", () => {
    expect(pageInfo({ page: 1, perPage: 25 }, 51)).toEqual({ page: 1, perPage: 25, totalCount: 51, totalPages: 3 });
    expect(pageInfo({ page: 1, perPage: 25 }, 0).totalPages).toBe(1);
  });
});
