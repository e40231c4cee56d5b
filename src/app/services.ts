import type { Sequelize } from "sequelize";
import {
  BANK_SYNC_JOB_OPTIONS,
  bankSyncJobId,
  EXPORT_JOB_OPTIONS,
  exportJobId,
  familyExportJobId,
  JOBS,
  QueueName,
  replyJobOptions,
  type QueueBackend,
} from "../../workers/queues";
import { AlertDispatcher } from "../audit/alerts/alert.dispatcher";
import { FamilyExportRepository } from "../finance/exports/family-export.repository";
import { FamilyExportService, type FamilyExportQueue } from "../finance/exports/family-export.service";
import { FamilyRestoreRepository } from "../finance/exports/family-restore.repository";
import { FamilyRestoreService } from "../finance/exports/family-restore.service";
import { AlertEvaluator } from "../audit/alerts/alert.evaluator";
import { AlertLimiter } from "../audit/alerts/alert.storms";
import { AlertRepository } from "../audit/alerts/alert.repository";
import { AlertChannelService } from "../audit/alerts/alert-channel.service";
import { AlertService } from "../audit/alerts/alert.service";
import { GeoCountryLookup } from "../audit/alerts/geo-country";
import { AccountRepository } from "../finance/accounts/account.repository";
import { AccountService } from "../finance/accounts/account.service";
import { AssistantService } from "../finance/assistant/assistant.service";
import { FinanceRepository } from "../finance/assistant/finance.repository";
import { createProvider } from "../finance/assistant/providers";
import { BankSyncService } from "../finance/banking/bank-sync.service";
import { createBankingRepositories } from "../finance/banking/banking.repository";
import { BankingService, type SyncQueue } from "../finance/banking/banking.service";
import { CategoryRepository } from "../finance/categories/category.repository";
import { CategoryService } from "../finance/categories/category.service";
import { ChatRepository } from "../finance/chats/chat.repository";
import { ChatService, type ReplyQueue } from "../finance/chats/chat.service";
import { createLogger, type Logger } from "../platform/common/logger";
import type { Config } from "../platform/config/config";
import type { EventBus } from "../platform/events/event-bus";
import { AuditSavedSearchRepository } from "../audit/log/audit-saved-search.repository";
import { AuditSavedSearchService } from "../audit/log/audit-saved-search.service";
import { AuditRepository } from "../audit/log/audit.repository";
import { AuditFacetRepository } from "../audit/log/audit-facets.repository";
import { AuditFacetService } from "../audit/log/audit-facets.service";
import { AuditService } from "../audit/log/audit.service";
import { AuthRepository } from "../finance/auth/auth.repository";
import { LoginService } from "../finance/auth/login.service";
import { SessionService } from "../finance/auth/session.service";
import { TwoFactorRepository } from "../finance/auth/two-factor.repository";
import { TwoFactorService } from "../finance/auth/two-factor.service";
import { ApiKeyRepository } from "../finance/identity/api-key.repository";
import { ApiKeyService } from "../finance/identity/api-key.service";
import { UsageService } from "../finance/usage/usage.service";
import { UserAdminService } from "../finance/identity/user-admin.service";
import { UserLookupService } from "../finance/identity/user-lookup.service";
import { UserRepository } from "../finance/identity/user.repository";
import { FamilyDataRepository } from "../finance/identity/family-data.repository";
import { FamilyResetService } from "../finance/identity/family-reset.service";
import { ImportRepository } from "../finance/imports/import.repository";
import { ImportService } from "../finance/imports/import.service";
import { UserService } from "../finance/identity/user.service";
import { MerchantRepository } from "../finance/merchants/merchant.repository";
import { MerchantService } from "../finance/merchants/merchant.service";
import { OutboundGuard, type Resolver } from "../platform/outbound/outbound.guard";
import { SecretBox } from "../platform/security/secret-box";
import { ExportRepository } from "../audit/exports/export.repository";
import { AuditExportService, type ExportQueue } from "../audit/exports/export.service";
import { DownloadSigner } from "../audit/exports/signed-url";
import { ReportRepository } from "../audit/exports/report.repository";
import { ChainConsumerPump } from "../audit/delivery/chain-consumer.pump";
import { DestinationHandler } from "../audit/streaming/destination.handler";
import { StreamDestinationService } from "../audit/streaming/stream-destination.service";
import { ConsumerRepository } from "../audit/delivery/consumer.repository";
import { DestinationRepository } from "../audit/streaming/stream.repository";
import { ConnectedAccountService } from "../audit/sso/connected-accounts.service";
import { OidcClient } from "../audit/sso/oidc-client";
import { SsoLoginService } from "../audit/sso/sso-login.service";
import { MobileSsoCodeRepository } from "../audit/sso/mobile-sso-code.repository";
import { SsoProviderService } from "../audit/sso/sso-provider.service";
import { SsoLoginRequestRepository } from "../audit/sso/sso-login-request.repository";
import { SsoRepository } from "../audit/sso/sso.repository";
import { BudgetRepository } from "../finance/planning/budget.repository";
import { BudgetService } from "../finance/planning/budget.service";
import { RuleRepository } from "../finance/planning/rule.repository";
import { RecurringRepository } from "../finance/planning/recurring.repository";
import { RecurringService } from "../finance/planning/recurring.service";
import { HouseholdService } from "../finance/planning/household.service";
import { RuleService } from "../finance/planning/rule.service";
import { TagRepository } from "../finance/tags/tag.repository";
import { TagService } from "../finance/tags/tag.service";
import { TransactionRepository } from "../finance/transactions/transaction.repository";
import { TransactionService } from "../finance/transactions/transaction.service";
import { BalanceService } from "../finance/ledger/balance.service";
import { LedgerRepository } from "../finance/ledger/ledger.repository";
import { LedgerService } from "../finance/ledger/ledger.service";
import { ValuationRepository } from "../finance/ledger/valuation.repository";
import { ValuationService } from "../finance/ledger/valuation.service";
import { InvestmentRepository, SecurityPriceService, TradeService } from "../finance/investments";
import { ExchangeRateRepository } from "../finance/exchange-rates/exchange-rate.repository";
import { ExchangeRateService } from "../finance/exchange-rates/exchange-rate.service";
import { DirectoryStore, S3Store } from "../audit/retention/archive-store";
import { checkpointSigner } from "../audit/retention/checkpoint-key";
import { RetentionRepository } from "../audit/retention/retention.repository";
import { RetentionService } from "../audit/retention/retention.service";

