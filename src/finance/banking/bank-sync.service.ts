import type { Sequelize, Transaction } from "sequelize";
import { classificationOf } from "../accounts";
import type { AccountKind as AccountType } from "../accounts";
import type { LedgerService } from "../ledger";
import { newId } from "../../platform/common/ids";
import type { Logger } from "../../platform/common/logger";
import type { Config } from "../../platform/config/config";
import { Topic, type BankSyncEvent } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import { negate } from "../money";
import type { SecretBox } from "../../platform/security/secret-box";
import type { ConnectionStatus } from "./banking.model";
import { daysAgo, PENDING_MATCH_DAYS, PENDING_MAX_AGE_DAYS, reconcile, shiftDate } from "./bank-sync.reconcile";
import type { BankingRepositories } from "./banking.repository";
import type { ConnectionRow, SyncRunRow } from "./bank-connection.repository";
import type { TransactionWrite } from "./bank-import.repository";
import { LunchflowClient, LunchflowSync } from "./lunchflow.client";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import { withoutMalformedRows } from "./imported-rows";
import { groupBy, securityKeyOf } from "./bank-sync.keys";
import type { ImportBatch, ImportedAccount, ProviderSync, SyncState } from "./provider";
import { SimplefinClient, SimplefinSync } from "./simplefin.client";
import { redactor, UpstreamError, type UpstreamHttpOptions } from "./upstream-http";

type AccountLink = {
  providerAccountId: string;
  accountId: string | null;
  currency: string;
  classification: "asset" | "liability";
  accountType: AccountType;
};

type RunTotals = { created: number; updated: number; skipped: number; errors: string[] };

export type SyncOptions = { trigger?: "manual" | "scheduled"; fullHistory?: boolean; logger?: Logger };

/**
 * Runs one sync of one connection: drives the provider's requests, imports each answer idempotently in
 * a few bulk statements, and records the run. A sync interrupted anywhere can be run again: every
 * write is an upsert keyed by the provider's ids (or content), and the provider walk resumes from its
 * saved cursor.
 */
