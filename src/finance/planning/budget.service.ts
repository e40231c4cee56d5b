import Decimal from "decimal.js";
import type { Sequelize } from "sequelize";
import type { AuditService } from "../../audit/log";
import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import type { Actor } from "../../platform/security/actor";
import { BudgetActuals, availableToSpend, displayBudgeted, inheritsParent } from "./budget.actuals";
import type { BudgetCategoryFilter, BudgetCategoryRow, BudgetFilter, BudgetRepository, BudgetRow } from "./budget.repository";
import { monthName, monthOf, moneyView, today, type MoneyView } from "./planning.money";

export type BudgetInput = { startDate?: string | null; budgetedSpending?: string | null; expectedIncome?: string | null };
export type BudgetCategoryInput = { budgetId?: string | null; categoryId?: string | null; budgetedSpending?: string | null };

/** A budget as clients read it; the derived amounts (actuals) are computed only when asked for. */
export class BudgetView {
  readonly name: string;
  readonly current: boolean;
  readonly initialized: boolean;
  readonly budgetedSpending: MoneyView | null;
  readonly expectedIncome: MoneyView | null;
  readonly allocatedSpending: MoneyView;
  private actuals?: Promise<BudgetActuals>;

  constructor(
    readonly row: BudgetRow,
    private readonly loadActuals: () => Promise<BudgetActuals>,
  ) {
    this.name = monthName(row.startDate);
    const month = monthOf(today());
    this.current = row.startDate === month.start && row.endDate === month.end;
    this.initialized = row.budgetedSpending !== null;
    this.budgetedSpending = moneyView(row.budgetedSpending, row.currency);
    this.expectedIncome = moneyView(row.expectedIncome, row.currency);
    this.allocatedSpending = moneyView(row.allocatedSpending, row.currency)!;
  }

  async derived(): Promise<{
    actualSpending: MoneyView;
    actualIncome: MoneyView;
    availableToSpend: MoneyView;
    availableToAllocate: MoneyView;
  }> {
    const actuals = await (this.actuals ??= this.loadActuals());
    const budgeted = new Decimal(this.row.budgetedSpending ?? 0);
    const currency = this.row.currency;
    return {
      actualSpending: moneyView(actuals.actualSpending, currency)!,
      actualIncome: moneyView(actuals.actualIncome, currency)!,
      availableToSpend: moneyView(budgeted.minus(actuals.actualSpending), currency)!,
      availableToAllocate: moneyView(budgeted.minus(this.row.allocatedSpending), currency)!,
    };
  }
}

export class BudgetCategoryView {
  readonly subcategory: boolean;
  readonly inheritsParentBudget: boolean;
  readonly budgetedSpending: MoneyView;
  private loaded?: Promise<{ siblings: BudgetCategoryRow[]; actuals: BudgetActuals }>;

  constructor(
    readonly row: BudgetCategoryRow,
    private readonly load: () => Promise<{ siblings: BudgetCategoryRow[]; actuals: BudgetActuals }>,
  ) {
    this.subcategory = row.categoryParentId !== null;
    this.inheritsParentBudget = inheritsParent(row);
    this.budgetedSpending = moneyView(row.budgetedSpending, row.currency)!;
  }

  async displayBudgetedSpending(): Promise<MoneyView> {
    if (!this.inheritsParentBudget) return this.budgetedSpending;
    const { siblings } = await (this.loaded ??= this.load());
    return moneyView(displayBudgeted(this.row, siblings), this.row.currency)!;
  }

  async derived(): Promise<{ actualSpending: MoneyView; availableToSpend: MoneyView }> {
    const { siblings, actuals } = await (this.loaded ??= this.load());
    return {
      actualSpending: moneyView(actuals.spentOn(this.row.categoryId, this.subcategory), this.row.currency)!,
      availableToSpend: moneyView(availableToSpend(this.row, siblings, actuals), this.row.currency)!,
    };
  }
}

const ACTION = "update";

