import { sumAmounts } from "../money";
import type { BalanceRow } from "./ledger.repository";

/** Upstream's split of an account's value: all cash, all non-cash (a house, a loan's principal), or cash plus holdings. */
export type BalanceType = "cash" | "non_cash" | "investment";

export function balanceTypeOf(accountType: string): BalanceType {
  if (accountType === "depository" || accountType === "credit_card") return "cash";
  if (accountType === "investment" || accountType === "crypto") return "investment";
  return "non_cash";
}

/**
 * The part of an account's balance that is cash: none of a house's or a loan's value; an investment's
 * balance less its holdings (the ledger keeps it as `cashBalance`, falling back to the whole balance).
 */
export function cashPart(accountType: string, balance: string, cashBalance?: string | null): string {
  const type = balanceTypeOf(accountType);
  if (type === "non_cash") return "0";
  return type === "investment" && cashBalance != null ? cashBalance : balance;
}

/** Every figure of upstream's balance row, in the order its API lists them. */
export const BALANCE_FIGURES = [
  "balance",
  "cashBalance",
  "startCashBalance",
  "startNonCashBalance",
  "startBalance",
  "cashInflows",
  "cashOutflows",
  "nonCashInflows",
  "nonCashOutflows",
  "netMarketFlows",
  "cashAdjustments",
  "nonCashAdjustments",
  "endCashBalance",
  "endNonCashBalance",
  "endBalance",
] as const;

export type BalanceFigure = (typeof BALANCE_FIGURES)[number];

/** +1 on an asset, −1 on a liability: money in raises an asset and lowers what is owed. */
export function flowsFactorOf(classification: string): 1 | -1 {
  return classification === "liability" ? -1 : 1;
}

/**
 * A derived row (start, end, money in and out, the cash part, holdings) as upstream's figures.
 * Transactions move cash, but a loan's move its (non-cash) principal; an investment's non-cash part
 * is its holdings, whose change is the day's market flows (no trades yet: no buys or sells); the
 * adjustments are what valuations changed beyond the day's flows.
 */
export function balanceFigures(row: BalanceRow): Record<BalanceFigure, string> {
  const type = balanceTypeOf(row.accountType);
  const factor = flowsFactorOf(row.classification);
  const cash = type !== "non_cash";
  const loan = row.accountType === "loan";
  const invested = type === "investment";
  // Every figure is a signed sum of the row's amounts (sumAmounts: exact, written as toAmountString writes).
  const startCash = cash ? row.startCashBalance : "0";
  const endCash = cash ? row.endCashBalance : "0";
  const end = sumAmounts([[row.endBalance, 1]]);
  const start = sumAmounts([[row.startBalance, 1]]);
  const endCashBalance = sumAmounts([[endCash, 1]]);
  const startCashBalance = sumAmounts([[startCash, 1]]);
  const endNonCash = sumAmounts([
    [row.endBalance, 1],
    [endCash, -1],
  ]);
  const startNonCash = sumAmounts([
    [row.startBalance, 1],
    [startCash, -1],
  ]);
  // net = (inflows − outflows) × factor; an adjustment is what the day's change holds beyond it.
  const adjustment = (to: string, from: string, withNet: boolean) =>
    sumAmounts([
      [to, 1],
      [from, -1],
      [row.inflows, withNet ? -factor : 0],
      [row.outflows, withNet ? factor : 0],
    ]);
  return {
    balance: end,
    cashBalance: endCashBalance,
    startCashBalance,
    startNonCashBalance: startNonCash,
    startBalance: start,
    cashInflows: cash ? sumAmounts([[row.inflows, 1]]) : "0",
    cashOutflows: cash ? sumAmounts([[row.outflows, 1]]) : "0",
    nonCashInflows: loan ? sumAmounts([[row.inflows, 1]]) : "0",
    nonCashOutflows: loan ? sumAmounts([[row.outflows, 1]]) : "0",
    netMarketFlows: invested
      ? sumAmounts([
          [row.endHoldingsValue, 1],
          [row.startHoldingsValue, -1],
        ])
      : "0",
    cashAdjustments: cash ? adjustment(endCash, startCash, true) : "0",
    nonCashAdjustments: cash ? "0" : adjustment(endNonCash, startNonCash, loan),
    endCashBalance,
    endNonCashBalance: endNonCash,
    endBalance: end,
  };
}
