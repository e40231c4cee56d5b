import Decimal from "decimal.js";
import type { BudgetCategoryRow, CategoryNet } from "./budget.repository";
import { maxZero, ZERO } from "./planning.money";

/**
 * A period's actuals, from the per-category net amounts (stored sign: money out positive). Transfers
 * are already left out; a refund (money in on an expense category) lowers its category's spending; a
 * subcategory's transactions count for it and roll up into its parent. As upstream nets them, each
 * top-level category (and "uncategorized") is either net spending or net income for the period.
 */
export class BudgetActuals {
  private readonly own = new Map<string, Decimal>();
  private readonly rolled = new Map<string, Decimal>();
  readonly actualSpending: Decimal;
  readonly actualIncome: Decimal;

  constructor(nets: CategoryNet[]) {
    for (const { categoryId, parentId, net } of nets) {
      const amount = new Decimal(net);
      const own = categoryId ?? "uncategorized";
      this.own.set(own, (this.own.get(own) ?? ZERO).plus(amount));
      const top = parentId ?? own;
      this.rolled.set(top, (this.rolled.get(top) ?? ZERO).plus(amount));
    }
    let spending = ZERO;
    let income = ZERO;
    for (const net of this.rolled.values()) {
      spending = spending.plus(maxZero(net));
      income = income.plus(maxZero(net.negated()));
    }
    this.actualSpending = spending;
    this.actualIncome = income;
  }

  /** What a category spent: its own transactions for a subcategory, its subcategories' too for a parent; never below zero. */
  spentOn(categoryId: string, isSubcategory: boolean): Decimal {
    return maxZero((isSubcategory ? this.own.get(categoryId) : this.rolled.get(categoryId)) ?? ZERO);
  }
}

/** A subcategory without its own allocation shares its parent's (upstream's "inherits parent budget"). */
export function inheritsParent(row: BudgetCategoryRow): boolean {
  return row.categoryParentId !== null && new Decimal(row.budgetedSpending).isZero();
}

/** Upstream's available-to-spend of one allocation, given its budget's other allocations. */
export function availableToSpend(row: BudgetCategoryRow, siblings: BudgetCategoryRow[], actuals: BudgetActuals): Decimal {
  const spent = (r: BudgetCategoryRow) => actuals.spentOn(r.categoryId, r.categoryParentId !== null);
  if (row.categoryParentId !== null) {
    if (!inheritsParent(row)) return new Decimal(row.budgetedSpending).minus(spent(row));
    const parent = siblings.find((other) => other.categoryId === row.categoryParentId);
    return parent ? availableToSpend(parent, siblings, actuals) : ZERO;
  }
  const ringFenced = siblings.filter((other) => other.categoryParentId === row.categoryId && !inheritsParent(other));
  const fencedBudget = ringFenced.reduce((sum, other) => sum.plus(other.budgetedSpending), ZERO);
  const fencedSpent = ringFenced.reduce((sum, other) => sum.plus(spent(other)), ZERO);
  const sharedPool = new Decimal(row.budgetedSpending).minus(fencedBudget);
  return sharedPool.minus(spent(row).minus(fencedSpent));
}

/** What the UI shows as a subcategory's allocation: its own, or its parent's when it inherits. */
export function displayBudgeted(row: BudgetCategoryRow, siblings: BudgetCategoryRow[]): Decimal {
  if (!inheritsParent(row)) return new Decimal(row.budgetedSpending);
  const parent = siblings.find((other) => other.categoryId === row.categoryParentId);
  return parent ? new Decimal(parent.budgetedSpending) : ZERO;
}
