import { SafeIntResolver } from "graphql-scalars";
import { Field, ID, InputType, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../money";
import type { BudgetCategoryView, BudgetView } from "./budget.service";

/** Money fields come in threes: the formatted amount ("$1,200.00"), its minor units, and the exact decimal. */
@ObjectType("Budget", { description: "A family's budget for one calendar month (docs/planning.md)." })
export class BudgetType {
  constructor(private readonly view: BudgetView) {}

  @Field(() => ID) get id(): string {
    return this.view.row.id;
  }
  @Field(() => CalendarDateScalar) get startDate(): string {
    return this.view.row.startDate;
  }
  @Field(() => CalendarDateScalar) get endDate(): string {
    return this.view.row.endDate;
  }
  @Field(() => String, { description: 'The month, e.g. "November 2026".' }) get name(): string {
    return this.view.name;
  }
  @Field(() => String) get currency(): string {
    return this.view.row.currency;
  }
  @Field(() => Boolean, { description: "Whether a total to spend has been set." }) get initialized(): boolean {
    return this.view.initialized;
  }
  @Field(() => Boolean, { description: "Whether this is the current month's budget." }) get current(): boolean {
    return this.view.current;
  }
  @Field(() => DecimalScalar, { nullable: true }) get budgetedSpending(): string | null {
    return this.view.row.budgetedSpending;
  }
  @Field(() => String, { nullable: true }) get budgetedSpendingFormatted(): string | null {
    return this.view.budgetedSpending?.formatted ?? null;
  }
  @Field(() => SafeIntResolver, { nullable: true }) get budgetedSpendingCents(): number | null {
    return this.view.budgetedSpending?.cents ?? null;
  }
  @Field(() => DecimalScalar, { nullable: true }) get expectedIncome(): string | null {
    return this.view.row.expectedIncome;
  }
  @Field(() => String, { nullable: true }) get expectedIncomeFormatted(): string | null {
    return this.view.expectedIncome?.formatted ?? null;
  }
  @Field(() => SafeIntResolver, { nullable: true }) get expectedIncomeCents(): number | null {
    return this.view.expectedIncome?.cents ?? null;
  }
  @Field(() => String, { description: "Sum of the top-level categories' allocations, formatted." })
  get allocatedSpendingFormatted(): string {
    return this.view.allocatedSpending.formatted;
  }
  @Field(() => SafeIntResolver) get allocatedSpendingCents(): number {
    return this.view.allocatedSpending.cents;
  }
  @Field(() => String, { description: "Net spending of the month (expenses less refunds, transfers left out), formatted." })
  async actualSpendingFormatted(): Promise<string> {
    return (await this.view.derived()).actualSpending.formatted;
  }
  @Field(() => SafeIntResolver) async actualSpendingCents(): Promise<number> {
    return (await this.view.derived()).actualSpending.cents;
  }
  @Field(() => String, { description: "Net income of the month (transfers left out), formatted." })
  async actualIncomeFormatted(): Promise<string> {
    return (await this.view.derived()).actualIncome.formatted;
  }
  @Field(() => SafeIntResolver) async actualIncomeCents(): Promise<number> {
    return (await this.view.derived()).actualIncome.cents;
  }
  @Field(() => String, { description: "Budgeted spending less actual spending, formatted." })
  async availableToSpendFormatted(): Promise<string> {
    return (await this.view.derived()).availableToSpend.formatted;
  }
  @Field(() => SafeIntResolver) async availableToSpendCents(): Promise<number> {
    return (await this.view.derived()).availableToSpend.cents;
  }
  @Field(() => String, { description: "Budgeted spending less the allocations, formatted." })
  async availableToAllocateFormatted(): Promise<string> {
    return (await this.view.derived()).availableToAllocate.formatted;
  }
  @Field(() => SafeIntResolver) async availableToAllocateCents(): Promise<number> {
    return (await this.view.derived()).availableToAllocate.cents;
  }
  @Field(() => Date) get createdAt(): Date {
    return this.view.row.createdAt;
  }
  @Field(() => Date) get updatedAt(): Date {
    return this.view.row.updatedAt;
  }
}

@ObjectType("BudgetCategoryRef")
export class BudgetCategoryRefType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() color!: string;
  @Field() icon!: string;
  @Field(() => ID, { nullable: true }) parentId!: string | null;
}

