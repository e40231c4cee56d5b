import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { AccountType } from "../accounts";
import { PaginationType } from "../../platform/common/page.type";
import { CalendarDateScalar, DecimalScalar } from "../money";
import { SecurityType } from "../investments";

@ObjectType("BankSyncSubject", { description: "What a sync syncs: always a bank connection here." })
export class BankSyncSubjectType {
  @Field({ description: "BankConnection." }) type!: string;
  @Field(() => ID) id!: string;
  @Field() name!: string;
}

@ObjectType("BankSyncRun", {
  description: "One sync of a connection: pending → syncing → completed or failed; stale when its worker went silent.",
})
export class BankSyncRunType {
  @Field(() => ID) id!: string;
  @Field({ description: "pending, syncing, completed, failed or stale." }) status!: string;
  @Field({ description: "manual or scheduled." }) trigger!: string;
  @Field(() => Int) createdCount!: number;
  @Field(() => Int) updatedCount!: number;
  @Field(() => Int) skippedCount!: number;
  @Field(() => Int, { description: "Requests made to the provider." }) requestCount!: number;
  @Field(() => [String]) errors!: string[];
  @Field(() => Date, { nullable: true }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field(() => ID, { description: "The bank connection synced." }) connectionId!: string;
  @Field({ description: "That connection's name." }) connectionName!: string;
  @Field({ description: "pending or syncing." }) inProgress!: boolean;
  @Field({ description: "completed, failed or stale: it will not change any more." }) terminal!: boolean;
  @Field(() => Date, { nullable: true, description: "When it completed; null unless completed." }) completedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: "When it failed; null unless failed." }) failedAt!: Date | null;
  @Field(() => String, { nullable: true, description: "The first error, when there is one." }) error!: string | null;
  @Field(() => BankSyncSubjectType) subject!: BankSyncSubjectType;
}

@ObjectType("BankConnectionAccountCounts")
export class BankConnectionAccountCountsType {
  @Field(() => Int, { description: "Provider accounts seen at the connection." }) totalCount!: number;
  @Field(() => Int, { description: "Those feeding one of the family's accounts." }) linkedCount!: number;
  @Field(() => Int) unlinkedCount!: number;
}

@ObjectType("BankConnectionSyncSummary")
export class BankConnectionSyncSummaryType {
  @Field({ description: "A sync is pending or under way." }) syncing!: boolean;
  @Field(() => Date, { nullable: true, description: "When the newest completed sync finished." }) lastSyncedAt!: Date | null;
  @Field(() => BankSyncRunType, { nullable: true, description: "The newest sync, whatever its status." }) latest!: BankSyncRunType | null;
}