export type Repositories = ReturnType<typeof createRepositories>;
export type Services = ReturnType<typeof createServices>;

function createRepositories(sequelize: Sequelize) {
  return {
    accounts: new AccountRepository(sequelize),
    categories: new CategoryRepository(sequelize),
    merchants: new MerchantRepository(sequelize),
    tags: new TagRepository(sequelize),
    transactions: new TransactionRepository(sequelize),
    ledger: new LedgerRepository(sequelize),
    valuations: new ValuationRepository(sequelize),
    investments: new InvestmentRepository(sequelize),
    budgets: new BudgetRepository(sequelize),
    exchangeRates: new ExchangeRateRepository(sequelize),
    rules: new RuleRepository(sequelize),
    recurring: new RecurringRepository(sequelize),
    chats: new ChatRepository(sequelize),
    finance: new FinanceRepository(sequelize),
    banking: createBankingRepositories(sequelize),
    audit: new AuditRepository(sequelize),
    auditFacets: new AuditFacetRepository(sequelize),
    auditSavedSearches: new AuditSavedSearchRepository(),
    auth: new AuthRepository(sequelize),
    users: new UserRepository(sequelize),
    familyData: new FamilyDataRepository(sequelize),
    imports: new ImportRepository(sequelize),
    apiKeys: new ApiKeyRepository(sequelize),
    sso: new SsoRepository(sequelize),
    ssoLoginRequests: new SsoLoginRequestRepository(sequelize),
    exports: new ExportRepository(sequelize),
    familyExports: new FamilyExportRepository(sequelize),
    familyRestores: new FamilyRestoreRepository(sequelize),
    reports: new ReportRepository(sequelize),
    streamConsumers: new ConsumerRepository(sequelize),
    streamDestinations: new DestinationRepository(sequelize),
    retention: new RetentionRepository(sequelize),
    alerts: new AlertRepository(sequelize),
  };
}

