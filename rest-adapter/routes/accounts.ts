import type { RestRoute } from "./route";

/** Accounts. */
export const accountRoutes: RestRoute[] = [
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
];
