import type { RestRoute } from "./route";

/**
 * File imports (docs/imports.md). The two uploads, POST /imports and POST /imports/preflight, are served
 * beside these routes by src/finance/imports/import.router.ts: a file streams in, which a GraphQL
 * variable cannot do.
 */
export const importRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/imports",
    operation: "listImports",
    summary: "The family's imports, newest first (filters status, type), under data with meta paging as upstream",
    tag: "Imports",
    resultPath: ["imports"],
    status: 200,
    ignoredQueryKeys: ["account_id", "limit"],
  },
  {
    method: "GET",
    path: "/imports/{id}",
    operation: "getImport",
    summary: "Retrieve an import with its status detail, configuration and row counts (under data, as upstream)",
    tag: "Imports",
    resultPath: [],
    status: 200,
  },
  {
    method: "GET",
    path: "/imports/{id}/rows",
    operation: "listImportRows",
    summary: "An import's rows in file order: the fields as written, each row's problems, and what it was read as",
    tag: "Imports",
    resultPath: ["importRows"],
    status: 200,
  },
];
