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
  const zero = new Decimal(0);
  const cash = type !== "non_cash";
  const loan = row.accountType === "loan";
  const invested = type === "investment";
  const start = new Decimal(row.startBalance);
  const end = new Decimal(row.endBalance);
  const startCash = cash ? new Decimal(row.startCashBalance) : zero;
  const endCash = cash ? new Decimal(row.endCashBalance) : zero;
  const startNonCash = start.minus(startCash);
  const endNonCash = end.minus(endCash);
  const net = new Decimal(row.inflows).minus(row.outflows).times(factor);
  const figures: Record<BalanceFigure, Decimal> = {
    balance: end,
    cashBalance: endCash,
    startCashBalance: startCash,
    startNonCashBalance: startNonCash,
    startBalance: start,
    cashInflows: cash ? new Decimal(row.inflows) : zero,
    cashOutflows: cash ? new Decimal(row.outflows) : zero,
    nonCashInflows: loan ? new Decimal(row.inflows) : zero,
    nonCashOutflows: loan ? new Decimal(row.outflows) : zero,
    netMarketFlows: invested ? new Decimal(row.endHoldingsValue).minus(row.startHoldingsValue) : zero,
    cashAdjustments: cash ? endCash.minus(startCash).minus(net) : zero,
    nonCashAdjustments: cash ? zero : endNonCash.minus(startNonCash).minus(loan ? net : zero),
    endCashBalance: endCash,
    endNonCashBalance: endNonCash,
    endBalance: end,
  };
  return Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, toAmountString(value)])) as Record<BalanceFigure, string>;
}
