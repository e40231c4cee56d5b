import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { Access } from "../graphql/auth-checker";
import type { RequestContext } from "../graphql/context";
import { Topic, type BankSyncEvent } from "../events/catalogue";
import type { HoldingRow } from "./bank-account.repository";
import type { SyncRunRow } from "./bank-connection.repository";
import { runStatusOf } from "./banking.service";
import {
  AccountBalanceType,
  BankAccountType,
  BankConnectionSettingsInput,
  BankConnectionType,
  BankSyncEventType,
  BankSyncRunType,
  HoldingType,
} from "./banking.type";

const AUTO_CREATE = "Create an account for each provider account on first sight (default); false: link them with linkBankAccount.";

function toRun(row: SyncRunRow): BankSyncRunType {
  return { ...row, status: runStatusOf(row) };
}

function toHolding(row: HoldingRow): HoldingType {
  return { ...row, security: { ticker: row.ticker, name: row.name, isin: row.isin, figi: row.figi, cusip: row.cusip } };
}

@Resolver(() => BankConnectionType)
export class BankConnectionResolver {
  @Authorized(Access.Read)
  @Query(() => [BankConnectionType], { description: "The family's bank connections, oldest first." })
  bankConnections(@Ctx() { services, actor }: RequestContext) {
    return services.banking.list(actor!);
  }

  @Authorized(Access.Read)
  @Query(() => BankConnectionType)
  bankConnection(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.banking.get(actor!, id);
  }

  @Authorized(Access.Write)
  @Mutation(() => BankConnectionType, { description: "Claims a SimpleFIN setup token (it works once) and starts the first sync." })
  connectSimplefin(
    @Ctx() { services, actor }: RequestContext,
    @Arg("setupToken") setupToken: string,
    @Arg("autoCreateAccounts", () => Boolean, { nullable: true, defaultValue: true, description: AUTO_CREATE }) autoCreateAccounts: boolean,
  ) {
    return services.banking.connectSimplefin(actor!, setupToken, autoCreateAccounts ?? true);
  }

  @Authorized(Access.Write)
  @Mutation(() => BankConnectionType, { description: "Checks a Lunch Flow API key and starts the first sync." })
  connectLunchflow(
    @Ctx() { services, actor }: RequestContext,
    @Arg("apiKey") apiKey: string,
    @Arg("baseUrl", () => String, { nullable: true }) baseUrl?: string | null,
    @Arg("autoCreateAccounts", () => Boolean, { nullable: true, defaultValue: true, description: AUTO_CREATE })
    autoCreateAccounts?: boolean,
  ) {
    return services.banking.connectLunchflow(actor!, apiKey, baseUrl, autoCreateAccounts ?? true);
  }

  @Authorized(Access.Write)
  @Mutation(() => BankConnectionType)
  updateBankConnection(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("settings", () => BankConnectionSettingsInput) settings: BankConnectionSettingsInput,
  ) {
    return services.banking.updateSettings(actor!, id, settings);
  }

  @Authorized(Access.Write)
  @Mutation(() => BankConnectionType, {
    description:
      "New credentials (a SimpleFIN setup token, or a Lunch Flow API key) for the same connection; all data is kept and a sync starts.",
  })
  replaceBankCredentials(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("setupToken", () => String, { nullable: true }) setupToken?: string | null,
    @Arg("apiKey", () => String, { nullable: true }) apiKey?: string | null,
    @Arg("baseUrl", () => String, { nullable: true }) baseUrl?: string | null,
  ) {
    return services.banking.replaceCredentials(actor!, id, { setupToken, apiKey, baseUrl });
  }

  @Authorized(Access.Write)
  @Mutation(() => BankConnectionType, { description: "Deletes the connection; the accounts and transactions it imported stay." })
  deleteBankConnection(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.banking.delete(actor!, id);
  }

  @Authorized(Access.Write)
  @Mutation(() => BankAccountType, {
    description:
      "Feeds an existing account from a provider account, before anything was imported for it (422 after, or when the currency differs " +
      "or the account is fed by another provider account). Starts a sync that imports the whole history into the account.",
  })
  linkBankAccount(
    @Ctx() { services, actor }: RequestContext,
    @Arg("providerAccountId", () => ID) providerAccountId: string,
    @Arg("accountId", () => ID) accountId: string,
  ) {
    return services.banking.linkAccount(actor!, providerAccountId, accountId);
  }

  @Authorized(Access.Write)
  @Mutation(() => BankSyncRunType, { description: "Starts a sync now, or returns the one already waiting or running." })
  async syncBankConnection(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return toRun(await services.banking.sync(actor!, id));
  }

  @Authorized(Access.Read)
  @Subscription(() => BankSyncEventType, {
    topics: Topic.BankSyncEvent,
    topicId: ({ context }: { context: RequestContext }) => context.actor?.familyId,
    description: "Status changes of the family's bank syncs.",
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
    return (await bankingLoaders.runs(connection.id, limit)).map(toRun);
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
