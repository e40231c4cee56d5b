import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { Topic, type BankSyncEvent } from "../../platform/events/catalogue";
import type { HoldingRow } from "./bank-account.repository";
import type { SyncRunRow } from "./bank-connection.repository";
import { runStatusOf } from "./banking.service";
import {
  AccountBalanceType,
  BankAccountType,
  BankConnectionSettingsInput,
  BankConnectionAccountCountsType,
  BankConnectionSyncSummaryType,
  BankConnectionType,
  BankSyncAllType,
  BankSyncEventType,
  BankSyncRunPageType,
  BankSyncRunType,
  HoldingFilterInput,
  HoldingPageType,
  HoldingType,
} from "./banking.type";
import Decimal from "decimal.js";
import { AccountType } from "../accounts";
import { formatMoney, railsDecimal } from "../money";
import { CurrentActor } from "../../transports/graphql/current-actor";
import { listen } from "../../transports/graphql/subscription";
import type { Actor } from "../../platform/security/actor";

const AUTO_CREATE = "Create an account for each provider account on first sight (default); false: link them with linkBankAccount.";

/** `connectionName`: the run's connection's, when the row was read without it. */
function toRun(row: SyncRunRow, connectionName?: string): BankSyncRunType {
  const status = runStatusOf(row);
  return {
    ...row,
    status,
    inProgress: status === "pending" || status === "syncing",
    terminal: status === "completed" || status === "failed" || status === "stale",
    completedAt: status === "completed" ? row.finishedAt : null,
    failedAt: status === "failed" ? row.finishedAt : null,
    error: row.errors[0] ?? null,
    connectionName: row.connectionName ?? connectionName ?? "",
    subject: { type: "BankConnection", id: row.connectionId, name: row.connectionName ?? connectionName ?? "" },
  };
}

function toHolding(row: HoldingRow): HoldingType {
  return { ...row, security: { id: row.securityId, ticker: row.ticker, name: row.name, isin: row.isin, figi: row.figi, cusip: row.cusip } };
}

/** Holdings as bank providers reported them or trades made them, with what upstream's API derives from them. */
@Resolver(() => HoldingType)
export class HoldingResolver {
  @Authorized()
  @Query(() => HoldingPageType, {
    description:
      "Holdings, oldest date first (as upstream lists them; within a day by account): every snapshot the bank providers reported, and a manual account's holding of every security it has traded on every day from its first to today (quantity 0 after a full sell), computed from its trades and prices.",
  })
  async holdings(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => HoldingFilterInput, { nullable: true }) filter?: HoldingFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ) {
    const { items, pagination } = await services.banking.holdings(actor, filter ?? {}, page, perPage);
    return { items: items.map(toHolding), pagination };
  }

  @Authorized()
  @Query(() => HoldingType)
  async holding(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toHolding(await services.banking.holding(actor, id));
  }

  @FieldResolver(() => AccountType, { nullable: true, description: "The account holding it." })
  account(@Ctx() { bankingLoaders }: RequestContext, @Root() holding: HoldingType) {
    return bankingLoaders.account(holding.accountId);
  }

  @FieldResolver(() => String, { description: 'The quantity as upstream\'s JSON writes a decimal ("65.0", "15.5").' })
  formattedQuantity(@Root() holding: HoldingType): string {
    return railsDecimal(holding.quantity);
  }

  @FieldResolver(() => String, { nullable: true, description: "The price formatted in the holding's currency." })
  formattedPrice(@Root() holding: HoldingType): string | null {
    return holding.price === null ? null : formatMoney(holding.price, holding.currency);
  }

  @FieldResolver(() => String, { description: "The value formatted in the holding's currency." })
  formattedValue(@Root() holding: HoldingType): string {
    return formatMoney(holding.value, holding.currency);
  }

  @FieldResolver(() => String, { nullable: true, description: "Cost basis per unit, formatted; null without a cost basis." })
  formattedAverageCost(@Root() holding: HoldingType): string | null {
    if (holding.costBasis === null || new Decimal(holding.quantity).isZero()) return null;
    return formatMoney(new Decimal(holding.costBasis).dividedBy(holding.quantity).toFixed(), holding.currency);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: "calculated for holdings computed from trades; provider when the provider reported a cost basis; else null.",
  })
  costBasisSource(@Root() holding: HoldingType): string | null {
    if (holding.source === "trades") return "calculated";
    return holding.costBasis === null ? null : "provider";
  }
}

