import type { RestRoute } from "./route";

/** Tags. */
export const tagRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/tags",
    operation: "listTags",
    summary: "Every tag of the family ordered by name, as a bare array (as upstream; page and per_page are accepted and ignored)",
    tag: "Tags",
    resultPath: ["tags"],
    ignoredQueryKeys: ["page", "per_page"],
    status: 200,
  },
  {
    method: "POST",
    path: "/tags",
    operation: "createTag",
    summary: "Create a tag (names are unique per family)",
    tag: "Tags",
    bodyKey: "tag",
    resultPath: ["createTag"],
    status: 201,
  },
  {
    method: "GET",
    path: "/tags/{id}",
    operation: "getTag",
    summary: "Retrieve a tag",
    tag: "Tags",
    resultPath: ["tag"],
    status: 200,
  },
  {
    method: "PATCH",
    path: "/tags/{id}",
    operation: "updateTag",
    summary: "Update a tag's name or color",
    tag: "Tags",
    bodyKey: "tag",
    resultPath: ["updateTag"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/tags/{id}",
    operation: "deleteTag",
    summary: "Delete a tag; it is removed from every transaction",
    tag: "Tags",
    status: 204,
  },
];
