import { bindParam, likePattern } from "../common/sql";
import { moneySql } from "./transaction.rules";

/**
 * The one way to filter transactions, shared by the REST/GraphQL list, the assistant's tools and every
 * other reader. Relations are given as arrays of ids (a transaction matches when it has any of them);
 * callers that start from names resolve them to ids first, against the family's own data.
 */
export type TransactionFilter = {
  accountIds?: readonly string[];
  categoryIds?: readonly string[];
  merchantIds?: readonly string[];
  /** Transactions carrying any of these tags. */
  tagIds?: readonly string[];
  /** Inclusive, YYYY-MM-DD. */
  startDate?: string;
  endDate?: string;
  /** Bounds on the size of the amount (see moneySql.magnitude), inclusive; decimal strings. */
  minAmount?: string;
  maxAmount?: string;
  /** Strict bounds on the size of the amount. */
  amountAbove?: string;
  amountBelow?: string;
  /** Income or expense as the money rules define them: transfer legs are neither. */
  type?: "income" | "expense";
  /** Matches the name, the notes and the merchant's name. */
  search?: string;
};

/** The WHERE conditions of `filter` over a transactions row aliased `t`, values bound through `bind`. */
export function transactionConditions(filter: TransactionFilter, bind: unknown[]): string[] {
  const conditions: string[] = [];
  const ids = (values: readonly string[]) => `${bindParam(bind, values)}::uuid[]`;
  if (filter.accountIds?.length) conditions.push(`t.account_id = ANY(${ids(filter.accountIds)})`);
  if (filter.categoryIds?.length) conditions.push(`t.category_id = ANY(${ids(filter.categoryIds)})`);
  if (filter.merchantIds?.length) conditions.push(`t.merchant_id = ANY(${ids(filter.merchantIds)})`);
  if (filter.tagIds?.length)
    conditions.push(`EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id AND tt.tag_id = ANY(${ids(filter.tagIds)}))`);
  if (filter.startDate) conditions.push(`t.date >= ${bindParam(bind, filter.startDate)}::date`);
  if (filter.endDate) conditions.push(`t.date <= ${bindParam(bind, filter.endDate)}::date`);
  // Amount bounds compare sizes: "over $100" means what a person means, for income and expense alike.
  const size = moneySql.magnitude();
  if (filter.minAmount) conditions.push(`${size} >= ${bindParam(bind, filter.minAmount)}::numeric`);
  if (filter.maxAmount) conditions.push(`${size} <= ${bindParam(bind, filter.maxAmount)}::numeric`);
  if (filter.amountAbove) conditions.push(`${size} > ${bindParam(bind, filter.amountAbove)}::numeric`);
  if (filter.amountBelow) conditions.push(`${size} < ${bindParam(bind, filter.amountBelow)}::numeric`);
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
