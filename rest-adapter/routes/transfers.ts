import type { RestRoute } from "./route";

/** Transfers between the family's accounts. */
export const transferRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/transfers",
    operation: "listTransfers",
    summary: "The family's transfers between its own accounts, newest first (account_id matches either leg)",
    tag: "Transfers",
    resultPath: ["transfers"],
    status: 200,
  },
  {
    method: "GET",
    path: "/transfers/{id}",
    operation: "getTransfer",
    summary: "Retrieve a transfer with both legs",
    tag: "Transfers",
    resultPath: ["transfer"],
    status: 200,
  },
];
