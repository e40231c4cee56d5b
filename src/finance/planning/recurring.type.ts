import { SafeIntResolver } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../money";
import { moneyView } from "./planning.money";
import { FlagScalar, WholeNumberScalar } from "./planning.scalars";
import type { RecurringRow } from "./recurring.repository";

@ObjectType("RecurringAccountRef")
export class RecurringAccountRefType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() accountType!: string;
}

@ObjectType("RecurringMerchantRef")
export class RecurringMerchantRefType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
}

@ObjectType("RecurringTransaction", {
  description: "A bill, subscription or income expected each month. Amounts use the stored sign: positive is money out.",
})
export class RecurringTransactionType {
  constructor(private readonly row: RecurringRow) {}

  @Field(() => ID) get id(): string {
    return this.row.id;
  }
  @Field(() => DecimalScalar) get amount(): string {
    return this.row.amount;
  }
  @Field(() => String, { description: 'e.g. "$15.99"; negative for income.' }) get formattedAmount(): string {
    return moneyView(this.row.amount, this.row.currency)!.formatted;
  }
  @Field(() => SafeIntResolver) get amountCents(): number {
    return moneyView(this.row.amount, this.row.currency)!.cents;
  }
  @Field(() => String) get currency(): string {
    return this.row.currency;
  }
  @Field(() => Int) get expectedDayOfMonth(): number {
    return this.row.expectedDayOfMonth;
  }
  @Field(() => CalendarDateScalar) get lastOccurrenceDate(): string {
    return this.row.lastOccurrenceDate;
  }
  @Field(() => CalendarDateScalar) get nextExpectedDate(): string {
    return this.row.nextExpectedDate;
  }
  @Field(() => String, { description: "active or inactive." }) get status(): string {
    return this.row.status;
  }
  @Field(() => Int) get occurrenceCount(): number {
    return this.row.occurrenceCount;
  }
  @Field(() => String, { nullable: true }) get name(): string | null {
    return this.row.name;
  }
  @Field(() => Boolean, { description: "Entered by hand (true) or detected from history (false)." }) get manual(): boolean {
    return this.row.manual;
  }
  @Field(() => DecimalScalar, { nullable: true, description: "The amount to expect next: the average when known, else the amount." })
  get expectedAmount(): string {
    return this.row.manual && this.row.expectedAmountAvg !== null ? this.row.expectedAmountAvg : this.row.amount;
  }
  @Field(() => String, { nullable: true }) get expectedAmountMinFormatted(): string | null {
    return moneyView(this.row.expectedAmountMin, this.row.currency)?.formatted ?? null;
  }
  @Field(() => SafeIntResolver, { nullable: true }) get expectedAmountMinCents(): number | null {
    return moneyView(this.row.expectedAmountMin, this.row.currency)?.cents ?? null;
  }
  @Field(() => String, { nullable: true }) get expectedAmountMaxFormatted(): string | null {
    return moneyView(this.row.expectedAmountMax, this.row.currency)?.formatted ?? null;
  }
  @Field(() => SafeIntResolver, { nullable: true }) get expectedAmountMaxCents(): number | null {
    return moneyView(this.row.expectedAmountMax, this.row.currency)?.cents ?? null;
  }
  @Field(() => String, { nullable: true }) get expectedAmountAvgFormatted(): string | null {
    return moneyView(this.row.expectedAmountAvg, this.row.currency)?.formatted ?? null;
  }
  @Field(() => SafeIntResolver, { nullable: true }) get expectedAmountAvgCents(): number | null {
    return moneyView(this.row.expectedAmountAvg, this.row.currency)?.cents ?? null;
  }
  @Field(() => RecurringAccountRefType, { nullable: true }) get account(): RecurringAccountRefType | null {
    return this.row.accountId ? { id: this.row.accountId, name: this.row.accountName!, accountType: this.row.accountType! } : null;
  }
  @Field(() => RecurringMerchantRefType, { nullable: true }) get merchant(): RecurringMerchantRefType | null {
    return this.row.merchantId ? { id: this.row.merchantId, name: this.row.merchantName! } : null;
  }
  @Field(() => Date) get createdAt(): Date {
    return this.row.createdAt;
  }
  @Field(() => Date) get updatedAt(): Date {
    return this.row.updatedAt;
  }
}

@ObjectType("RecurringTransactionPage")
export class RecurringTransactionPageType {
  @Field(() => [RecurringTransactionType]) items!: RecurringTransactionType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("RecurringTransactionFilter")
export class RecurringTransactionFilterInput {
  @Field(() => String, { nullable: true }) status?: string | null;
  @Field(() => ID, { nullable: true }) accountId?: string | null;
}

@InputType("RecurringTransactionInput", { description: "As sure-cli sends it: numbers and flags may also come as text." })
export class RecurringTransactionInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => DecimalScalar, { nullable: true, description: "Stored sign: positive for money out." }) amount?: string | null;
  @Field(() => String, { nullable: true }) currency?: string | null;
  @Field(() => ID, { nullable: true }) accountId?: string | null;
  @Field(() => ID, { nullable: true }) merchantId?: string | null;
  @Field(() => WholeNumberScalar, { nullable: true }) expectedDayOfMonth?: number | null;
  @Field(() => CalendarDateScalar, { nullable: true }) lastOccurrenceDate?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) nextExpectedDate?: string | null;
  @Field(() => String, { nullable: true }) status?: string | null;
  @Field(() => WholeNumberScalar, { nullable: true }) occurrenceCount?: number | null;
  @Field(() => FlagScalar, { nullable: true }) manual?: boolean | null;
  @Field(() => DecimalScalar, { nullable: true }) expectedAmountMin?: string | null;
  @Field(() => DecimalScalar, { nullable: true }) expectedAmountMax?: string | null;
  @Field(() => DecimalScalar, { nullable: true }) expectedAmountAvg?: string | null;
}

@InputType("RecurringTransactionUpdateInput", { description: "What upstream lets a client change." })
export class RecurringTransactionUpdateInput {
  @Field(() => String, { nullable: true }) status?: string | null;
  @Field(() => WholeNumberScalar, { nullable: true }) expectedDayOfMonth?: number | null;
  @Field(() => CalendarDateScalar, { nullable: true }) nextExpectedDate?: string | null;
}