/**
 * Monthly budgets as upstream models them: one per family and calendar month, an expected income, a
 * total to spend, and an allocation per category. Actuals are read from the month's transactions with
 * the shared money rules (docs/planning.md); nothing derived is stored.
 */
export class BudgetService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly budgets: BudgetRepository,
    private readonly audit: AuditService,
  ) {}

  async list(
    actor: Actor,
    filter: BudgetFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: BudgetView[]; pagination: PageInfo }> {
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.budgets.page(actor.familyId, filter, request.perPage, offsetOf(request));
    return { items: rows.map((row) => this.view(actor, row)), pagination: pageInfo(request, total) };
  }

  async get(actor: Actor, id: string): Promise<BudgetView> {
    const row = isUuid(id) ? await this.budgets.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Budget");
    return this.view(actor, row);
  }

  /** The month's actuals in one aggregate over its transactions. */
  async actuals(actor: Actor, row: Pick<BudgetRow, "currency" | "startDate" | "endDate">): Promise<BudgetActuals> {
    return new BudgetActuals(await this.budgets.netByCategory(actor.familyId, row.currency, row.startDate, row.endDate));
  }

  private view(actor: Actor, row: BudgetRow): BudgetView {
    return new BudgetView(row, () => this.actuals(actor, row));
  }

  async listCategories(
    actor: Actor,
    filter: BudgetCategoryFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: BudgetCategoryView[]; pagination: PageInfo }> {
    const problems = new ValidationErrors();
    if (filter.budgetId && !isUuid(filter.budgetId)) problems.add("budget_id must be a valid UUID");
    if (filter.categoryId && !isUuid(filter.categoryId)) problems.add("category_id must be a valid UUID");
    problems.throwIfAny();
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.budgets.categoriesPage(actor.familyId, filter, request.perPage, offsetOf(request));
    // One budget's allocations share one read of its siblings and actuals (one aggregate, not one per allocation).
    const loads = new Map<string, Promise<{ siblings: BudgetCategoryRow[]; actuals: BudgetActuals }>>();
    // A page that is one whole budget (what clients ask: ?budget_id=…) already holds its siblings.
    const wholeBudget = filter.budgetId && !filter.categoryId && !filter.startDate && !filter.endDate && rows.length === total;
    const siblings = wholeBudget ? rows : undefined;
    return { items: rows.map((row) => this.categoryView(actor, row, loads, siblings)), pagination: pageInfo(request, total) };
  }

  async getCategory(actor: Actor, id: string): Promise<BudgetCategoryView> {
    const row = isUuid(id) ? await this.budgets.categoryById(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Budget category");
    return this.categoryView(actor, row);
  }

  private categoryView(
    actor: Actor,
    row: BudgetCategoryRow,
    loads = new Map<string, Promise<{ siblings: BudgetCategoryRow[]; actuals: BudgetActuals }>>(),
    siblings?: BudgetCategoryRow[],
  ): BudgetCategoryView {
    return new BudgetCategoryView(row, () => {
      let load = loads.get(row.budgetId);
      if (!load) {
        load = Promise.all([
          siblings ?? this.budgets.categoriesOf(actor.familyId, row.budgetId),
          this.actuals(actor, { currency: row.currency, startDate: row.budgetStartDate, endDate: row.budgetEndDate }),
        ]).then(([siblings, actuals]) => ({ siblings, actuals }));
        loads.set(row.budgetId, load);
      }
      return load;
    });
  }

  /** Sets the month's totals, creating its budget (with every category at zero) on first write. */
  async setBudget(actor: Actor, input: BudgetInput): Promise<BudgetView> {
    const problems = new ValidationErrors();
    if (!input.startDate) problems.add("Start date can't be blank");
    for (const [label, value] of [
      ["Budgeted spending", input.budgetedSpending],
      ["Expected income", input.expectedIncome],
    ] as const)
      if (value !== null && value !== undefined && new Decimal(value).isNegative())
        problems.add(`${label} must be greater than or equal to 0`);
    problems.throwIfAny();
    const month = monthOf(input.startDate!);
    const id = await this.sequelize.transaction(async (transaction) => {
      const before = await this.budgets.byStart(actor.familyId, month.start, transaction);
      const budgetId = await this.budgets.ensure(actor.familyId, newId(), month, transaction);
      await this.budgets.setAmounts(
        budgetId,
        { budgetedSpending: input.budgetedSpending, expectedIncome: input.expectedIncome },
        transaction,
      );
      const after = (await this.budgets.byId(actor.familyId, budgetId, transaction))!;
      await this.audit.record(transaction, {
        type: "budget.updated",
        user: { id: actor.userId, email: actor.email },
        action: before ? ACTION : "create",
        resource: { type: "budget", id: budgetId, label: monthName(month.start) },
        changes: {
          budgeted_spending: { old: before?.budgetedSpending ?? null, new: after.budgetedSpending },
          expected_income: { old: before?.expectedIncome ?? null, new: after.expectedIncome },
        },
      });
      return budgetId;
    });
    return this.get(actor, id);
  }

  /** Sets one category's allocation in a budget. */
  async setCategory(actor: Actor, input: BudgetCategoryInput): Promise<BudgetCategoryView> {
    const problems = new ValidationErrors();
    if (!input.budgetId) problems.add("Budget can't be blank");
    if (!input.categoryId) problems.add("Category can't be blank");
    if (input.budgetedSpending === null || input.budgetedSpending === undefined) problems.add("Budgeted spending can't be blank");
    else if (new Decimal(input.budgetedSpending).isNegative()) problems.add("Budgeted spending must be greater than or equal to 0");
    problems.throwIfAny();
    const budget = await this.get(actor, input.budgetId!);
    const id = await this.sequelize.transaction(async (transaction) => {
      await this.budgets.ensure(actor.familyId, newId(), { start: budget.row.startDate, end: budget.row.endDate }, transaction);
      const rows = await this.budgets.categoriesOf(actor.familyId, budget.row.id, transaction);
      const before = isUuid(input.categoryId!) ? rows.find((row) => row.categoryId === input.categoryId) : undefined;
      if (!before) throw new NotFoundError("Category");
      const changed = [{ row: before, amount: new Decimal(input.budgetedSpending!) }];
      const parent = before.categoryParentId ? rows.find((row) => row.categoryId === before.categoryParentId) : undefined;
      if (parent) changed.push({ row: parent, amount: parentAllocation(parent, before, changed[0].amount, rows) });
      for (const { row, amount } of changed) {
        await this.budgets.setAllocation(actor.familyId, budget.row.id, row.categoryId, amount.toFixed(), transaction);
        await this.audit.record(transaction, {
          type: "budget.updated",
          user: { id: actor.userId, email: actor.email },
          action: ACTION,
          resource: { type: "budget_category", id: row.id, label: `${budget.name}: ${row.categoryName}` },
          changes: { budgeted_spending: { old: new Decimal(row.budgetedSpending).toFixed(), new: amount.toFixed() } },
        });
      }
      return before.id;
    });
    return this.getCategory(actor, id);
  }
}

/**
 * A parent category's allocation once one of its subcategories' changes, as upstream keeps it: the sum of
 * its subcategories' allocations plus the reserve the parent had beyond them (never a negative reserve, which
 * would leave the parent below its subcategories).
 */
function parentAllocation(parent: BudgetCategoryRow, child: BudgetCategoryRow, childAmount: Decimal, rows: BudgetCategoryRow[]): Decimal {
  const siblings = rows
    .filter((row) => row.categoryParentId === parent.categoryId && row.id !== child.id)
    .reduce((sum, row) => sum.plus(row.budgetedSpending), new Decimal(0));
  const reserve = Decimal.max(new Decimal(parent.budgetedSpending).minus(siblings).minus(child.budgetedSpending), 0);
  return siblings.plus(childAmount).plus(reserve);
}
