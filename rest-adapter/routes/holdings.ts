import type { RestRoute } from "./route";

/** The balance sheet and investment holdings. */
export const holdingRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/balance_sheet",
    operation: "getBalanceSheet",
    summary: "Net worth, assets and liabilities in the family's currency; other currencies totalled apart, never converted",
    tag: "Accounts",
    resultPath: ["balanceSheet"],
    status: 200,
  },
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