@ObjectType("BankSyncRunPage")
export class BankSyncRunPageType {
  @Field(() => [BankSyncRunType]) items!: BankSyncRunType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@ObjectType("BankSyncAll")
export class BankSyncAllType {
  @Field() message!: string;
  @Field(() => [BankSyncRunType], { description: "One run per connection synced (the open one when a sync was already under way)." })
  syncs!: BankSyncRunType[];
}

/** A holding's security is the investments feature's (one GraphQL type `Security`). */
export { SecurityType };

@ObjectType("Holding")
export class HoldingType {
  @Field(() => ID) id!: string;
  @Field(() => ID) accountId!: string;
  @Field(() => SecurityType) security!: SecurityType;
  @Field(() => DecimalScalar) quantity!: string;
  @Field(() => DecimalScalar, { nullable: true }) price!: string | null;
  @Field(() => DecimalScalar) value!: string;
  @Field(() => DecimalScalar, { nullable: true }) costBasis!: string | null;
  @Field() currency!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field({ description: "provider (a bank provider's snapshot) or trades (computed from the account's trades)." }) source!: string;
  @Field({ description: "When the snapshot was written; for a computed holding, when its position was first computed." })
  createdAt!: Date;
  @Field({ description: "When the snapshot was written; for a computed holding, when a recompute last changed its position." })
  updatedAt!: Date;
}

@ObjectType("HoldingPage")
export class HoldingPageType {
  @Field(() => [HoldingType]) items!: HoldingType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("HoldingFilter")
export class HoldingFilterInput {
  @Field(() => ID, { nullable: true }) accountId?: string;
  @Field(() => [ID], { nullable: true, description: "Holdings of any of these accounts (and of accountId, when both are given)." })
  accountIds?: string[];
  @Field(() => ID, { nullable: true }) securityId?: string;
  @Field(() => CalendarDateScalar, {
    nullable: true,
    description: "Holdings of this day only (a manual account's: each security's at the day's end).",
  })
  date?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) startDate?: string;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Inclusive." }) endDate?: string;
}

@ObjectType("AccountBalance", { description: "An account's balance at the end of a day, in its native currency." })
export class AccountBalanceType {
  @Field(() => CalendarDateScalar) date!: string;
  @Field(() => DecimalScalar) balance!: string;
  @Field(() => DecimalScalar, { nullable: true }) availableBalance!: string | null;
  @Field() currency!: string;
}

@ObjectType("BankAccount", { description: "An account at the provider, linked to one of the family's accounts." })
export class BankAccountType {
  @Field(() => ID) id!: string;
  @Field() externalId!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) institution!: string | null;
  @Field({ description: "ISO 4217 code; XXX for a custom currency (see currencyUrl)." }) currency!: string;
  @Field(() => String, { nullable: true }) currencyUrl!: string | null;
  @Field(() => DecimalScalar, { nullable: true }) balance!: string | null;
  @Field(() => DecimalScalar, { nullable: true }) availableBalance!: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) balanceDate!: string | null;
  @Field(() => Boolean, { nullable: true, description: "false once the provider said this account has no holdings." })
  holdingsSupported!: boolean | null;
  @Field(() => DecimalScalar, { nullable: true, description: "Total portfolio value as the provider reports it." })
  holdingsTotalValue!: string | null;
  @Field(() => String, { nullable: true }) holdingsCurrency!: string | null;
  accountId!: string | null;
  @Field(() => AccountType, { nullable: true }) account?: AccountType | null;
  @Field(() => [AccountBalanceType]) balances?: AccountBalanceType[];
  @Field(() => [HoldingType]) holdings?: HoldingType[];
}

@ObjectType("BankConnection", {
  description: "A connection to a bank-data provider. Its credentials are stored encrypted and never returned.",
})
export class BankConnectionType {
  @Field(() => ID) id!: string;
  @Field({ description: "lunchflow or simplefin." }) provider!: string;
  @Field() name!: string;
  @Field({ description: "good, requires_update (new credentials needed) or failed." }) status!: string;
  @Field() includePending!: boolean;
  @Field() debugLogging!: boolean;
  @Field({ description: "Whether the sync creates an account for a provider account it sees for the first time." })
  autoCreateAccounts!: boolean;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field(() => Date, { nullable: true }) lastSyncAt!: Date | null;
  @Field(() => Int, { description: "Requests made to the provider today (UTC)." }) requestsToday!: number;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field({ description: "New credentials are needed before it can sync again." }) requiresUpdate!: boolean;
  @Field(() => [BankAccountType]) accounts?: BankAccountType[];
  @Field(() => [BankSyncRunType]) syncRuns?: BankSyncRunType[];
}

@ObjectType("BankSyncEvent")
export class BankSyncEventType {
  @Field(() => ID) connectionId!: string;
  @Field(() => ID) runId!: string;
  @Field() runStatus!: string;
  @Field() connectionStatus!: string;
  @Field(() => String, { nullable: true }) message!: string | null;
}

@InputType("BankConnectionSettingsInput", { description: "Fields left out are unchanged." })
export class BankConnectionSettingsInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => Boolean, { nullable: true, description: "Ask the provider for pending transactions too." }) includePending?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Log raw provider responses (credentials redacted)." }) debugLogging?:
    boolean | null;
  @Field(() => Boolean, {
    nullable: true,
    description: "Create accounts for provider accounts seen for the first time (false: they wait for linkBankAccount).",
  })
  autoCreateAccounts?: boolean | null;
}
