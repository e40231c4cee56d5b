import type { RestRoute } from "./route";

/** Categories. */
export const categoryRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/categories",
    operation: "listCategories",
    summary: "List the family's categories ordered by name (roots_only, parent_id)",
    tag: "Categories",
    resultPath: ["categoryPage"],
    status: 200,
  },
  {
    method: "POST",
    path: "/categories",
    operation: "createCategory",
    summary: "Create a category (names are unique per family)",
    tag: "Categories",
    bodyKey: "category",
    resultPath: ["createCategory"],
    status: 201,
  },
  {
    method: "GET",
    path: "/categories/{id}",
    operation: "getCategory",
    summary: "Retrieve a category",
    tag: "Categories",
    resultPath: ["category"],
    status: 200,
  },
];
