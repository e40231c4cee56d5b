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

/**
 * The request fields that configure an import, upstream's names (Import::Preflight::CONFIG_PARAM_KEYS
 * with type and account_id), and ours: merchant_col_label. Others it accepts (`format`, `source`, `amount_type_strategy`) are
 * accepted and unused.
 */
export const IMPORT_SETTING_KEYS = [
  "type",
  "account_id",
  "date_col_label",
  "amount_col_label",
  "name_col_label",
  "currency_col_label",
  "category_col_label",
  "tags_col_label",
  "notes_col_label",
  "account_col_label",
  "qty_col_label",
  "ticker_col_label",
  "price_col_label",
  "entity_type_col_label",
  "exchange_operating_mic_col_label",
  "merchant_col_label",
  "date_format",
  "number_format",
  "signage_convention",
  "col_sep",
  "rows_to_skip",
] as const;

/** A route served outside the route table (a file streams in, which a GraphQL variable cannot do). */
export type UploadRoute = { method: "POST"; path: string; operationId: string; summary: string; status: number };

/** The two uploads import.router.ts serves: listed so a wrong method answers 405 naming POST, and for openapi.yaml. */
export const importUploadRoutes: UploadRoute[] = [
  {
    method: "POST",
    path: "/imports",
    operationId: "createImportUpload",
    summary:
      "Upload a CSV file (multipart `file` part, or JSON raw_file_content) as a pending import; with publish=true also write it, all or nothing (read_write)",
    status: 201,
  },
  {
    method: "POST",
    path: "/imports/preflight",
    operationId: "preflightImportUpload",
    summary: "Check a CSV file: detected formats, per-row problems and what a publish would write now; writes nothing",
    status: 200,
  },
];
