import Decimal from "decimal.js";
import { toAmountString } from "../money";
import type { BalanceRow } from "./ledger.repository";

/** Upstream's split of an account's value: all cash, all non-cash (a house, a loan's principal), or cash plus holdings. */
export type BalanceType = "cash" | "non_cash" | "investment";

export function balanceTypeOf(accountType: string): BalanceType {
  if (accountType === "depository" || accountType === "credit_card") return "cash";
  if (accountType === "investment" || accountType === "crypto") return "investment";
  return "non_cash";
}

/** The part of a balance that is cash: none of a house's or a loan's value. Holdings are not valued here, so an investment's balance is all cash. */
export function cashPart(accountType: string, balance: string): string {
  return balanceTypeOf(accountType) === "non_cash" ? "0" : balance;
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
 * A stored row (start, end, money in and out) as upstream's figures. Transactions move cash, but a
 * loan's move its (non-cash) principal; adjustments are what valuations changed beyond the day's flows.
 */
export function balanceFigures(row: BalanceRow): Record<BalanceFigure, string> {
  const type = balanceTypeOf(row.accountType);
  const factor = flowsFactorOf(row.classification);
  const start = new Decimal(row.startBalance);
  const end = new Decimal(row.endBalance);
  const zero = new Decimal(0);
  const cash = type !== "non_cash";
  const loan = row.accountType === "loan";
  const net = new Decimal(row.inflows).minus(row.outflows).times(factor);
  const adjustment = end.minus(start).minus(cash || loan ? net : zero);
  const figures: Record<BalanceFigure, Decimal> = {
    balance: end,
    cashBalance: cash ? end : zero,
    startCashBalance: cash ? start : zero,
    startNonCashBalance: cash ? zero : start,
    startBalance: start,
    cashInflows: cash ? new Decimal(row.inflows) : zero,
    cashOutflows: cash ? new Decimal(row.outflows) : zero,
    nonCashInflows: loan ? new Decimal(row.inflows) : zero,
    nonCashOutflows: loan ? new Decimal(row.outflows) : zero,
    netMarketFlows: zero,
    cashAdjustments: cash ? adjustment : zero,
    nonCashAdjustments: cash ? zero : adjustment,
    endCashBalance: cash ? end : zero,
    endNonCashBalance: cash ? zero : end,
    endBalance: end,
  };
  return Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, toAmountString(value)])) as Record<BalanceFigure, string>;
}
