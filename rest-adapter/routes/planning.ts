import type { RestRoute } from "./route";

/** Household planning: budgets, recurring transactions, rules (docs/planning.md). */
export const planningRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/budgets",
    operation: "listBudgets",
    summary: "The family's monthly budgets, newest month first (start_date/end_date bound the months)",
    tag: "Budgets",
    resultPath: ["budgets"],
    status: 200,
  },
  {
    method: "GET",
    path: "/budgets/{id}",
    operation: "getBudget",
    summary: "Retrieve a budget with its actual spending and income (transfers left out, refunds netted)",
    tag: "Budgets",
    resultPath: ["budget"],
    status: 200,
  },
  {
    method: "GET",
    path: "/budget_categories",
    operation: "listBudgetCategories",
    summary: "Category allocations of the family's budgets, newest month first, then by category name",
    tag: "Budgets",
    resultPath: ["budgetCategories"],
    status: 200,
  },
  {
    method: "GET",
    path: "/budget_categories/{id}",
    operation: "getBudgetCategory",
    summary: "Retrieve one allocation with its actual spending (subcategories roll up into their parent)",
    tag: "Budgets",
    resultPath: ["budgetCategory"],
    status: 200,
  },
];