/**
 * What the services need from the running process beyond the database and the event bus. `publicUrl`
 * is the service's external base URL (SSO redirect URIs), known only once the server listens.
 */
export type ServiceDeps = {
  config: Config;
  queues: QueueBackend;
  logger?: Logger;
  publicUrl?: () => string;
  /** How the outbound guard resolves host names; tests inject a hostile DNS. */
  resolve?: Resolver;
};

/** Producers only enqueue: these adapters are the services' whole view of the queues. */
function replyQueueOf(deps: ServiceDeps): ReplyQueue {
  const { assistant } = deps.config;
  return {
    async enqueue(messageId, attempt) {
      await deps.queues
        .queue(QueueName.Assistant)
        .add(
          JOBS[QueueName.Assistant].reply,
          { messageId, attempt },
          replyJobOptions(messageId, attempt, assistant.maxAttempts, assistant.retryDelayMs),
        );
    },
  };
}

function syncQueueOf(deps: ServiceDeps): SyncQueue {
  return {
    async enqueue(connectionId, trigger) {
      await deps.queues
        .queue(QueueName.BankSync)
        .add(
          JOBS[QueueName.BankSync].syncConnection,
          { connectionId, trigger },
          { ...BANK_SYNC_JOB_OPTIONS, jobId: bankSyncJobId(connectionId) },
        );
    },
  };
}

function exportQueueOf(deps: ServiceDeps): ExportQueue {
  const queue = () => deps.queues.queue(QueueName.Exports);
  const enqueue = async (exportId: string) => {
    await queue().add(JOBS[QueueName.Exports].writeExport, { exportId }, { ...EXPORT_JOB_OPTIONS, jobId: exportJobId(exportId) });
  };
  return {
    enqueue,
    async requeue(exportId) {
      const job = await queue().getJob(exportJobId(exportId));
      if (!job || !(await job.isFailed())) return enqueue(exportId);
      // Its job failed before it claimed the request (the database was unreachable, say): the same job
      // runs again. Another sweep may have retried it meanwhile, which is as good.
      await job.retry().catch(async (error: unknown) => {
        if (await job.isFailed()) throw error;
      });
    },
  };
}

function familyExportQueueOf(deps: ServiceDeps): FamilyExportQueue {
  return {
    async enqueue(exportId) {
      await deps.queues
        .queue(QueueName.Exports)
        .add(JOBS[QueueName.Exports].writeFamilyExport, { exportId }, { ...EXPORT_JOB_OPTIONS, jobId: familyExportJobId(exportId) });
    },
  };
}

