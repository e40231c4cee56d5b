import Decimal from "decimal.js";
import { absolute, negate } from "../money";

/**
 * The one home of the money rules, in TypeScript and in SQL. Every reader of the `transactions` table
 * that says "income", "expense" or "transfer" takes it from here.
 *
 * - A stored amount is positive (or zero) for money out and negative for money in (upstream's sign
 *   convention). A zero amount is an expense: it is money out that happens to be nothing, as upstream
 *   and the GraphQL `classification` field have always read it.
 * - A leg of a transfer between the family's own accounts is neither income nor expense: the money
 *   stayed in the family. The `type` filters, the assistant and every report leave transfers out of
 *   income and expense.
 */
export type MoneyKind = "income" | "expense" | "transfer";

/**
 * The amount to store for what a client sent. A nature ("income" or "expense") makes the sign explicit;
 * without one the amount is stored as sent.
 */
export function applyNature(amount: string, nature: "income" | "expense" | undefined): string {
  if (nature === "income") return negate(absolute(amount));
  if (nature === "expense") return absolute(amount);
  return amount;
}

/** Income or expense by sign alone, for one transaction seen without its transfer link. */
export function signKind(amount: Decimal.Value): "income" | "expense" {
  const value = new Decimal(amount);
  return value.isNegative() && !value.isZero() ? "income" : "expense";
}

/** What a transaction counts as in income, expense and every report. */
export function moneyKind(amount: Decimal.Value, isTransferLeg: boolean): MoneyKind {
  return isTransferLeg ? "transfer" : signKind(amount);
}

/** The size of a transaction, whatever its direction: what "over $100" and a report's figures mean. */
export function magnitude(amount: Decimal.Value): Decimal {
  return new Decimal(amount).abs();
}

/**
 * The same rules as SQL fragments over a transactions row aliased `alias` (default `t`). Only constant
 * text: no value of a request ever goes in here.
 */
export const moneySql = {
  /**
   * True when the row is one leg of a transfer between the family's own accounts. One EXISTS per leg
   * column, not one with an OR: PostgreSQL turns each into a hash (anti-)join over `transfers`, where
   * the OR forced two index probes per transaction (25× the buffers on a month of 30,000 rows; see
   * docs/benchmarks.md, planning benchmark).
   */
  isTransfer: (alias = "t") =>
    `(EXISTS (SELECT 1 FROM transfers x WHERE x.outflow_transaction_id = ${alias}.id) OR EXISTS (SELECT 1 FROM transfers x WHERE x.inflow_transaction_id = ${alias}.id))`,
  notTransfer: (alias = "t") =>
    `(NOT EXISTS (SELECT 1 FROM transfers x WHERE x.outflow_transaction_id = ${alias}.id) AND NOT EXISTS (SELECT 1 FROM transfers x WHERE x.inflow_transaction_id = ${alias}.id))`,
  /** Money in by sign alone: for rows a WHERE has already limited to non-transfers. */
  incomeSign: (alias = "t") => `${alias}.amount < 0`,
  /** Money out (zero included) by sign alone: for rows a WHERE has already limited to non-transfers. */
  expenseSign: (alias = "t") => `${alias}.amount >= 0`,
  /** Money in, transfers excluded. */
  isIncome: (alias = "t") => `(${moneySql.incomeSign(alias)} AND ${moneySql.notTransfer(alias)})`,
  /** Money out (zero included), transfers excluded. */
  isExpense: (alias = "t") => `(${moneySql.expenseSign(alias)} AND ${moneySql.notTransfer(alias)})`,
  /** 'income' | 'expense' | 'transfer' for the row. */
  kind: (alias = "t") =>
    `CASE WHEN ${moneySql.isTransfer(alias)} THEN 'transfer' WHEN ${moneySql.incomeSign(alias)} THEN 'income' ELSE 'expense' END`,
  /** The row's size as a positive number. */
  magnitude: (alias = "t") => `abs(${alias}.amount)`,
};
