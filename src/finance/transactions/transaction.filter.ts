import { bindParam, likePattern } from "../../platform/common/sql";
import { moneySql } from "./transaction.rules";

/**
 * The one way to filter transactions, shared by the REST/GraphQL list, the assistant's tools and every
 * other reader. Every key given narrows the result. Relations are given as arrays of ids (a transaction
 * matches when it has any of them) and, for upstream's clients, as one id: a single id and a list given
 * together must both hold. Callers that start from names resolve them to ids first, against the
 * family's own data.
 */
export type TransactionFilter = {
  accountId?: string;
  accountIds?: readonly string[];
  categoryId?: string;
  categoryIds?: readonly string[];
  merchantId?: string;
  merchantIds?: readonly string[];
  /** Transactions carrying any of these tags. */
  tagIds?: readonly string[];
  /** Inclusive, YYYY-MM-DD. */
  startDate?: string;
  endDate?: string;
  /**
   * Inclusive bounds on the stored, signed amount (expenses positive, income negative), as upstream's
   * min_amount/max_amount: a minimum of 0 keeps money out, a maximum of 0 money in. Decimal strings.
   */
  minSignedAmount?: string;
  maxSignedAmount?: string;
  /** Inclusive bounds on the size of the amount whatever its direction (see moneySql.magnitude). */
  minMagnitude?: string;
  maxMagnitude?: string;
  /** Strict bounds on the size of the amount. */
  magnitudeAbove?: string;
  magnitudeBelow?: string;
  /** Income or expense as the money rules define them: transfer legs are neither. */
  type?: "income" | "expense";
  /** Matches the name, the notes and the merchant's name. */
  search?: string;
};

/** The WHERE conditions of `filter` over a transactions row aliased `t`, values bound through `bind`. */
export function transactionConditions(filter: TransactionFilter, bind: unknown[]): string[] {
  const conditions: string[] = [];
  const ids = (values: readonly string[]) => `${bindParam(bind, values)}::uuid[]`;
  const id = (value: string) => `${bindParam(bind, value)}::uuid`;
  if (filter.accountId) conditions.push(`t.account_id = ${id(filter.accountId)}`);
  if (filter.categoryId) conditions.push(`t.category_id = ${id(filter.categoryId)}`);
  if (filter.merchantId) conditions.push(`t.merchant_id = ${id(filter.merchantId)}`);
  if (filter.accountIds?.length) conditions.push(`t.account_id = ANY(${ids(filter.accountIds)})`);
  if (filter.categoryIds?.length) conditions.push(`t.category_id = ANY(${ids(filter.categoryIds)})`);
  if (filter.merchantIds?.length) conditions.push(`t.merchant_id = ANY(${ids(filter.merchantIds)})`);
  if (filter.tagIds?.length)
    conditions.push(`EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id AND tt.tag_id = ANY(${ids(filter.tagIds)}))`);
  if (filter.startDate) conditions.push(`t.date >= ${bindParam(bind, filter.startDate)}::date`);
  if (filter.endDate) conditions.push(`t.date <= ${bindParam(bind, filter.endDate)}::date`);
  // Signed bounds are upstream's contract, which its clients rely on (min_amount=0 keeps expenses).
  if (filter.minSignedAmount) conditions.push(`t.amount >= ${bindParam(bind, filter.minSignedAmount)}::numeric`);
  if (filter.maxSignedAmount) conditions.push(`t.amount <= ${bindParam(bind, filter.maxSignedAmount)}::numeric`);
  // Size bounds are what a person means by "over $100", for income and expense alike.
  const size = moneySql.magnitude();
  if (filter.minMagnitude) conditions.push(`${size} >= ${bindParam(bind, filter.minMagnitude)}::numeric`);
  if (filter.maxMagnitude) conditions.push(`${size} <= ${bindParam(bind, filter.maxMagnitude)}::numeric`);
  if (filter.magnitudeAbove) conditions.push(`${size} > ${bindParam(bind, filter.magnitudeAbove)}::numeric`);
  if (filter.magnitudeBelow) conditions.push(`${size} < ${bindParam(bind, filter.magnitudeBelow)}::numeric`);
  if (filter.type === "income") conditions.push(moneySql.isIncome());
  if (filter.type === "expense") conditions.push(moneySql.isExpense());
  if (filter.search) {
    const pattern = bindParam(bind, likePattern(filter.search));
    conditions.push(
      `(t.name ILIKE ${pattern} OR t.notes ILIKE ${pattern} OR EXISTS (SELECT 1 FROM merchants m WHERE m.id = t.merchant_id AND m.name ILIKE ${pattern}))`,
    );
  }
  return conditions;
}