@Resolver(() => BankConnectionType)
export class BankConnectionResolver {
  @Authorized()
  @Query(() => [BankConnectionType], { description: "The family's bank connections, oldest first." })
  bankConnections(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.banking.list(actor);
  }

  @Authorized()
  @Query(() => BankSyncRunPageType, { description: "The syncs of every connection of the family, newest first." })
  async bankSyncRuns(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ) {
    const { items, pagination } = await services.banking.runsPage(actor, page, perPage);
    return { items: items.map((row) => toRun(row)), pagination };
  }

  @Authorized()
  @Query(() => BankSyncRunType)
  async bankSyncRun(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toRun(await services.banking.run(actor, id));
  }

  @Authorized()
  @Query(() => BankSyncRunType, { nullable: true, description: "The family's newest sync, of any connection; null before the first." })
  async latestBankSyncRun(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    const row = await services.banking.latestRun(actor);
    return row && toRun(row);
  }

  @Authorized()
  @Mutation(() => BankSyncAllType, {
    description: "Starts a sync of every connection that can sync (not those waiting for new credentials), or returns the ones under way.",
  })
  async syncAllBankConnections(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor): Promise<BankSyncAllType> {
    const runs = await services.banking.syncAll(actor);
    return {
      message: runs.length ? "Sync has been queued" : "No bank connection to sync",
      syncs: runs.map((row) => toRun(row)),
    };
  }

  @FieldResolver(() => Boolean)
  requiresUpdate(@Root() connection: BankConnectionType): boolean {
    return connection.status === "requires_update";
  }

  @FieldResolver(() => Date, {
    nullable: true,
    description:
      "When the automatic refresh syncs it next: lastSyncAt plus BANK_SYNC_INTERVAL_HOURS (checked every 10 minutes), or as soon as the request budget renews when a sync stopped at it; null while new credentials are needed.",
  })
  nextSyncAt(@Ctx() { services }: RequestContext, @Root() connection: BankConnectionType): Date | null {
    return services.banking.nextSyncAt(connection);
  }

  @FieldResolver(() => Int, {
    nullable: true,
    description: "Requests the provider allows per UTC day (SimpleFIN: SIMPLEFIN_DAILY_REQUEST_BUDGET); null when it sets no budget.",
  })
  dailyRequestBudget(@Ctx() { services }: RequestContext, @Root() connection: BankConnectionType): number | null {
    return services.banking.dailyRequestBudget(connection);
  }

  @FieldResolver(() => Date, {
    nullable: true,
    description:
      "Set when today's request budget is spent: when it renews (00:00 UTC). A sync that reaches the budget is not a failure: it completes with what it imported, and the next continues from there.",
  })
  budgetResetsAt(@Ctx() { services }: RequestContext, @Root() connection: BankConnectionType): Date | null {
    return services.banking.budgetResetsAt(connection);
  }

  @FieldResolver(() => BankConnectionAccountCountsType)
  async accountCounts(
    @Ctx() { bankingLoaders }: RequestContext,
    @Root() connection: BankConnectionType,
  ): Promise<BankConnectionAccountCountsType> {
    const accounts = await bankingLoaders.providerAccounts(connection.id);
    const linkedCount = accounts.filter((account) => account.accountId !== null).length;
    return { totalCount: accounts.length, linkedCount, unlinkedCount: accounts.length - linkedCount };
  }

  @FieldResolver(() => BankConnectionSyncSummaryType)
  async syncSummary(
    @Ctx() { bankingLoaders }: RequestContext,
    @Root() connection: BankConnectionType,
  ): Promise<BankConnectionSyncSummaryType> {
    const [latest] = (await bankingLoaders.runs(connection.id, 1)).map((run) => toRun(run, connection.name));
    return { syncing: latest?.inProgress ?? false, lastSyncedAt: connection.lastSyncAt, latest: latest ?? null };
  }

  @Authorized()
  @Query(() => BankConnectionType)
  bankConnection(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.banking.get(actor, id);
  }

  @Authorized()
  @Mutation(() => BankConnectionType, { description: "Claims a SimpleFIN setup token (it works once) and starts the first sync." })
  connectSimplefin(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("setupToken") setupToken: string,
    @Arg("autoCreateAccounts", () => Boolean, { nullable: true, defaultValue: true, description: AUTO_CREATE }) autoCreateAccounts: boolean,
  ) {
    return services.banking.connectSimplefin(actor, setupToken, autoCreateAccounts ?? true);
  }

