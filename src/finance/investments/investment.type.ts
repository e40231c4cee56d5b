import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../money";
import { LedgerAccountRefType } from "../ledger";
import { FlagScalar } from "../planning";
import { TransactionType, TransferPayload } from "../transactions";

@ObjectType("Security", {
  description: "A security (stock, fund, coin), shared by every family; a family sees those its accounts hold or trade.",
})
export class SecurityType {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) ticker!: string | null;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) isin?: string | null;
  @Field(() => String, { nullable: true }) figi?: string | null;
  @Field(() => String, { nullable: true }) cusip?: string | null;
  @Field(() => String, { nullable: true, description: "standard or cash (null where only a holding's reference was read)." })
  kind?: string | null;
  @Field(() => String, { nullable: true }) countryCode?: string | null;
  @Field(() => String, { nullable: true }) exchangeMic?: string | null;
  @Field(() => String, { nullable: true }) exchangeAcronym?: string | null;
  @Field(() => String, { nullable: true }) exchangeOperatingMic?: string | null;
  @Field(() => String, { nullable: true }) exchangeName?: string | null;
  @Field(() => Boolean, {
    nullable: true,
    description: "True when no price provider quotes it; prices here come from the API, providers' holdings or imports.",
  })
  offline?: boolean | null;
  @Field(() => String, { nullable: true }) offlineReason?: string | null;
  @Field(() => String, { nullable: true }) websiteUrl?: string | null;
  @Field(() => String, { nullable: true }) logoUrl?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) firstProviderPriceOn?: string | null;
  @Field(() => Date, { nullable: true }) createdAt?: Date | null;
  @Field(() => Date, { nullable: true }) updatedAt?: Date | null;
}

@ObjectType("SecurityPage")
export class SecurityPageType {
  @Field(() => [SecurityType]) items!: SecurityType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("SecurityFilter")
export class SecurityFilterInput {
  @Field(() => String, { nullable: true, description: "Case-insensitive." }) ticker?: string;
  @Field(() => String, { nullable: true }) exchangeOperatingMic?: string;
  @Field(() => String, { nullable: true, description: "standard or cash." }) kind?: string;
  @Field(() => FlagScalar, { nullable: true, description: "true, false, 1 or 0 (anything else is refused, as upstream's)." })
  offline?: boolean;
}

@ObjectType("SecurityRef", { description: "The security a price, trade or holding is of.", simpleResolvers: true })
export class SecurityRefType {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) ticker!: string | null;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) exchangeOperatingMic!: string | null;
}

@ObjectType("SecurityPrice", { description: "A security's price on a day, in a currency." })
export class SecurityPriceType {
  @Field(() => ID) id!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => DecimalScalar) price!: string;
  @Field() currency!: string;
  @Field() provisional!: boolean;
  @Field(() => SecurityRefType) security!: SecurityRefType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("SecurityPricePage")
export class SecurityPricePageType {
  @Field(() => [SecurityPriceType]) items!: SecurityPriceType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("SecurityPriceFilter")
export class SecurityPriceFilterInput {
  @Field(() => String, { nullable: true }) securityId?: string;
  @Field(() => String, { nullable: true }) currency?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
  @Field(() => FlagScalar, { nullable: true, description: "true, false, 1 or 0 (anything else is refused, as upstream's)." })
  provisional?: boolean;
}

@InputType("SecurityPriceInput", {
  description: "A security's price on a day: the security by id or by ticker (VTI, or VTI|ARCX with its exchange's operating MIC).",
})
export class SecurityPriceInput {
  @Field(() => ID, { nullable: true }) securityId?: string | null;
  @Field(() => String, { nullable: true, description: "A known security's ticker; TICKER|MIC when several share it." }) ticker?:
    string | null;
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => String, { description: 'Per unit, above 0, at most 10 decimals ("231.4567").' }) price!: string;
  @Field(() => String, { description: "ISO 4217; a manual account is valued with the prices in its currency." }) currency!: string;
}

@ObjectType("SecurityPricesRecorded")
export class SecurityPricesRecordedType {
  @Field(() => [SecurityPriceType], { description: "The prices as stored now, in the order given." }) prices!: SecurityPriceType[];
  @Field(() => Int, { description: "How many were new or different (the others were stored already and changed nothing)." })
  changedCount!: number;
  @Field(() => Int, { description: "Manual investment accounts revalued, across every family." }) revaluedAccountCount!: number;
}

