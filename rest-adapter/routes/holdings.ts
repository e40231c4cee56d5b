import type { RestRoute } from "./route";

/** Investment holdings: as the bank providers report them, or as a manual account's trades make them. */
export const holdingRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/holdings",
    operation: "listHoldings",
    summary:
      "Investment holdings, oldest date first (as upstream lists them; within a day by account): every snapshot reported by bank providers, and a manual account's holding of every security on every day from its first to today (computed from its trades and prices)",
    tag: "Holdings",
    resultPath: ["holdings"],
    status: 200,
  },
  {
    method: "GET",
    path: "/holdings/{id}",
    operation: "getHolding",
    summary: "Retrieve a holding",
    tag: "Holdings",
    resultPath: ["holding"],
    status: 200,
  },
];
