import { SafeIntResolver } from "graphql-scalars";
import { Field, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../money";

export enum SeriesIntervalEnum {
  DAY = "day",
  WEEK = "week",
  MONTH = "month",
}
registerEnumType(SeriesIntervalEnum, { name: "SeriesInterval", description: "The length of one point of a balance series." });

export enum BalanceFigureEnum {
  BALANCE = "balance",
  CASH_BALANCE = "cashBalance",
  START_CASH_BALANCE = "startCashBalance",
  START_NON_CASH_BALANCE = "startNonCashBalance",
  START_BALANCE = "startBalance",
  CASH_INFLOWS = "cashInflows",
  CASH_OUTFLOWS = "cashOutflows",
  NON_CASH_INFLOWS = "nonCashInflows",
  NON_CASH_OUTFLOWS = "nonCashOutflows",
  NET_MARKET_FLOWS = "netMarketFlows",
  CASH_ADJUSTMENTS = "cashAdjustments",
  NON_CASH_ADJUSTMENTS = "nonCashAdjustments",
  END_CASH_BALANCE = "endCashBalance",
  END_NON_CASH_BALANCE = "endNonCashBalance",
  END_BALANCE = "endBalance",
}
registerEnumType(BalanceFigureEnum, { name: "BalanceFigure", description: "One figure of a daily balance row." });

@ObjectType("LedgerAccountRef", { description: "The account a balance row or valuation belongs to.", simpleResolvers: true })
export class LedgerAccountRefType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() accountType!: string;
}

@ObjectType("Balance", {
  description:
    "An account's balance at the end of a day on which something happened to it (a transaction or a valuation), in its currency. The balance on any other day is the newest row before it.",
})
export class BalanceType {
  @Field(() => ID) id!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field() currency!: string;
  @Field(() => SafeIntResolver, { description: "1 on an asset, -1 on a liability." }) flowsFactor!: number;
  @Field(() => DecimalScalar, { description: "The balance at the end of the day." }) balance!: string;
  @Field(() => DecimalScalar) cashBalance!: string;
  @Field(() => DecimalScalar) startCashBalance!: string;
  @Field(() => DecimalScalar) startNonCashBalance!: string;
  @Field(() => DecimalScalar, { description: "The balance at the start of the day." }) startBalance!: string;
  @Field(() => DecimalScalar) cashInflows!: string;
  @Field(() => DecimalScalar) cashOutflows!: string;
  @Field(() => DecimalScalar) nonCashInflows!: string;
  @Field(() => DecimalScalar) nonCashOutflows!: string;
  @Field(() => DecimalScalar, {
    description: "An investment's change in holdings value over the day (no trades are recorded: all of it is market movement).",
  })
  netMarketFlows!: string;
  @Field(() => DecimalScalar, { description: "What a valuation changed beyond the day's transactions." }) cashAdjustments!: string;
  @Field(() => DecimalScalar) nonCashAdjustments!: string;
  @Field(() => DecimalScalar) endCashBalance!: string;
  @Field(() => DecimalScalar) endNonCashBalance!: string;
  @Field(() => DecimalScalar) endBalance!: string;
  @Field(() => LedgerAccountRefType) account!: LedgerAccountRefType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("BalancePage")
export class BalancePageType {
  @Field(() => [BalanceType]) items!: BalanceType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("BalanceFilter")
export class BalanceFilterInput {
  @Field(() => String, { nullable: true, description: "Rows of this account; another family's account matches nothing." })
  accountId?: string;
  @Field(() => String, { nullable: true, description: "ISO 4217 code of the accounts' currency." }) currency?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
}

@ObjectType("BalancePoint", { description: "The balance at the end of a day (the last day of an interval).", simpleResolvers: true })
export class BalancePointType {
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => DecimalScalar) balance!: string;
}

@ObjectType("NetWorthPoint", {
  description:
    "Net worth at the end of a day: the family's currency's point totals it and every currency converted into it; a currency without a rate that day has its own point.",
  simpleResolvers: true,
})
export class NetWorthPointType {
  @Field(() => CalendarDateScalar) date!: string;
  @Field() currency!: string;
  @Field(() => DecimalScalar) assets!: string;
  @Field(() => DecimalScalar, { description: "What is owed, as a positive amount." }) liabilities!: string;
  @Field(() => DecimalScalar) netWorth!: string;
  @Field(() => [String], { description: "The currencies whose balances this point totals: its own and those converted into it." })
  includedCurrencies!: string[];
  @Field(() => [String], {
    description: "On the family's currency's point: the currencies left out (no rate that day), each its own point.",
  })
  unconvertedCurrencies!: string[];
}

@ObjectType("Valuation", {
  description:
    "An account's value on a day: the opening anchor (where a manual account's history starts), the current anchor (a bank-fed account's provider balance) or a reconciliation.",
})
export class ValuationType {
  @Field(() => ID) id!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => DecimalScalar) amount!: string;
  @Field() currency!: string;
  @Field({ description: "opening_anchor, current_anchor or reconciliation." }) kind!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) notes!: string | null;
  @Field(() => LedgerAccountRefType) account!: LedgerAccountRefType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("ValuationPage")
export class ValuationPageType {
  @Field(() => [ValuationType]) items!: ValuationType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("ValuationFilter")
export class ValuationFilterInput {
  @Field(() => String, { nullable: true }) accountId?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
}

@InputType("ValuationInput", { description: "On update, amount and date go together; notes alone may change." })
export class ValuationInput {
  @Field(() => String, { nullable: true, description: "Create only." }) accountId?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) date?: string | null;
  @Field(() => DecimalScalar, { nullable: true, description: "The account's balance at the end of the day." }) amount?: string | null;
  @Field(() => String, { nullable: true }) notes?: string | null;
  @Field(() => Boolean, { nullable: true, description: "Create only: answer 200 rather than 201 when the day already had a valuation." })
  upsert?: boolean | null;
}

@ObjectType("CreateValuationPayload")
export class CreateValuationPayload {
  @Field(() => ValuationType) valuation!: ValuationType;
  @Field({ description: "False when the day already had a valuation, which was updated instead." }) created!: boolean;
  @Field({ description: "An upsert that updated the day's existing valuation (REST answers 200 then)." }) upserted!: boolean;
}
