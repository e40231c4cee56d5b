/**
 * The REST surface of /api/v1 as data. Each route names one GraphQL operation in operations/, where
 * its variables come from, which part of the result is the response body, and its success status.
 * Variables are taken from the path, then the query string, then the body (under `bodyKey`), with
 * snake_case keys turned into the GraphQL names and coerced by their GraphQL types.
 */
export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export type RestRoute = {
  method: HttpMethod;
  /** OpenAPI-style template: /transactions/{id}. */
  path: string;
  operation: string;
  summary: string;
  tag: string;
  /** The body must be an object holding this key, whose value becomes the `input` variable. */
  bodyKey?: string;
  /** The body object itself becomes the `input` variable (routes whose clients send `{"title": …}` unwrapped). */
  bodyAtRoot?: boolean;
  /** Path into the GraphQL result that is the response body. */
  resultPath?: string[];
  /** A fixed body instead of a result path (deletes answer with a message, as upstream does). */
  message?: string;
  /** With neither resultPath nor message the route answers with no body; its status is then 204. */
  status: number;
  /** Default page size of a paged route, for its documentation (the service applies it); 25 when unset. */
  perPageDefault?: number;
  /** Query keys upstream's clients send here that the route accepts without using them (any other unknown key is a 400). */
  ignoredQueryKeys?: string[];
  /** How query keys are spelled: snake_case as upstream's routes (default), or camelCase where the route documents that (audit-logs). */
  queryKeys?: "camelCase";
  /** A second success status chosen by the result, e.g. 200 for an idempotent replay of a create. */
  alternateStatus?: { status: number; when: string[]; equals: unknown; description: string };
};

export const API_PREFIX = "/api/v1";