/** The transport-neutral core: GraphQL resolvers, the REST adapter (through GraphQL), workers and the CLI call these. */
export function createServices(sequelize: Sequelize, events: EventBus, deps: ServiceDeps) {
  const repositories = createRepositories(sequelize);
  const { config } = deps;
  const secrets = SecretBox.fromConfig(config);
  const logger = deps.logger ?? createLogger("silent");
  const audit = new AuditService(
    repositories.audit,
    events,
    {
      partitionsAhead: config.auditPartitionsAhead,
      countBudgetMs: config.auditCountBudgetMs,
      histogramBudgetMs: config.auditHistogramBudgetMs,
    },
    logger,
  );
  const sessions = new SessionService(
    sequelize,
    repositories.auth,
    audit,
    {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      sessionTtlSeconds: config.sessionTtlSeconds,
      refreshReuseGraceSeconds: config.refreshReuseGraceSeconds,
    },
    events,
    secrets,
  );
  const users = new UserService(sequelize, audit, events, repositories.users);
  const twoFactor = new TwoFactorService(sequelize, new TwoFactorRepository(sequelize), audit, secrets);
  /** The one way to reach a user- or upstream-supplied URL or host (src/platform/outbound/outbound.guard.ts). */
  const outbound = new OutboundGuard(config.outbound, deps.resolve);
  const oidc = new OidcClient({ ...config.sso, allowInsecure: config.allowInsecureUpstreams }, outbound);
  const publicUrl = deps.publicUrl ?? (() => config.publicUrl ?? `http://localhost:${config.port}`);
  const ssoProviders = new SsoProviderService(sequelize, repositories.sso, audit, secrets, oidc, publicUrl);
  const connectedAccounts = new ConnectedAccountService(sequelize, repositories.sso, audit);
  const destinationHandler = new DestinationHandler(repositories.streamDestinations, audit, secrets, outbound, logger);
  const apiKeys = new ApiKeyService(sequelize, repositories.apiKeys, audit, events, config.apiKeyCacheMs);
  const geo = new GeoCountryLookup(config.alerts.geoDirectory ?? undefined);
  const alertLimiter = new AlertLimiter(sequelize, repositories.alerts, audit, config.alerts.limits);
  const alertEvaluator = new AlertEvaluator(repositories.alerts, audit, geo, events, alertLimiter);
  const ledger = new LedgerService(repositories.ledger, repositories.valuations);
  const exchangeRates = new ExchangeRateService(sequelize, repositories.exchangeRates, audit);
  const rules = new RuleService(sequelize, repositories.rules, audit);
  const transactions = new TransactionService(
    sequelize,
    repositories.transactions,
    repositories.accounts,
    repositories.categories,
    repositories.merchants,
    repositories.tags,
    ledger,
    audit,
  );
  const accounts = new AccountService(sequelize, repositories.accounts, ledger, exchangeRates, audit);
  const trades = new TradeService(sequelize, repositories.investments, repositories.accounts, repositories.categories, ledger, audit);
  const bankSync = new BankSyncService(sequelize, repositories.banking, ledger, secrets, config, events, logger, outbound);
  // A provider's reported holding prices are the securities' prices of the day (docs/investments.md).
  bankSync.onPricesReported = async (prices, transaction) => {
    await trades.recordPrices(prices, transaction);
  };
  // The family's active rules apply to every new transaction, whichever way it arrives.
  transactions.onCreated = (familyId, created, transaction) => rules.applyToNew(familyId, created, transaction);
  bankSync.onCreated = (familyId, ids, transaction) => rules.applyToNew(familyId, { count: ids.length, ids }, transaction);
  return {
    repositories,
    events,
    outbound,
    users,
    userAdmin: new UserAdminService(sequelize, repositories.users, repositories.familyData, users, sessions, audit, events),
    familyReset: new FamilyResetService(sequelize, repositories.familyData, audit),
    userLookup: new UserLookupService(repositories.users),
    apiKeys,
    usage: new UsageService(apiKeys),
    accounts,
    exchangeRates,
    ledger,
    balances: new BalanceService(repositories.ledger),
    valuations: new ValuationService(sequelize, repositories.valuations, repositories.accounts, ledger, audit),
    trades,
    securityPrices: new SecurityPriceService(sequelize, repositories.investments, trades, audit),
    categories: new CategoryService(sequelize, repositories.categories, audit),
    merchants: new MerchantService(sequelize, repositories.merchants, audit),
    tags: new TagService(sequelize, repositories.tags, audit),
    budgets: new BudgetService(sequelize, repositories.budgets, audit),
    rules,
    recurring: new RecurringService(sequelize, repositories.recurring, audit),
    household: new HouseholdService(sequelize),
    transactions,
    imports: new ImportService(
      sequelize,
      repositories.imports,
      repositories.accounts,
      transactions,
      trades,
      accounts,
      audit,
      config.imports,
    ),
    chats: new ChatService(sequelize, repositories.chats, events, replyQueueOf(deps), config.assistant),
    assistant: new AssistantService(
      sequelize,
      repositories.chats,
      repositories.finance,
      repositories.accounts,
      events,
      config.assistant,
      createProvider(config.assistant),
    ),
    banking: new BankingService(repositories.banking, repositories.accounts, secrets, config, syncQueueOf(deps), outbound),
    bankSync,
    audit,
    auditSavedSearches: new AuditSavedSearchService(repositories.auditSavedSearches),
    auditFacets: new AuditFacetService(repositories.auditFacets, { budgetMs: config.auditHistogramBudgetMs }),
    retention: new RetentionService(
      sequelize,
      repositories.retention,
      audit,
      repositories.audit,
      config.retention.s3 ? new S3Store(config.retention.s3) : new DirectoryStore(config.retention.archiveDir),
      checkpointSigner(config.retention),
      config.retention,
      logger,
    ),
    sessions,
    /** The mobile app's SSO: allowed deep links and upstream's provider names (MOBILE_SSO_*). */
    mobileSso: config.mobileSso,
    twoFactor,
    logins: new LoginService(sequelize, repositories.auth, audit, sessions, twoFactor, {
      maxFailures: config.loginMaxFailures,
      lockoutSeconds: config.loginLockoutSeconds,
      mfaRequiredForAdmins: config.mfaRequiredForAdmins,
    }),
    auditExports: new AuditExportService(
      sequelize,
      repositories.exports,
      repositories.audit,
      repositories.reports,
      audit,
      exportQueueOf(deps),
      new DownloadSigner(secrets.deriveKey("audit-export-download"), config.exports.urlTtlSeconds),
      config.exports,
      logger,
    ),
    familyExports: new FamilyExportService(
      sequelize,
      repositories.familyExports,
      audit,
      familyExportQueueOf(deps),
      // Its own key: a family export's signature names the family, an audit export's the user.
      new DownloadSigner(secrets.deriveKey("family-export-download"), config.exports.urlTtlSeconds),
      config.exports.dir,
      logger,
    ),
    familyRestore: new FamilyRestoreService(sequelize, repositories.familyRestores, repositories.accounts, ledger, trades, audit),
    ssoProviders,
    connectedAccounts,
    ssoLogins: new SsoLoginService(
      sequelize,
      repositories.sso,
      repositories.ssoLoginRequests,
      repositories.users,
      audit,
      secrets,
      oidc,
      ssoProviders,
      connectedAccounts,
      sessions,
      users,
      new MobileSsoCodeRepository(sequelize),
    ),
    streamDestinations: new StreamDestinationService(
      sequelize,
      repositories.streamDestinations,
      repositories.streamConsumers,
      destinationHandler,
      audit,
      secrets,
      outbound,
      config.streaming.deliveryLogDays,
    ),
    /** Delivers the audit stream to its consumers; started by the worker role only (workers/worker-host.ts). */
    streamPump: new ChainConsumerPump(
      sequelize,
      repositories.streamConsumers,
      [destinationHandler, alertEvaluator],
      config.streaming,
      events,
      logger,
    ),
    alerts: new AlertService(sequelize, repositories.alerts, audit, config.alerts.limits),
    alertChannels: new AlertChannelService(sequelize, repositories.alerts, audit, secrets, outbound),
    /** Sends what alert firings committed; started with the stream pump (workers/worker-host.ts). */
    alertDispatcher: new AlertDispatcher(
      repositories.alerts,
      secrets,
      outbound,
      events,
      {
        pollMs: config.alerts.pollMs,
        retryScheduleMs: config.alerts.retryScheduleMs,
        // Longer than one send can take (connect + exchange), so a slow send is not sent twice.
        leaseMs: config.outbound.connectTimeoutMs + config.outbound.timeoutMs + 10_000,
        concurrency: 8,
      },
      logger,
      alertLimiter,
    ),
  };
}
