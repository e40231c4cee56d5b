import type { Sequelize } from "sequelize";
import { AccountRepository } from "./accounts/account.repository";
import { AccountService } from "./accounts/account.service";
import { BankSyncService } from "./banking/bank-sync.service";
import { BankingRepository } from "./banking/banking.repository";
import { BankingService, type SyncQueue } from "./banking/banking.service";
import { CategoryRepository } from "./categories/category.repository";
import { CategoryService } from "./categories/category.service";
import { createLogger, type Logger } from "./common/logger";
import type { Config } from "./config/config";
import type { EventBus } from "./events/event-bus";
import { ApiKeyService } from "./identity/api-key.service";
import { UserService } from "./identity/user.service";
import { MerchantRepository } from "./merchants/merchant.repository";
import { MerchantService } from "./merchants/merchant.service";
import { TagRepository } from "./tags/tag.repository";
import { TagService } from "./tags/tag.service";
import { TransactionRepository } from "./transactions/transaction.repository";
import { SecretBox } from "./security/secret-box";
import { TransactionService } from "./transactions/transaction.service";
import { BANK_SYNC_JOB_OPTIONS, bankSyncJobId, JOBS, QueueName, type QueueBackend } from "../workers/queues";

export type Repositories = ReturnType<typeof createRepositories>;
export type Services = ReturnType<typeof createServices>;

function createRepositories(sequelize: Sequelize) {
  return {
    accounts: new AccountRepository(sequelize),
    categories: new CategoryRepository(sequelize),
    merchants: new MerchantRepository(sequelize),
    tags: new TagRepository(sequelize),
    transactions: new TransactionRepository(sequelize),
    banking: new BankingRepository(sequelize),
  };
}

/** What some services need from the process: settings, the queues they enqueue on, a logger. */
export type Platform = { config: Config; queues?: QueueBackend; logger?: Logger };

function syncQueueOf(queues: QueueBackend | undefined): SyncQueue | null {
  if (!queues) return null;
  return {
    async enqueue(connectionId, trigger) {
      await queues
        .queue(QueueName.BankSync)
        .add(
          JOBS[QueueName.BankSync].syncConnection,
          { connectionId, trigger },
          { ...BANK_SYNC_JOB_OPTIONS, jobId: bankSyncJobId(connectionId) },
        );
    },
  };
}

/** The transport-neutral core: GraphQL resolvers, the REST adapter (through GraphQL) and the CLI call these. */
export function createServices(sequelize: Sequelize, events: EventBus, platform: Platform) {
  const repositories = createRepositories(sequelize);
  const secrets = SecretBox.fromConfig(platform.config);
  const logger = platform.logger ?? createLogger("silent");
  return {
    repositories,
    events,
    users: new UserService(sequelize),
    apiKeys: new ApiKeyService(sequelize),
    accounts: new AccountService(repositories.accounts),
    categories: new CategoryService(repositories.categories),
    merchants: new MerchantService(repositories.merchants),
    tags: new TagService(repositories.tags),
    transactions: new TransactionService(
      sequelize,
      repositories.transactions,
      repositories.accounts,
      repositories.categories,
      repositories.merchants,
      repositories.tags,
    ),
    banking: new BankingService(repositories.banking, repositories.accounts, secrets, platform.config, syncQueueOf(platform.queues)),
    bankSync: new BankSyncService(repositories.banking, secrets, platform.config, events, logger),
  };
}
