import { SafeIntResolver } from "graphql-scalars";
import { Field, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../money";
import { absolute, formatMoney, toMinorUnits } from "../money";
import { AccountType } from "../accounts";
import type { AccountRow } from "../accounts";
import { CategoryType } from "../categories";
import type { CategoryRow } from "../categories";
import { MerchantType } from "../merchants";
import type { MerchantRow } from "../merchants";
import { TagType } from "../tags";
import type { TagRow } from "../tags";
import type { TransactionRow } from "./transaction.repository";
import { signKind } from "./transaction.rules";

export enum TransactionClassification {
  income = "income",
  expense = "expense",
}
registerEnumType(TransactionClassification, { name: "TransactionClassification" });

/**
 * What a transaction points at, read ahead in one statement for the relations a query selects (see
 * TransactionRelationsReadAhead.readRelationsOf). A relation the query does not select is left undefined: nothing reads it.
 */
export type RelationLookup = {
  account(id: string): AccountRow | null | undefined;
  category(id: string): CategoryRow | null | undefined;
  merchant(id: string): MerchantRow | null | undefined;
  tagsOfTransaction(id: string): TagRow[] | undefined;
};

/**
 * The types a page of transactions serves hold every field as a plain property, derived fields and
 * relations included, with `simpleResolvers`: graphql-jit then reads each field inline instead of
 * calling a resolver per field and row (TypeGraphQL wraps every getter and field resolver in a
 * handler that collects its parameters on each call, which cost more than the page's SQL). So the
 * derived fields are worked out once when the object is built, and the relations come from the read
 * ahead. These types have no field middleware or field authorization that a wrapper would apply.
 */
@ObjectType("Transfer", { description: "The transfer this transaction is one leg of.", simpleResolvers: true })
export class TransferType {
  @Field(() => ID) id: string;
  @Field(() => DecimalScalar, { description: "Absolute amount of this leg." }) amount: string;
  @Field() currency: string;
  @Field({ description: 'Absolute amount formatted in its currency, e.g. "$75.50".' }) formattedAmount: string;
  @Field(() => AccountType, { description: "The account on the other side of the transfer." }) otherAccount: AccountRow | null | undefined;

  constructor(id: string, amount: string, currency: string, otherAccount: AccountRow | null | undefined) {
    this.id = id;
    this.amount = absolute(amount);
    this.currency = currency;
    this.formattedAmount = formatMoney(this.amount, currency);
    this.otherAccount = otherAccount;
  }
}

/** A transaction as GraphQL serves it (see TransferType for why every field is a plain property). */
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
  @Field(() => TransactionClassification, { description: "income when the stored amount is negative, else expense." })
  classification: TransactionClassification;
  @Field({ description: 'The stored signed amount formatted in its currency: income shows as "-$2.00", as upstream does.' })
  formattedAmount: string;
  @Field(() => SafeIntResolver, { description: "Absolute amount in minor units (cents; none for JPY, three for KWD)." })
  amountCents: number;
  @Field(() => SafeIntResolver, { description: "Minor units signed as a person reads them: positive for income, negative for expense." })
  signedAmountCents: number;
  @Field(() => AccountType) account: AccountRow | null | undefined;
  @Field(() => CategoryType, { nullable: true }) category: CategoryRow | null | undefined;
  @Field(() => MerchantType, { nullable: true }) merchant: MerchantRow | null | undefined;
  @Field(() => [TagType]) tags: TagRow[] | undefined;
  @Field(() => TransferType, { nullable: true }) transfer: TransferType | null;

  constructor(row: TransactionRow, relations: RelationLookup) {
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
    const income = signKind(row.amount) === "income";
    this.classification = income ? TransactionClassification.income : TransactionClassification.expense;
    this.formattedAmount = formatMoney(row.amount, row.currency);
    this.amountCents = toMinorUnits(row.amount, row.currency);
    this.signedAmountCents = income ? this.amountCents : -this.amountCents;
    this.account = relations.account(row.accountId);
    this.category = row.categoryId ? relations.category(row.categoryId) : null;
    this.merchant = row.merchantId ? relations.merchant(row.merchantId) : null;
    this.tags = relations.tagsOfTransaction(row.id);
    this.transfer = row.transferId
      ? new TransferType(row.transferId, row.amount, row.currency, relations.account(row.transferOtherAccountId!))
      : null;
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

@ObjectType("TransferPayload", { description: "A transfer between two of the family's accounts: its outflow and inflow legs." })
export class TransferPayload {
  @Field(() => ID) id!: string;
  @Field(() => TransactionType) outflow!: TransactionType;
  @Field(() => TransactionType) inflow!: TransactionType;
}

@ObjectType("TransferPage")
export class TransferPageType {
  @Field(() => [TransferPayload]) items!: TransferPayload[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("TransferFilter")
export class TransferFilterInput {
  @Field(() => ID, { nullable: true, description: "Either leg's account." }) accountId?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
  @Field(() => String, { nullable: true, description: "pending, confirmed or rejected; every transfer here is confirmed." })
  status?: string;
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
  @Field(() => [ID], { nullable: true, description: "Transactions in any of these accounts (and in accountId, when both are given)." })
  accountIds?: string[];
  @Field(() => ID, { nullable: true }) categoryId?: string;
  @Field(() => [ID], { nullable: true, description: "Transactions in any of these categories (and in categoryId, when both are given)." })
  categoryIds?: string[];
  @Field(() => ID, { nullable: true }) merchantId?: string;
  @Field(() => [ID], { nullable: true, description: "Transactions of any of these merchants (and of merchantId, when both are given)." })
  merchantIds?: string[];
  @Field(() => [ID], { nullable: true, description: "Transactions carrying any of these tags." }) tagIds?: string[];
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
  @Field(() => DecimalScalar, { nullable: true, description: "Minimum stored amount, signed: expenses are positive, income negative." })
  minAmount?: string;
  @Field(() => DecimalScalar, { nullable: true, description: "Maximum stored amount, signed: expenses are positive, income negative." })
  maxAmount?: string;
  @Field(() => String, {
    nullable: true,
    description: "income (money in) or expense (money out, zero included); transfers between own accounts are neither.",
  })
  type?: string;
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