  @Authorized()
  @Mutation(() => BankConnectionType, { description: "Checks a Lunch Flow API key and starts the first sync." })
  connectLunchflow(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("apiKey") apiKey: string,
    @Arg("baseUrl", () => String, { nullable: true }) baseUrl?: string | null,
    @Arg("autoCreateAccounts", () => Boolean, { nullable: true, defaultValue: true, description: AUTO_CREATE })
    autoCreateAccounts?: boolean,
  ) {
    return services.banking.connectLunchflow(actor, apiKey, baseUrl, autoCreateAccounts ?? true);
  }

  @Authorized()
  @Mutation(() => BankConnectionType)
  updateBankConnection(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("settings", () => BankConnectionSettingsInput) settings: BankConnectionSettingsInput,
  ) {
    return services.banking.updateSettings(actor, id, settings);
  }

  @Authorized()
  @Mutation(() => BankConnectionType, {
    description:
      "New credentials (a SimpleFIN setup token, or a Lunch Flow API key) for the same connection; all data is kept and a sync starts.",
  })
  replaceBankCredentials(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("setupToken", () => String, { nullable: true }) setupToken?: string | null,
    @Arg("apiKey", () => String, { nullable: true }) apiKey?: string | null,
    @Arg("baseUrl", () => String, { nullable: true }) baseUrl?: string | null,
  ) {
    return services.banking.replaceCredentials(actor, id, { setupToken, apiKey, baseUrl });
  }

  @Authorized()
  @Mutation(() => BankConnectionType, { description: "Deletes the connection; the accounts and transactions it imported stay." })
  deleteBankConnection(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.banking.delete(actor, id);
  }

  @Authorized()
  @Mutation(() => BankAccountType, {
    description:
      "Feeds an existing account from a provider account, before anything was imported for it (422 after, or when the currency differs " +
      "or the account is fed by another provider account). Starts a sync that imports the whole history into the account.",
  })
  linkBankAccount(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("providerAccountId", () => ID) providerAccountId: string,
    @Arg("accountId", () => ID) accountId: string,
  ) {
    return services.banking.linkAccount(actor, providerAccountId, accountId);
  }

  @Authorized()
  @Mutation(() => BankSyncRunType, { description: "Starts a sync now, or returns the one already waiting or running." })
  async syncBankConnection(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return toRun(await services.banking.sync(actor, id));
  }

  @Authorized()
  @Subscription(() => BankSyncEventType, {
    description: "Status changes of the family's bank syncs.",
    subscribe: listen(({ context, actor }) => context.services.events.subscribe(Topic.BankSyncEvent, actor.familyId)),
  })
  bankSyncEvents(@Root() event: BankSyncEvent): BankSyncEventType {
    return event;
  }

  @FieldResolver(() => [BankAccountType])
  accounts(@Ctx() { bankingLoaders }: RequestContext, @Root() connection: BankConnectionType) {
    return bankingLoaders.providerAccounts(connection.id);
  }

  @FieldResolver(() => [BankSyncRunType])
  async syncRuns(
    @Ctx() { bankingLoaders }: RequestContext,
    @Root() connection: BankConnectionType,
    @Arg("limit", () => Int, { nullable: true, defaultValue: 10 }) limit: number,
  ) {
    return (await bankingLoaders.runs(connection.id, limit)).map((run) => toRun(run, connection.name));
  }
}

@Resolver(() => BankAccountType)
export class BankAccountResolver {
  @FieldResolver()
  account(@Ctx() { bankingLoaders }: RequestContext, @Root() bankAccount: BankAccountType) {
    return bankingLoaders.account(bankAccount.accountId);
  }

  @FieldResolver(() => [AccountBalanceType], { description: "Daily balance history, newest first." })
  balances(
    @Ctx() { bankingLoaders }: RequestContext,
    @Root() bankAccount: BankAccountType,
    @Arg("limit", () => Int, { nullable: true, defaultValue: 90 }) limit: number,
  ) {
    return bankingLoaders.balances(bankAccount.accountId, limit);
  }

  @FieldResolver(() => [HoldingType], { description: "The latest holdings snapshot." })
  async holdings(@Ctx() { bankingLoaders }: RequestContext, @Root() bankAccount: BankAccountType) {
    return (await bankingLoaders.holdings(bankAccount.accountId)).map(toHolding);
  }
}
