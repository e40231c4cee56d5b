import { SafeIntResolver } from "graphql-scalars";
import { Field, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { PaginationType } from "../common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../graphql/scalars";
import { absolute, formatMoney, isNegative, toMinorUnits } from "../money/money";
import type { TransactionRow } from "./transaction.repository";

export enum TransactionClassification {
  income = "income",
  expense = "expense",
}
registerEnumType(TransactionClassification, { name: "TransactionClassification" });

@ObjectType("Transfer", { description: "The transfer this transaction is one leg of.", simpleResolvers: true })
export class TransferType {
  @Field(() => ID) id: string;
  @Field(() => DecimalScalar, { description: "Absolute amount of this leg." }) amount: string;
  @Field() currency: string;
  readonly otherAccountId: string;

  constructor(id: string, amount: string, currency: string, otherAccountId: string) {
    this.id = id;
    this.amount = absolute(amount);
    this.currency = currency;
    this.otherAccountId = otherAccountId;
  }

  @Field({ description: 'Absolute amount formatted in its currency, e.g. "$75.50".' })
  get formattedAmount(): string {
    return formatMoney(this.amount, this.currency);
  }
}

/**
 * A transaction as GraphQL serves it. Derived fields are getters, so they cost nothing unless selected.
 * Relations (account, category, merchant, tags, transfer.otherAccount) resolve through DataLoaders.
 *
 * `simpleResolvers` (here and on the other types a page of transactions serves): plain fields use
 * GraphQL's default property read instead of a TypeGraphQL wrapper per field and row, which graphql-jit
 * then inlines. These types have no field middleware or field authorization that the wrapper would apply.
 */
@ObjectType("Transaction", { simpleResolvers: true })
export class TransactionType {
  @Field(() => ID) id: string;
  @Field(() => CalendarDateScalar) date: string;
  @Field(() => DecimalScalar, { description: "Signed as stored: positive is money out (expense), negative is money in (income)." })
  amount: string;
  @Field({ description: "ISO 4217 code." }) currency: string;
  @Field() name: string;
  @Field(() => String, { nullable: true }) notes: string | null;
  @Field() pending: boolean;
  @Field(() => String, { nullable: true }) externalId: string | null;
  @Field(() => String, { nullable: true }) source: string | null;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
  @Field(() => TransferType, { nullable: true }) transfer: TransferType | null;
  readonly accountId: string;
  readonly categoryId: string | null;
  readonly merchantId: string | null;

  constructor(row: TransactionRow) {
    this.id = row.id;
    this.date = row.date;
    this.amount = row.amount;
    this.currency = row.currency;
    this.name = row.name;
    this.notes = row.notes;
    this.pending = row.pending;
    this.externalId = row.externalId;
    this.source = row.source;
    this.createdAt = row.createdAt;
    this.updatedAt = row.updatedAt;
    this.accountId = row.accountId;
    this.categoryId = row.categoryId;
    this.merchantId = row.merchantId;
    this.transfer = row.transferId ? new TransferType(row.transferId, row.amount, row.currency, row.transferOtherAccountId!) : null;
  }

  @Field(() => TransactionClassification, { description: "income when the stored amount is negative, else expense." })
  get classification(): TransactionClassification {
    return this.isIncome() ? TransactionClassification.income : TransactionClassification.expense;
  }

  @Field({ description: 'The stored signed amount formatted in its currency: income shows as "-$2.00", as upstream does.' })
  get formattedAmount(): string {
    return formatMoney(this.amount, this.currency);
  }

  @Field(() => SafeIntResolver, { description: "Absolute amount in minor units (cents; none for JPY, three for KWD)." })
  get amountCents(): number {
    return (this.minorUnits ??= toMinorUnits(this.amount, this.currency));
  }

  @Field(() => SafeIntResolver, { description: "Minor units signed as a person reads them: positive for income, negative for expense." })
  get signedAmountCents(): number {
    return this.isIncome() ? this.amountCents : -this.amountCents;
  }

  // Several derived fields read the same two facts; each is worked out once per transaction, not per field.
  private minorUnits?: number;
  private negative?: boolean;

  private isIncome(): boolean {
    return (this.negative ??= isNegative(this.amount));
  }
}

@ObjectType("TransactionPage", { simpleResolvers: true })
export class TransactionPageType {
  @Field(() => [TransactionType]) items!: TransactionType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@ObjectType("CreateTransactionPayload")
export class CreateTransactionPayload {
  @Field(() => TransactionType) transaction!: TransactionType;
  @Field({ description: "False when an existing transaction with the same externalId and source was returned instead." })
  created!: boolean;
}

@ObjectType("TransferPayload")
export class TransferPayload {
  @Field(() => ID) id!: string;
  @Field(() => TransactionType) outflow!: TransactionType;
  @Field(() => TransactionType) inflow!: TransactionType;
}

@InputType("TransactionInput", { description: "On update, fields left out are unchanged and null clears optional fields." })
export class TransactionInput {
  @Field(() => ID, { nullable: true }) accountId?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) date?: string | null;
  @Field(() => DecimalScalar, { nullable: true, description: "Sign as sent unless nature says otherwise." }) amount?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: "Alias of name." }) description?: string | null;
  @Field(() => String, { nullable: true }) notes?: string | null;
  @Field(() => String, { nullable: true, description: "ISO 4217; defaults to the account's currency." }) currency?: string | null;
  @Field(() => ID, { nullable: true }) categoryId?: string | null;
  @Field(() => ID, { nullable: true }) merchantId?: string | null;
  @Field(() => String, { nullable: true, description: "income | inflow store a negative amount; expense | outflow a positive one." })
  nature?: string | null;
  @Field(() => [ID], { nullable: true, description: "Replaces the transaction's tags." }) tagIds?: string[] | null;
  @Field(() => String, { nullable: true, description: "Idempotency key per account (with source)." }) externalId?: string | null;
  @Field(() => String, { nullable: true }) source?: string | null;
  @Field(() => Boolean, { nullable: true }) pending?: boolean | null;
}

@InputType("TransactionFilter")
export class TransactionFilterInput {
  @Field(() => ID, { nullable: true }) accountId?: string;
  @Field(() => ID, { nullable: true }) categoryId?: string;
  @Field(() => ID, { nullable: true }) merchantId?: string;
  @Field(() => [ID], { nullable: true, description: "Transactions carrying any of these tags." }) tagIds?: string[];
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
  @Field(() => DecimalScalar, { nullable: true, description: "Minimum absolute amount." }) minAmount?: string;
  @Field(() => DecimalScalar, { nullable: true, description: "Maximum absolute amount." }) maxAmount?: string;
  @Field(() => String, { nullable: true, description: "income or expense." }) type?: string;
  @Field(() => String, { nullable: true, description: "Matches name, notes and merchant name." }) search?: string;
}

@InputType("TransferInput")
export class TransferInput {
  @Field(() => ID) fromAccountId!: string;
  @Field(() => ID) toAccountId!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => DecimalScalar) amount!: string;
  @Field(() => DecimalScalar, { nullable: true, description: "Amount received, required when the currencies differ." }) toAmount?:
    string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) notes?: string | null;
}
