import { Field, ID, InputType, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar } from "../money";

@ObjectType("ExchangeRate", {
  description:
    "One unit of fromCurrency is worth `rate` units of toCurrency from the end of `date` until the pair's next rate. Entered by the family; never fetched.",
  simpleResolvers: true,
})
export class ExchangeRateType {
  @Field(() => ID) id!: string;
  @Field({ description: "ISO 4217 code of the account's currency." }) fromCurrency!: string;
  @Field({ description: "ISO 4217 code it converts into (the family's currency, for totals)." }) toCurrency!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field({ description: 'An exact decimal, e.g. "1.0856".' }) rate!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("ExchangeRatePage")
export class ExchangeRatePageType {
  @Field(() => [ExchangeRateType]) items!: ExchangeRateType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@ObjectType("SetExchangeRatePayload")
export class SetExchangeRatePayload {
  @Field(() => ExchangeRateType) exchangeRate!: ExchangeRateType;
  @Field({ description: "False when the pair already had a rate on that day, now replaced." }) created!: boolean;
}

@InputType("ExchangeRateInput")
export class ExchangeRateInput {
  @Field(() => String) fromCurrency!: string;
  @Field(() => String) toCurrency!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => String, { description: 'A positive decimal with at most 12 decimal places, e.g. "1.0856".' }) rate!: string;
}

@InputType("ExchangeRateFilter")
export class ExchangeRateFilterInput {
  @Field(() => String, { nullable: true }) fromCurrency?: string;
  @Field(() => String, { nullable: true }) toCurrency?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
}

@ObjectType("CurrencyConversion", { description: "A currency converted into the family's for a total, and the rate used." })
export class CurrencyConversionType {
  @Field() currency!: string;
  @Field() rate!: string;
  @Field(() => CalendarDateScalar, { description: "The day the rate was entered for: the newest on or before the day totalled." })
  date!: string;
}
