import { Field, ID, InputType, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CurrencyConversionType } from "../exchange-rates";
import { DecimalScalar } from "../money";

@ObjectType("Account", { simpleResolvers: true })
export class AccountType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field({ description: "depository, investment, crypto, property, vehicle, other_asset, credit_card, loan or other_liability." })
  accountType!: string;
  @Field({ description: "asset or liability, from the account type." }) classification!: string;
  @Field({ description: "ISO 4217 code." }) currency!: string;
  @Field(() => DecimalScalar) balance!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("AccountPage")
export class AccountPageType {
  @Field(() => [AccountType]) items!: AccountType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("AccountInput", { description: "On update, fields left out are unchanged." })
export class AccountInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) accountType?: string | null;
  @Field(() => String, { nullable: true, description: "Defaults to the family's currency." }) currency?: string | null;
  @Field(() => DecimalScalar, { nullable: true }) balance?: string | null;
}

@ObjectType("MoneyAmount", { description: "An amount with its currency and its formatted text, as upstream's Money serializes." })
export class MoneyAmountType {
  @Field(() => DecimalScalar) amount!: string;
  @Field() currency!: string;
  @Field({ description: '"$1,234.50"' }) formatted!: string;
}

@ObjectType("BalanceSheetTotals", { description: "Totals of the accounts held in one currency." })
export class BalanceSheetTotalsType {
  @Field() currency!: string;
  @Field(() => MoneyAmountType, { description: "Assets minus liabilities." }) netWorth!: MoneyAmountType;
  @Field(() => MoneyAmountType) assets!: MoneyAmountType;
  @Field(() => MoneyAmountType, { description: "What is owed, as a positive amount." }) liabilities!: MoneyAmountType;
}

@ObjectType("BalanceSheet", {
  description:
    "The family's totals in its currency. An account in another currency is converted with the newest exchange rate the family entered on or before today; " +
    "one without a rate is left out of the totals, listed in unconvertedAccounts and totalled apart in otherCurrencies, never added as if it were the family's currency.",
})
export class BalanceSheetType extends BalanceSheetTotalsType {
  @Field({ description: "True when every account is in the totals (in the family's currency or converted into it)." }) complete!: boolean;
  @Field(() => [CurrencyConversionType], { description: "The currencies converted into the family's, with the rate used." })
  conversions!: CurrencyConversionType[];
  @Field(() => [AccountType], { description: "Accounts in a currency without a rate on or before today: not in the totals." })
  unconvertedAccounts!: AccountType[];
  @Field(() => [BalanceSheetTotalsType], { description: "The unconverted accounts' totals, one per currency, in that currency." })
  otherCurrencies!: BalanceSheetTotalsType[];
}
