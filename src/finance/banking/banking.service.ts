import type { AccountRepository } from "../accounts";
import { ConflictError, NotFoundError, UpstreamUnavailableError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { requiredText } from "../../platform/common/validation";
import type { Config } from "../../platform/config/config";
import type { Actor } from "../../platform/security/actor";
import type { SecretBox } from "../../platform/security/secret-box";
import type { BankProvider } from "./banking.model";
import type { BankingRepositories } from "./banking.repository";
import type { HoldingFilter, HoldingRow, ProviderAccountRow } from "./bank-account.repository";
import type { ConnectionChanges, ConnectionRow, SyncRunRow } from "./bank-connection.repository";
import { LunchflowClient } from "./lunchflow.client";
import type { SyncState } from "./provider";
import { claimSetupToken, SimplefinClient, UpstreamClaimError } from "./simplefin.client";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import { redactor, upstreamUrlProblem, UpstreamError, type UpstreamHttpOptions } from "./upstream-http";

/** Enqueues a connection's sync job (workers/queues.ts owns the queue; a duplicate enqueue is a no-op). */
export type SyncQueue = { enqueue(connectionId: string, trigger: "manual" | "scheduled"): Promise<void> };

export type ConnectionSettingsInput = {
  name?: string | null;
  includePending?: boolean | null;
  debugLogging?: boolean | null;
  autoCreateAccounts?: boolean | null;
};
export type CredentialsInput = { setupToken?: string | null; apiKey?: string | null; baseUrl?: string | null };

/** A run whose worker has not been heard of for this long is shown as stale and replaced by the next sync. */
const STALE_AFTER_MS = 10 * 60 * 1000;

export function runStatusOf(run: SyncRunRow, now = Date.now()): string {
  if (run.status === "syncing" && run.heartbeatAt && now - new Date(run.heartbeatAt).getTime() > STALE_AFTER_MS) return "stale";
  return run.status;
}

/** How many sync runs of a connection one read may ask for. */
export function runsLimit(limit: number): number {
  return Math.min(Math.max(limit, 1), 100);
}

/** How many days of an account's balance history one read may ask for. */
export function balanceDaysLimit(limit: number): number {
  return Math.min(Math.max(limit, 1), 3660);
}

/**
 * Bank connections as the family sees them: connecting (credentials are sealed at once and never shown
 * again), settings, new credentials, deletion, and syncs on demand or on schedule.
 */
export class BankingService {
  constructor(
    private readonly repositories: BankingRepositories,
    private readonly accounts: AccountRepository,
    private readonly secrets: SecretBox,
    private readonly config: Config,
    private readonly queue: SyncQueue | null,
    private readonly outbound: OutboundGuard,
  ) {}

  list(actor: Actor): Promise<ConnectionRow[]> {
    return this.repositories.connections.connections(actor.familyId);
  }

  async get(actor: Actor, id: string): Promise<ConnectionRow> {
    const row = isUuid(id) ? await this.repositories.connections.connection(id, actor.familyId) : null;
    if (!row) throw new NotFoundError("Bank connection");
    return row;
  }

  async connectSimplefin(actor: Actor, setupToken: string, autoCreateAccounts = true): Promise<ConnectionRow> {
    const { accessUrl, versions } = await this.claim(setupToken);
    return this.createConnection(actor, "simplefin", "SimpleFIN", accessUrl, null, { versions }, autoCreateAccounts);
  }

  async connectLunchflow(actor: Actor, apiKey: string, baseUrl?: string | null, autoCreateAccounts = true): Promise<ConnectionRow> {
    const url = await this.checkLunchflow(apiKey, baseUrl);
    return this.createConnection(actor, "lunchflow", "Lunch Flow", apiKey.trim(), url, {}, autoCreateAccounts);
  }

  async updateSettings(actor: Actor, id: string, input: ConnectionSettingsInput): Promise<ConnectionRow> {
    await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes: ConnectionChanges = {};
    if (input.name !== undefined && input.name !== null) changes.name = requiredText(problems, "Name", input.name, 120);
    if (input.includePending !== undefined && input.includePending !== null) changes.includePending = input.includePending;
    if (input.debugLogging !== undefined && input.debugLogging !== null) changes.debugLogging = input.debugLogging;
    if (input.autoCreateAccounts !== undefined && input.autoCreateAccounts !== null) changes.autoCreateAccounts = input.autoCreateAccounts;
    problems.throwIfAny();
    await this.repositories.connections.updateConnection(id, changes, actor.familyId);
    return this.get(actor, id);
  }

  /**
   * New credentials for a connection the provider stopped accepting: accounts, transactions and history
   * all stay, and a sync starts at once. The provider must be the same one.
   */
  async replaceCredentials(actor: Actor, id: string, input: CredentialsInput): Promise<ConnectionRow> {
    const connection = await this.get(actor, id);
    let credentials: string;
    let baseUrl = connection.baseUrl;
    let syncState: SyncState = connection.syncState;
    if (connection.provider === "simplefin") {
      if (!input.setupToken) throw new ValidationError(["Setup token can't be blank"]);
      const claimed = await this.claim(input.setupToken);
      credentials = claimed.accessUrl;
      syncState = { ...syncState, versions: claimed.versions };
    } else {
      if (!input.apiKey) throw new ValidationError(["API key can't be blank"]);
      baseUrl = await this.checkLunchflow(input.apiKey, input.baseUrl ?? connection.baseUrl);
      credentials = input.apiKey.trim();
    }
    await this.repositories.connections.updateConnection(
      id,
      { credentials: this.secrets.seal(credentials), baseUrl, syncState, status: "good", lastError: null },
      actor.familyId,
    );
    await this.requestSync(connection, "manual");
    return this.get(actor, id);
  }

  /** Removes the connection and its sync history; the family's accounts and imported transactions stay. */
  async delete(actor: Actor, id: string): Promise<ConnectionRow> {
    const connection = await this.get(actor, id);
    await this.repositories.connections.deleteConnection(actor.familyId, id);
    return connection;
  }

  /**
   * Feeds an existing account of the family from a provider account instead of the one the sync would
   * create. Provider accounts become known at a connection's first sync; connect with
   * autoCreateAccounts: false to link them before anything is imported (they wait unlinked until then).
   *
   * The rule: nothing moves silently. Linking is refused (422) once the provider has imported
   * transactions into the account it feeds now, when the currencies differ, or when the account is
   * fed by another provider account; and while a sync of the connection is under way (409). An account
   * the sync created earlier stays as it is, with its balance history and holdings. After linking, the
   * next sync (started at once) walks the whole history again, so the linked account gets everything;
   * rows already there under the same provider ids are updated in place, not duplicated.
   */
  async linkAccount(actor: Actor, providerAccountId: string, accountId: string): Promise<ProviderAccountRow> {
    const providerAccount = isUuid(providerAccountId)
      ? await this.repositories.accounts.providerAccount(providerAccountId, actor.familyId)
      : null;
    if (!providerAccount) throw new NotFoundError("Bank account");
    const account = isUuid(accountId) ? (await this.accounts.byIds(actor.familyId, [accountId]))[0] : null;
    if (!account) throw new NotFoundError("Account");
    if (providerAccount.accountId === account.id) return providerAccount;
    const connection = (await this.repositories.connections.connection(providerAccount.connectionId, actor.familyId))!;
    const problems = new ValidationErrors();
    if (account.currency !== providerAccount.currency)
      problems.add(`Account currency ${account.currency} does not match the bank account's currency ${providerAccount.currency}`);
    const feeder = await this.repositories.accounts.providerAccountOf(account.id);
    if (feeder) problems.add("Account is already linked to another bank account");
    if (
      providerAccount.accountId &&
      (await this.repositories.accounts.hasImportedTransactions(providerAccount.accountId, connection.provider))
    )
      problems.add("Bank account has already imported transactions into another account: linking it now would leave them behind");
    problems.throwIfAny();
    const open = await this.repositories.connections.openRun(connection.id);
    if (open && runStatusOf(open) !== "stale")
      throw new ConflictError("A sync of this connection is under way: link the account once it finished");
    if (!(await this.repositories.accounts.linkProviderAccount(providerAccount.id, actor.familyId, account.id)))
      throw new ValidationError(["Account is already linked to another bank account"]);
    await this.repositories.connections.updateConnection(
      connection.id,
      { syncState: { ...connection.syncState, historyComplete: false, walk: null } },
      actor.familyId,
    );
    if (connection.status !== "requires_update") await this.requestSync(connection, "manual");
    return (await this.repositories.accounts.providerAccount(providerAccount.id, actor.familyId))!;
  }

  async sync(actor: Actor, id: string): Promise<SyncRunRow> {
    const connection = await this.get(actor, id);
    if (connection.status === "requires_update") {
      throw new ConflictError("The provider no longer accepts this connection's credentials: replace them first");
    }
    return this.requestSync(connection, "manual");
  }

  /**
   * When the periodic refresh syncs the connection next: BANK_SYNC_INTERVAL_HOURS after its last sync
   * (at the refresh's next check, every 10 minutes, once that has passed); null while it waits for new
   * credentials. The same rule as `dueConnections`.
   */
  nextSyncAt(connection: BudgetedConnection & { status: string; lastSyncAt: Date | null }, now = new Date()): Date | null {
    if (connection.status === "requires_update") return null;
    const resets = this.budgetResetsAt(connection, now);
    // A walk stopped at the budget continues as soon as the budget allows (the refresh treats it as due).
    if (historyLeft(connection)) return resets ?? now;
    if (!connection.lastSyncAt) return resets ?? now;
    const next = new Date(connection.lastSyncAt.getTime() + this.config.bankSyncIntervalHours * 3_600_000);
    return resets && resets > next ? resets : next;
  }

  /**
   * When a SimpleFIN connection that spent today's request budget may ask again (the next 00:00 UTC,
   * as the budget counts UTC days); null while budget is left, and always for Lunch Flow (no budget).
   */
  budgetResetsAt(connection: BudgetedConnection, now = new Date()): Date | null {
    if (connection.provider !== "simplefin" || connection.requestsToday < this.config.simplefinDailyRequestBudget) return null;
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  }

  /** The request budget per UTC day of the connection's provider; null when it has none. */
  dailyRequestBudget(connection: { provider: string }): number | null {
    return connection.provider === "simplefin" ? this.config.simplefinDailyRequestBudget : null;
  }

  /**
   * The periodic refresh: every connection whose interval has passed gets a sync, unless it waits for
   * new credentials, one is already under way, or (SimpleFIN) its daily request budget is spent.
   */
  async refreshDue(): Promise<number> {
    let enqueued = 0;
    for (const connection of await this.repositories.connections.dueConnections(this.config.bankSyncIntervalHours * 3600)) {
      if (connection.provider === "simplefin" && connection.requestsToday >= this.config.simplefinDailyRequestBudget) continue;
      const open = await this.repositories.connections.openRun(connection.id);
      if (open && runStatusOf(open) !== "stale") continue;
      await this.requestSync(connection, "scheduled");
      enqueued += 1;
    }
    return enqueued;
  }

  /** Syncs every connection of the family that can sync (not waiting for new credentials), as upstream's family sync does. */
  async syncAll(actor: Actor): Promise<SyncRunRow[]> {
    const runs: SyncRunRow[] = [];
    for (const connection of await this.list(actor)) {
      if (connection.status !== "requires_update") runs.push(await this.requestSync(connection, "manual"));
    }
    return runs;
  }

  async runsPage(actor: Actor, page?: number | null, perPage?: number | null): Promise<{ items: SyncRunRow[]; pagination: PageInfo }> {
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.repositories.connections.runsPage(actor.familyId, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async run(actor: Actor, id: string): Promise<SyncRunRow> {
    const row = isUuid(id) ? await this.repositories.connections.familyRun(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Sync");
    return row;
  }

  async latestRun(actor: Actor): Promise<SyncRunRow | null> {
    const { rows } = await this.repositories.connections.runsPage(actor.familyId, 1, 0);
    return rows[0] ?? null;
  }

  /** The holdings the bank providers reported (every snapshot kept) and a manual account's of every day, oldest first as upstream lists them. */
  async holdings(
    actor: Actor,
    filter: HoldingFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: HoldingRow[]; pagination: PageInfo }> {
    const problems = new ValidationErrors();
    for (const [label, value] of [
      ["account_id", filter.accountId],
      ["security_id", filter.securityId],
    ] as const) {
      if (value && !isUuid(value)) problems.add(`${label} is not a valid id`);
    }
    if (filter.accountIds?.some((id) => !isUuid(id))) problems.add("account_ids contains an invalid id");
    problems.throwIfAny();
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.repositories.accounts.holdingsPage(actor.familyId, filter, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async holding(actor: Actor, id: string): Promise<HoldingRow> {
    const row = isUuid(id) ? await this.repositories.accounts.holding(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Holding");
    return row;
  }

  runs(connectionId: string, limit: number): Promise<SyncRunRow[]> {
    return this.repositories.connections.runs(connectionId, runsLimit(limit));
  }

  /** Returns the open run (a sync already waiting or under way), or records a new one and enqueues it. */
  private async requestSync(connection: ConnectionRow, trigger: "manual" | "scheduled"): Promise<SyncRunRow> {
    if (!this.queue) throw new Error("no queue to enqueue bank syncs on");
    const open = await this.repositories.connections.openRun(connection.id);
    let runId = open?.id;
    if (open && runStatusOf(open) === "stale") {
      await this.repositories.connections.updateRun(open.id, {
        status: "failed",
        finishedAt: new Date(),
        errors: [...open.errors, "The sync stopped responding"],
      });
      runId = undefined;
    }
    if (!runId) {
      runId = newId();
      await this.repositories.connections.createRun({
        id: runId,
        familyId: connection.familyId,
        connectionId: connection.id,
        status: "pending",
        trigger,
      });
    }
    await this.queue.enqueue(connection.id, trigger);
    return { ...(await this.repositories.connections.run(runId))!, connectionName: connection.name };
  }

  private async createConnection(
    actor: Actor,
    provider: BankProvider,
    name: string,
    secret: string,
    baseUrl: string | null,
    syncState: SyncState,
    autoCreateAccounts: boolean,
  ): Promise<ConnectionRow> {
    const id = newId();
    await this.repositories.connections.createConnection({
      id,
      familyId: actor.familyId,
      provider,
      name,
      credentials: this.secrets.seal(secret),
      baseUrl,
      includePending: this.config.bankIncludePending,
      syncState,
      autoCreateAccounts,
    });
    const connection = await this.get(actor, id);
    await this.requestSync(connection, "manual");
    return connection;
  }

  private http(secrets: string[]): UpstreamHttpOptions {
    return {
      outbound: this.outbound,
      httpsOnly: !this.config.allowInsecureUpstreams,
      timeoutMs: this.config.bankUpstreamTimeoutMs,
      retryBaseMs: this.config.bankRetryBaseMs,
      attempts: 3,
      retryRateLimited: false,
      redact: redactor(secrets),
    };
  }

  /** Claims the token (it works once) and asks the Bridge which protocol versions it speaks. */
  private async claim(setupToken: string): Promise<{ accessUrl: string; versions: string[] }> {
    let accessUrl: string;
    try {
      accessUrl = await claimSetupToken(setupToken ?? "", this.http([setupToken]));
    } catch (error) {
      if (error instanceof UpstreamClaimError)
        throw new UpstreamUnavailableError(`SimpleFIN could not be reached to claim the token: ${error.message}`);
      throw error;
    }
    // The access URL is ours now; /info only refines which protocol version later requests use.
    const versions = await new SimplefinClient(accessUrl, this.http(SimplefinClient.secretsOf(accessUrl))).info().catch(() => []);
    return { accessUrl, versions };
  }

  /** Checks the base URL and that Lunch Flow accepts the key, so a typo fails now rather than at the first sync. */
  private async checkLunchflow(apiKey: string, baseUrl?: string | null): Promise<string> {
    const problems = new ValidationErrors();
    const key = requiredText(problems, "API key", apiKey, 500);
    const url = baseUrl?.trim() || this.config.lunchflowBaseUrl;
    const http = this.http([key]);
    const urlProblem = await upstreamUrlProblem(http, url);
    if (urlProblem) problems.add(`Base URL ${urlProblem}`);
    problems.throwIfAny();
    try {
      await new LunchflowClient(url, key, http).accounts();
    } catch (error) {
      if (error instanceof UpstreamError && error.failure === "auth") throw new ValidationError(["Lunch Flow refused this API key"]);
      if (error instanceof UpstreamError) throw new UpstreamUnavailableError(`Lunch Flow could not be reached: ${error.message}`);
      throw error;
    }
    return url;
  }
}

type BudgetedConnection = { provider: string; requestsToday: number; syncState?: SyncState | null };

/** Whether a window walk stopped before its end (at the request budget, or a worker that died). */
function historyLeft(connection: BudgetedConnection): boolean {
  return Boolean(connection.syncState?.walk);
}
