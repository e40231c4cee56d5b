import type { RestRoute } from "./route";

/** Investment holdings as the bank providers report them. */
export const holdingRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/holdings",
    operation: "listHoldings",
    summary: "Investment holdings the bank providers reported, every snapshot, newest date first",
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
