import type { RestRoute } from "./route";

/** Investment holdings: as the bank providers report them, or as a manual account's trades make them. */
export const holdingRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/holdings",
    operation: "listHoldings",
    summary:
      "Investment holdings, every snapshot (reported by bank providers, or computed from a manual account's trades), newest date first",
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