export const routes: RestRoute[] = [
  {
    method: "GET",
    path: "/transactions",
    operation: "listTransactions",
    summary: "List transactions, newest first, with filters",
    tag: "Transactions",
    resultPath: ["transactions"],
    status: 200,
  },
  {
    method: "POST",
    path: "/transactions",
    operation: "createTransaction",
    summary: "Create a transaction (201), or return the one already imported under the same external_id (200)",
    tag: "Transactions",
    bodyKey: "transaction",
    resultPath: ["createTransaction", "transaction"],
    status: 201,
    alternateStatus: {
      status: 200,
      when: ["createTransaction", "created"],
      equals: false,
      description: "Existing transaction with the same external_id and source",
    },
  },
  {
    method: "GET",
    path: "/transactions/{id}",
    operation: "getTransaction",
    summary: "Retrieve a transaction",
    tag: "Transactions",
    resultPath: ["transaction"],
    status: 200,
  },
  {
    method: "PATCH",
    path: "/transactions/{id}",
    operation: "updateTransaction",
    summary: "Update any subset of a transaction's fields",
    tag: "Transactions",
    bodyKey: "transaction",
    resultPath: ["updateTransaction"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/transactions/{id}",
    operation: "deleteTransaction",
    summary: "Delete a transaction",
    tag: "Transactions",
    message: "Transaction deleted successfully",
    status: 200,
  },
  {
    method: "GET",
    path: "/accounts",
    operation: "listAccounts",
    summary: "List the family's accounts ordered by name",
    tag: "Accounts",
    resultPath: ["accountPage"],
    // Upstream hides disabled accounts unless asked; no account here is ever disabled.
    ignoredQueryKeys: ["include_disabled"],
    status: 200,
  },
  {
    method: "GET",
    path: "/accounts/{id}",
    operation: "getAccount",
    summary: "Retrieve an account",
    tag: "Accounts",
    resultPath: ["account"],
    status: 200,
  },
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
  {
    method: "GET",
    path: "/usage",
    operation: "getUsage",
    summary: "The credential making the request and its rate-limit state (this request counted)",
    tag: "Usage",
    resultPath: ["usage"],
    status: 200,
  },
  {
    method: "POST",
    path: "/sync",
    operation: "syncAll",
    summary: "Sync every bank connection of the family that can sync (202); a sync already under way is returned, not doubled",
    tag: "Syncs",
    resultPath: ["syncAllBankConnections"],
    status: 202,
  },
  {
    method: "GET",
    path: "/syncs",
    operation: "listSyncs",
    summary: "The family's bank syncs, newest first ({data, meta} as upstream)",
    tag: "Syncs",
    resultPath: ["bankSyncRuns"],
    status: 200,
  },
  {
    method: "GET",
    path: "/syncs/latest",
    operation: "getLatestSync",
    summary: "The family's newest sync ({data: null} before the first)",
    tag: "Syncs",
    resultPath: [],
    status: 200,
  },
  {
    method: "GET",
    path: "/syncs/{id}",
    operation: "getSync",
    summary: "Retrieve a sync",
    tag: "Syncs",
    resultPath: [],
    status: 200,
  },
  {
    method: "GET",
    path: "/provider_connections",
    operation: "listProviderConnections",
    summary: "The family's bank-provider connections with their account counts and latest sync",
    tag: "Syncs",
    resultPath: [],
    status: 200,
  },
  {
    method: "GET",
    path: "/merchants",
    operation: "listMerchants",
    summary: "List the family's merchants ordered by name",
    tag: "Merchants",
    resultPath: ["merchants"],
    status: 200,
  },
  {
    method: "POST",
    path: "/merchants",
    operation: "createMerchant",
    summary: "Create a merchant (names are unique per family)",
    tag: "Merchants",
    bodyKey: "merchant",
    resultPath: ["createMerchant"],
    status: 201,
  },
  {
    method: "GET",
    path: "/merchants/{id}",
    operation: "getMerchant",
    summary: "Retrieve a merchant",
    tag: "Merchants",
    resultPath: ["merchant"],
    status: 200,
  },
  {
    method: "PATCH",
    path: "/merchants/{id}",
    operation: "updateMerchant",
    summary: "Update a merchant",
    tag: "Merchants",
    bodyKey: "merchant",
    resultPath: ["updateMerchant"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/merchants/{id}",
    operation: "deleteMerchant",
    summary: "Delete a merchant; its transactions keep existing without one",
    tag: "Merchants",
    message: "Merchant deleted successfully",
    status: 200,
  },
  {
    method: "GET",
    path: "/chats",
    operation: "listChats",
    summary: "List your chats, newest first",
    tag: "Chats",
    resultPath: ["chats"],
    perPageDefault: 20,
    status: 200,
  },
  {
    method: "POST",
    path: "/chats",
    operation: "createChat",
    summary: "Create a chat, optionally with a first message whose reply is generated at once",
    tag: "Chats",
    bodyAtRoot: true,
    resultPath: ["createChat"],
    status: 201,
  },
  {
    method: "GET",
    path: "/chats/{id}",
    operation: "getChat",
    summary: "Retrieve a chat with a page of its messages, oldest first",
    tag: "Chats",
    resultPath: ["chat"],
    perPageDefault: 50,
    status: 200,
  },
  {
    method: "PATCH",
    path: "/chats/{id}",
    operation: "updateChat",
    summary: "Rename a chat",
    tag: "Chats",
    bodyAtRoot: true,
    resultPath: ["updateChat"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/chats/{id}",
    operation: "deleteChat",
    summary: "Delete a chat and its messages",
    tag: "Chats",
    status: 204,
  },
  {
    method: "POST",
    path: "/chats/{chat_id}/messages",
    operation: "createChatMessage",
    summary: "Post a message; the assistant's reply is generated by a worker (ai_response_status pending, then complete or failed)",
    tag: "Chats",
    bodyAtRoot: true,
    resultPath: ["createChatMessage"],
    status: 201,
  },
  {
    method: "POST",
    path: "/chats/{chat_id}/messages/retry",
    operation: "retryChatReply",
    summary:
      "Generate the reply to the chat's last message again: after a failure, or replacing a complete reply (422 while one is being written)",
    tag: "Chats",
    resultPath: ["retryChatReply"],
    status: 202,
  },
  {
    method: "GET",
    path: "/audit-logs",
    operation: "listAuditLogs",
    summary: "Audit events, newest first (Bearer token of an admin or auditor; query keys are camelCase)",
    tag: "Audit logs",
    queryKeys: "camelCase",
    resultPath: ["auditEvents"],
    status: 200,
  },
];