@ObjectType("TradeCategory", { simpleResolvers: true })
export class TradeCategoryType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
}

@ObjectType("Trade", {
  description:
    "A buy or sell of a security on an investment account (an entry moving the account's cash and its holding), or a dividend, interest or fee (cash only: no quantity, no price).",
})
export class TradeType {
  @Field(() => ID) id!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => DecimalScalar, {
    description:
      "The cash it moves, signed as a transaction's: qty × price + fee (positive is cash out: a buy, a fee; negative in: a sell, a dividend).",
  })
  amount!: string;
  @Field() currency!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) notes!: string | null;
  @Field(() => DecimalScalar, { description: "Signed: negative sells." }) qty!: string;
  @Field(() => DecimalScalar, { description: "Price per unit." }) price!: string;
  @Field(() => DecimalScalar) fee!: string;
  @Field(() => String, { nullable: true }) investmentActivityLabel!: string | null;
  @Field(() => LedgerAccountRefType) account!: LedgerAccountRefType;
  @Field(() => SecurityRefType) security!: SecurityRefType;
  @Field(() => TradeCategoryType, { nullable: true }) category!: TradeCategoryType | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("TradePage")
export class TradePageType {
  @Field(() => [TradeType]) items!: TradeType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("TradeFilter")
export class TradeFilterInput {
  @Field(() => String, { nullable: true }) accountId?: string;
  @Field(() => [String], { nullable: true, description: "Trades of any of these accounts (and of accountId, when both are given)." })
  accountIds?: string[];
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
}

@InputType("TradeInput", { description: "On update, fields left out are unchanged; qty, price and type re-derive the amount and name." })
export class TradeInput {
  @Field(() => String, { nullable: true, description: "Create only." }) accountId?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) date?: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "buy, sell, sweep_in, sweep_out, reinvestment (a quantity at a price); dividend, interest, fee (an amount, no quantity). deposit and withdrawal are transactions or transfers here (docs/investments.md).",
  })
  type?: string | null;
  @Field(() => String, { nullable: true, description: "Update only: inflow sells, outflow buys (as type)." }) nature?: string | null;
  @Field(() => DecimalScalar, { nullable: true, description: "Units, positive." }) qty?: string | null;
  @Field(() => DecimalScalar, { nullable: true, description: "Price per unit, positive." }) price?: string | null;
  @Field(() => DecimalScalar, { nullable: true, description: "Create only; default 0." }) fee?: string | null;
  @Field(() => DecimalScalar, {
    nullable: true,
    description: "Create: the cash of a dividend, interest or fee (positive). Update: the cash moved, as stored.",
  })
  amount?: string | null;
  @Field(() => String, { nullable: true, description: "The account's currency (the default)." }) currency?: string | null;
  @Field(() => String, { nullable: true, description: "Create only: an existing security." }) securityId?: string | null;
  @Field(() => String, { nullable: true, description: 'Create only: "AAPL" or "AAPL|XNAS"; found or created.' }) ticker?: string | null;
  @Field(() => String, { nullable: true, description: "Create only: a ticker no provider prices." }) manualTicker?: string | null;
  @Field(() => String, { nullable: true }) investmentActivityLabel?: string | null;
  @Field(() => String, { nullable: true }) categoryId?: string | null;
  @Field(() => String, { nullable: true, description: "Accepted for upstream's clients; deposits and withdrawals are transfers here." })
  transferAccountId?: string | null;
  @Field(() => String, { nullable: true, description: "Update only." }) name?: string | null;
  @Field(() => String, { nullable: true }) notes?: string | null;
}

@ObjectType("InvestmentActivity", {
  description:
    "What upstream's POST /trades made of its type: a trade, or for a deposit or a withdrawal a transaction on the account (or a transfer with transferAccountId). Exactly one is set.",
})
export class InvestmentActivityType {
  @Field(() => TradeType, { nullable: true }) trade!: TradeType | null;
  @Field(() => TransactionType, { nullable: true }) transaction!: TransactionType | null;
  @Field(() => TransferPayload, { nullable: true }) transfer!: TransferPayload | null;
}
