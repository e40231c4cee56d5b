import DataLoader from "dataloader";
import type { AccountRow } from "../accounts";
import { groupToKeys } from "../../platform/common/sql";
import type { Repositories } from "../../app/services";
import type { BalanceRow, HoldingRow, ProviderAccountRow } from "./bank-account.repository";
import type { SyncRunRow } from "./bank-connection.repository";
import { balanceDaysLimit, runsLimit } from "./banking.service";

/**
 * The banking field resolvers' reads, one set per request and family. A list of connections asks for
 * each one's accounts and runs, and each bank account for its account, balances and holdings: every
 * field of every object is a separate resolver call, so DataLoader gathers the calls of one tick into
 * one statement per kind. Reads that take a limit are batched per distinct limit, each connection or
 * account getting its own newest N. Every batch is scoped to the family: an id of another family reads
 * as nothing, as an unknown id would.
 */
export class BankingLoaders {
  private readonly accountsOfConnection = new DataLoader<string, ProviderAccountRow[]>(async (connectionIds) =>
    groupToKeys(
      connectionIds,
      await this.repositories.banking.accounts.providerAccountsOfConnections(this.familyId, connectionIds),
      (row) => row.connectionId,
    ),
  );
  private readonly accountById = new DataLoader<string, AccountRow | null>((accountIds) =>
    this.repositories.accounts.byIds(this.familyId, accountIds),
  );
  private readonly holdingsOfAccount = new DataLoader<string, HoldingRow[]>(async (accountIds) =>
    groupToKeys(accountIds, await this.repositories.banking.accounts.latestHoldings(this.familyId, accountIds), (row) => row.accountId),
  );
  private readonly runsOfConnection = perLimit<SyncRunRow>(async (connectionIds, limit) =>
    groupToKeys(
      connectionIds,
      await this.repositories.banking.connections.runsOfConnections(this.familyId, connectionIds, limit),
      (row) => row.connectionId,
    ),
  );
  private readonly balancesOfAccount = perLimit<BalanceRow>(async (accountIds, limit) =>
    groupToKeys(
      accountIds,
      await this.repositories.banking.accounts.balancesOfAccounts(this.familyId, accountIds, limit),
      (row) => row.accountId,
    ),
  );

  constructor(
    private readonly repositories: Repositories,
    private readonly familyId: string,
  ) {}

  /** The provider accounts seen at the connection, by institution and name. */
  providerAccounts(connectionId: string): Promise<ProviderAccountRow[]> {
    return this.accountsOfConnection.load(connectionId);
  }

  /** The connection's newest runs, newest first. */
  runs(connectionId: string, limit: number): Promise<SyncRunRow[]> {
    return this.runsOfConnection(runsLimit(limit)).load(connectionId);
  }

  /** The family account a provider account feeds; null while it waits unlinked. */
  async account(accountId: string | null): Promise<AccountRow | null> {
    return accountId ? this.accountById.load(accountId) : null;
  }

  /** The account's daily balances, newest first. */
  async balances(accountId: string | null, limit: number): Promise<BalanceRow[]> {
    return accountId ? this.balancesOfAccount(balanceDaysLimit(limit)).load(accountId) : [];
  }

  /** The account's latest holdings snapshot, largest value first. */
  async holdings(accountId: string | null): Promise<HoldingRow[]> {
    return accountId ? this.holdingsOfAccount.load(accountId) : [];
  }
}

/** One DataLoader per distinct limit, made on first use: a batch reads the newest `limit` rows of each key it holds. */
function perLimit<Row>(batch: (keys: readonly string[], limit: number) => Promise<Row[][]>): (limit: number) => DataLoader<string, Row[]> {
  const loaders = new Map<number, DataLoader<string, Row[]>>();
  return (limit) => {
    let loader = loaders.get(limit);
    if (!loader) {
      loader = new DataLoader((keys) => batch(keys, limit));
      loaders.set(limit, loader);
    }
    return loader;
  };
}