@ObjectType("BudgetCategory", { description: "One category's allocation in a month's budget." })
export class BudgetCategoryType {
  constructor(private readonly view: BudgetCategoryView) {}

  @Field(() => ID) get id(): string {
    return this.view.row.id;
  }
  @Field(() => ID) get budgetId(): string {
    return this.view.row.budgetId;
  }
  @Field(() => String) get currency(): string {
    return this.view.row.currency;
  }
  @Field(() => Boolean) get subcategory(): boolean {
    return this.view.subcategory;
  }
  @Field(() => Boolean, { description: "A subcategory without its own allocation shares its parent's." })
  get inheritsParentBudget(): boolean {
    return this.view.inheritsParentBudget;
  }
  @Field(() => DecimalScalar) get budgetedSpending(): string {
    return this.view.row.budgetedSpending;
  }
  @Field(() => String) get budgetedSpendingFormatted(): string {
    return this.view.budgetedSpending.formatted;
  }
  @Field(() => SafeIntResolver) get budgetedSpendingCents(): number {
    return this.view.budgetedSpending.cents;
  }
  @Field(() => String, { description: "The allocation shown: the parent's for a subcategory that inherits it." })
  async displayBudgetedSpendingFormatted(): Promise<string> {
    return (await this.view.displayBudgetedSpending()).formatted;
  }
  @Field(() => SafeIntResolver) async displayBudgetedSpendingCents(): Promise<number> {
    return (await this.view.displayBudgetedSpending()).cents;
  }
  @Field(() => String, { description: "Net spending on the category (its subcategories' included for a parent), never below zero." })
  async actualSpendingFormatted(): Promise<string> {
    return (await this.view.derived()).actualSpending.formatted;
  }
  @Field(() => SafeIntResolver) async actualSpendingCents(): Promise<number> {
    return (await this.view.derived()).actualSpending.cents;
  }
  @Field(() => String) async availableToSpendFormatted(): Promise<string> {
    return (await this.view.derived()).availableToSpend.formatted;
  }
  @Field(() => SafeIntResolver) async availableToSpendCents(): Promise<number> {
    return (await this.view.derived()).availableToSpend.cents;
  }
  @Field(() => BudgetCategoryRefType) get category(): BudgetCategoryRefType {
    const row = this.view.row;
    return { id: row.categoryId, name: row.categoryName, color: row.categoryColor, icon: row.categoryIcon, parentId: row.categoryParentId };
  }
  @Field(() => Date) get createdAt(): Date {
    return this.view.row.createdAt;
  }
  @Field(() => Date) get updatedAt(): Date {
    return this.view.row.updatedAt;
  }
}

@ObjectType("BudgetPage")
export class BudgetPageType {
  @Field(() => [BudgetType]) items!: BudgetType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@ObjectType("BudgetCategoryPage")
export class BudgetCategoryPageType {
  @Field(() => [BudgetCategoryType]) items!: BudgetCategoryType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("BudgetFilter")
export class BudgetFilterInput {
  @Field(() => CalendarDateScalar, { nullable: true, description: "Budgets starting on or after this day." }) startDate?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Budgets ending on or before this day." }) endDate?: string | null;
}

@InputType("BudgetCategoryFilter")
export class BudgetCategoryFilterInput {
  @Field(() => ID, { nullable: true }) budgetId?: string | null;
  @Field(() => ID, { nullable: true }) categoryId?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) startDate?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) endDate?: string | null;
}

@InputType("BudgetInput", { description: "A month's totals; fields left out are unchanged, null clears." })
export class BudgetInput {
  @Field(() => CalendarDateScalar, { description: "Any day of the month." }) startDate!: string;
  @Field(() => DecimalScalar, { nullable: true }) budgetedSpending?: string | null;
  @Field(() => DecimalScalar, { nullable: true }) expectedIncome?: string | null;
}

@InputType("BudgetCategoryInput")
export class BudgetCategoryInput {
  @Field(() => ID) budgetId!: string;
  @Field(() => ID) categoryId!: string;
  @Field(() => DecimalScalar) budgetedSpending!: string;
}