export class BankSyncService {
  /** Set by the wiring (src/app/services.ts): planning's rules, applied to the transactions a sync adds. */
  onCreated: ((familyId: string, transactionIds: string[], transaction: Transaction) => Promise<void>) | null = null;
  /**
   * Set by the wiring: investments' TradeService.recordPrices, which records the prices a provider
   * reported with its holdings as the securities' prices of the day (and revalues the manual accounts
   * trading them).
   */
  onPricesReported:
    | ((prices: Array<{ securityId: string; date: string; price: string; currency: string }>, transaction: Transaction) => Promise<void>)
    | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly repositories: BankingRepositories,
    private readonly ledger: LedgerService,
    private readonly secrets: SecretBox,
    private readonly config: Config,
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly outbound: OutboundGuard,
  ) {}

  /** Runs the connection's sync, continuing its open run when there is one. Never throws for provider failures. */
  async run(connectionId: string, options: SyncOptions = {}): Promise<SyncRunRow | null> {
    const connection = await this.repositories.connections.connection(connectionId);
    if (!connection) return null;
    const logger = (options.logger ?? this.logger).child({ bankConnection: connectionId });
    const runId = await this.startRun(connection, options.trigger ?? "manual");
    this.publish(connection, runId, "syncing", connection.status, null);
    const totals: RunTotals = { created: 0, updated: 0, skipped: 0, errors: [] };
    let state: SyncState = connection.syncState ?? {};
    let links = new Map<string, AccountLink>();
    try {
      const provider = this.providerFor(connection, runId, logger);
      links = await this.accountLinks(connection.id);
      const holdingsUnsupported = new Set(
        (await this.repositories.accounts.providerAccounts(connection.id))
          .filter((row) => row.holdingsSupported === false)
          .map((row) => row.externalId),
      );
      await provider.sync({
        state,
        includePending: connection.includePending,
        fullHistory: options.fullHistory ?? false,
        historyDays: this.config.bankHistoryDays,
        holdingsUnsupported,
        logger,
        addErrors: (messages) => totals.errors.push(...messages),
        saveState: async (next) => {
          state = next;
          await this.repositories.connections.updateConnection(connection.id, { syncState: next });
          await this.repositories.connections.updateRun(runId, {
            heartbeatAt: new Date(),
            createdCount: totals.created,
            updatedCount: totals.updated,
            skippedCount: totals.skipped,
          });
        },
        importBatch: (batch) => this.importBatch(connection, links, batch, totals),
      });
      const expired = await this.repositories.imports.expireStalePending(
        [...links.values()].flatMap((link) => (link.accountId ? [link.accountId] : [])),
        connection.provider,
        daysAgo(PENDING_MAX_AGE_DAYS),
      );
      totals.updated += expired;
      await this.settleBalances(links);
      await this.finish(connection, runId, totals, "completed", "good", totals.errors.length ? totals.errors.join("; ") : null);
    } catch (error) {
      if (error instanceof UpstreamError && error.failure === "budget") {
        // Not a failure: the provider allows so many requests a day (SimpleFIN Bridge: 24), everything
        // fetched so far is imported, and the walk's cursor is saved. The connection stays good; the run
        // completes with what it imported; the rest follows once the budget renews (budgetResetsAt,
        // nextSyncAt), from where this run stopped.
        logger.info({ requestsToday: connection.requestsToday }, "bank sync paused at the daily request budget");
        await this.settleBalances(links).catch((settling: unknown) =>
          logger.error({ err: settling }, "balances not recomputed after a paused sync"),
        );
        const problems = totals.errors.length ? totals.errors.join("; ") : null;
        const note = `Stopped at the provider's daily request budget (${this.config.simplefinDailyRequestBudget} requests per UTC day); the next sync continues from here after 00:00 UTC`;
        // lastSyncAt stays: it says when a sync last ran to its end, and keeps the refresh's schedule.
        await this.finish(connection, runId, { ...totals, errors: [...totals.errors, note] }, "completed", "good", problems, {
          keepLastSyncAt: true,
        });
        return this.repositories.connections.run(runId);
      }
      const { status, message } = this.failureOf(error, logger);
      totals.errors.push(message);
      // What the sync wrote before failing is kept, so the balances must follow it too.
      await this.settleBalances(links).catch((settling: unknown) =>
        logger.error({ err: settling }, "balances not recomputed after a failed sync"),
      );
      await this.finish(connection, runId, totals, "failed", status, message);
    }
    return this.repositories.connections.run(runId);
  }

  /**
   * Recomputes the balances of every account the connection feeds, once per sync (never per imported
   * row): its transactions and its provider balance (the current anchor) are all written by now.
   */
  private async settleBalances(links: Map<string, AccountLink>): Promise<void> {
    const accountIds = [...links.values()].flatMap((link) => (link.accountId ? [link.accountId] : []));
    if (accountIds.length === 0) return;
    await this.sequelize.transaction((transaction) => this.ledger.recomputeWhole(accountIds, transaction));
  }

  private async startRun(connection: ConnectionRow, trigger: "manual" | "scheduled"): Promise<string> {
    const open = await this.repositories.connections.openRun(connection.id);
    const now = new Date();
    if (open) {
      await this.repositories.connections.updateRun(open.id, { status: "syncing", startedAt: open.startedAt ?? now, heartbeatAt: now });
      return open.id;
    }
    const id = newId();
    await this.repositories.connections.createRun({
      id,
      familyId: connection.familyId,
      connectionId: connection.id,
      status: "syncing",
      trigger,
      startedAt: now,
      heartbeatAt: now,
    });
    return id;
  }

  private async finish(
    connection: ConnectionRow,
    runId: string,
    totals: RunTotals,
    runStatus: "completed" | "failed",
    connectionStatus: ConnectionStatus,
    message: string | null,
    options: { keepLastSyncAt?: boolean } = {},
  ): Promise<void> {
    const now = new Date();
    await this.repositories.connections.updateRun(runId, {
      status: runStatus,
      finishedAt: now,
      heartbeatAt: now,
      createdCount: totals.created,
      updatedCount: totals.updated,
      skippedCount: totals.skipped,
      errors: totals.errors,
    });
    await this.repositories.connections.updateConnection(connection.id, {
      status: connectionStatus,
      lastError: message,
      ...(options.keepLastSyncAt ? {} : { lastSyncAt: now }),
    });
    this.publish(connection, runId, runStatus, connectionStatus, message);
  }

  private publish(
    connection: ConnectionRow,
    runId: string,
    runStatus: string,
    connectionStatus: ConnectionStatus,
    message: string | null,
  ): void {
    const event: BankSyncEvent = { connectionId: connection.id, runId, runStatus, connectionStatus, message };
    this.events.publish(Topic.BankSyncEvent, connection.familyId, event);
  }

  private failureOf(error: unknown, logger: Logger): { status: ConnectionStatus; message: string } {
    if (error instanceof UpstreamError) {
      logger.warn({ failure: error.failure, status: error.status }, "bank sync failed");
      switch (error.failure) {
        case "auth":
          return {
            status: "requires_update",
            message: "The provider refused the connection's credentials: reconnect it with a new setup token or API key",
          };
        case "payment":
          return { status: "failed", message: "The provider subscription needs payment" };
        case "rate_limited":
          return { status: "failed", message: "The provider is rate limiting this connection; the next scheduled sync will try again" };
        default:
          return { status: "failed", message: error.message };
      }
    }
    logger.error({ err: error }, "bank sync failed");
    return { status: "failed", message: "The sync failed unexpectedly" };
  }

  private providerFor(connection: ConnectionRow, runId: string, logger: Logger): ProviderSync {
    const secret = this.secrets.open(connection.credentials);
    const simplefin = connection.provider === "simplefin";
    const http: UpstreamHttpOptions = {
      outbound: this.outbound,
      httpsOnly: !this.config.allowInsecureUpstreams,
      timeoutMs: this.config.bankUpstreamTimeoutMs,
      retryBaseMs: this.config.bankRetryBaseMs,
      attempts: 3,
      retryRateLimited: !simplefin,
      redact: redactor(simplefin ? SimplefinClient.secretsOf(secret) : [secret]),
      debugLogger: connection.debugLogging ? logger : undefined,
      beforeAttempt: async () => {
        const allowed = await this.repositories.connections.countRequest(
          connection.id,
          runId,
          simplefin ? this.config.simplefinDailyRequestBudget : null,
        );
        if (!allowed) throw new UpstreamError("budget", "daily request budget spent");
      },
    };
    return simplefin
      ? new SimplefinSync(new SimplefinClient(secret, http))
      : new LunchflowSync(new LunchflowClient(connection.baseUrl ?? this.config.lunchflowBaseUrl, secret, http));
  }

  private async accountLinks(connectionId: string): Promise<Map<string, AccountLink>> {
    const rows = await this.repositories.accounts.providerAccounts(connectionId);
    const links = new Map<string, AccountLink>();
    if (rows.length === 0) return links;
    const accounts = await this.repositories.accounts.linkedAccounts(rows.flatMap((row) => (row.accountId ? [row.accountId] : [])));
    const byId = new Map(accounts.map((account) => [account.id, account]));
    for (const row of rows) {
      const account = row.accountId ? byId.get(row.accountId) : undefined;
      links.set(row.externalId, {
        providerAccountId: row.id,
        accountId: account?.id ?? null,
        currency: account?.currency ?? row.currency,
        classification: account?.classification ?? "asset",
        accountType: account?.accountType ?? "depository",
      });
    }
    return links;
  }

  // ---- importing one answer ------------------------------------------------------------------------

  private async importBatch(
    connection: ConnectionRow,
    links: Map<string, AccountLink>,
    answer: ImportBatch,
    totals: RunTotals,
  ): Promise<void> {
    const { batch, problems } = withoutMalformedRows(answer);
    totals.skipped += problems.length;
    totals.errors.push(...problems);
    for (const account of batch.accounts) await this.importAccount(connection, links, account);
    const writes: TransactionWrite[] = [];
    const rekeys: TransactionWrite[] = [];
    const removals: string[] = [];
    const accountIds = batch.accounts.flatMap((account) => {
      const id = links.get(account.externalId)?.accountId;
      return id ? [id] : [];
    });
    if (accountIds.length === 0) return;
    const existing = await this.repositories.imports.existingTransactions(
      accountIds,
      connection.provider,
      shiftDate(batch.range.start, -PENDING_MATCH_DAYS),
      shiftDate(batch.range.end, PENDING_MATCH_DAYS),
    );
    const existingByAccount = groupBy(existing, (row) => row.accountId);
    const merchantNames = new Set<string>();
    for (const rows of batch.transactions.values()) for (const row of rows) if (row.merchant) merchantNames.add(row.merchant);
    const merchantIds = await this.repositories.imports.merchantIds(connection.familyId, [...merchantNames]);

    for (const [accountExternalId, incoming] of batch.transactions) {
      const link = links.get(accountExternalId);
      if (!link?.accountId) continue;
      const plan = reconcile(incoming, existingByAccount.get(link.accountId) ?? [], batch, link.currency);
      totals.skipped += plan.unchanged;
      removals.push(...plan.expired);
      for (const { row, key, fingerprint, existingId } of plan.writes) {
        const write: TransactionWrite = {
          id: existingId ?? newId(),
          accountId: link.accountId,
          date: row.date,
          amount: row.amount,
          currency: row.currency,
          name: row.name,
          merchantId: row.merchant ? (merchantIds.get(row.merchant) ?? null) : null,
          pending: row.pending,
          externalId: key,
          fingerprint,
        };
        (existingId ? rekeys : writes).push(write);
      }
    }
    // No wrapping transaction is needed: each statement is idempotent, and re-keyed rows are found under
    // their new key if the sync is cut short and run again.
    await this.repositories.imports.rekeyTransactions(rekeys);
    const written = await this.repositories.imports.upsertTransactions(connection.familyId, connection.provider, writes);
    // The family's rules apply to what the bank added, as to any new transaction.
    const onCreated = this.onCreated;
    if (onCreated && written.createdIds.length > 0)
      await this.sequelize.transaction((transaction) => onCreated(connection.familyId, written.createdIds, transaction));
    await this.repositories.imports.deleteTransactions(removals);
    totals.created += written.created;
    totals.updated += written.updated + rekeys.length + removals.length;
    totals.skipped += writes.length - written.created - written.updated;
  }

  /** Creates the family account on first sight (or keeps the link), then records balance and holdings. */
  private async importAccount(connection: ConnectionRow, links: Map<string, AccountLink>, account: ImportedAccount): Promise<void> {
    let link = links.get(account.externalId);
    const firstSight = !link;
    if (!link) {
      // A connection told not to create accounts records the provider account unlinked: it waits for
      // linkBankAccount, and nothing is imported for it until then.
      const accountId = connection.autoCreateAccounts ? newId() : null;
      const classification = classificationOf(account.accountType);
      if (accountId)
        await this.sequelize.transaction(async (transaction) => {
          await this.repositories.accounts.createAccount(
            {
              id: accountId,
              familyId: connection.familyId,
              name: account.institution ? `${account.name} (${account.institution})` : account.name,
              accountType: account.accountType,
              classification,
              currency: account.currency,
              balance: "0",
            },
            transaction,
          );
          await this.ledger.open(
            { id: accountId, familyId: connection.familyId, accountType: account.accountType, currency: account.currency },
            "0",
            transaction,
          );
        });
      await this.repositories.accounts.insertProviderAccount({
        id: newId(),
        familyId: connection.familyId,
        connectionId: connection.id,
        accountId,
        externalId: account.externalId,
        name: account.name,
        institution: account.institution,
        currency: account.currency,
        currencyUrl: account.currencyUrl,
      });
      // A concurrent first sync may have won the insert: the stored link is the truth.
      const stored = (await this.repositories.accounts.providerAccounts(connection.id)).find(
        (row) => row.externalId === account.externalId,
      )!;
      if (accountId && stored.accountId !== accountId) await this.repositories.accounts.deleteAccount(accountId);
      link = {
        providerAccountId: stored.id,
        accountId: stored.accountId,
        currency: account.currency,
        classification,
        accountType: account.accountType,
      };
      links.set(account.externalId, link);
    }
    // Older windows of a walk carry nothing new about the account: no write for them.
    const news = firstSight || account.balance || account.holdings || account.holdingsUnsupported;
    if (!news) return;
    await this.repositories.accounts.updateProviderAccount(link.providerAccountId, {
      name: account.name,
      institution: account.institution,
      balance: account.balance,
      holdingsSupported: account.holdingsUnsupported ? false : account.holdings ? true : null,
      holdingsTotal: account.holdings ? { value: account.holdings.totalValue, currency: account.holdings.currency } : null,
    });
    if (!link.accountId) return;
    if (account.balance) {
      // Providers report what a liability owes as a negative balance; accounts store it as a positive amount owed.
      const owed = link.classification === "liability" ? negate(account.balance.amount) : account.balance.amount;
      const accountId = link.accountId;
      const reported = account.balance;
      await this.sequelize.transaction(async (transaction) => {
        await this.repositories.accounts.recordBalance(accountId, reported, link.currency, transaction);
        await this.ledger.setCurrentAnchor(
          { id: accountId, familyId: connection.familyId, accountType: link.accountType, currency: link.currency },
          reported.date,
          owed,
          transaction,
        );
      });
    }
    if (account.holdings) {
      const date = account.holdings.date;
      const reported = await this.repositories.accounts.replaceHoldings(
        connection.familyId,
        link.accountId,
        date,
        account.holdings.items.map((holding) => ({ ...holding, securityKey: securityKeyOf(holding) })),
      );
      const onPricesReported = this.onPricesReported;
      if (onPricesReported && reported.length > 0)
        await this.sequelize.transaction((transaction) =>
          onPricesReported(
            reported.map((price) => ({ ...price, date })),
            transaction,
          ),
        );
    }
  }
}
