import type { Sequelize } from "sequelize";
import { AccountRepository } from "./accounts/account.repository";
import { AccountService } from "./accounts/account.service";
import { CategoryRepository } from "./categories/category.repository";
import { CategoryService } from "./categories/category.service";
import type { EventBus } from "./events/event-bus";
import { AuditRepository } from "./audit/audit.repository";
import { AuditService } from "./audit/audit.service";
import { AuthRepository } from "./auth/auth.repository";
import { LoginService } from "./auth/login.service";
import { SessionService } from "./auth/session.service";
import type { Config } from "./config/config";
import { ApiKeyService } from "./identity/api-key.service";
import { UserService } from "./identity/user.service";
import { MerchantRepository } from "./merchants/merchant.repository";
import { MerchantService } from "./merchants/merchant.service";
import { TagRepository } from "./tags/tag.repository";
import { TagService } from "./tags/tag.service";
import { TransactionRepository } from "./transactions/transaction.repository";
import { TransactionService } from "./transactions/transaction.service";

export type Repositories = ReturnType<typeof createRepositories>;
export type Services = ReturnType<typeof createServices>;

function createRepositories(sequelize: Sequelize) {
  return {
    accounts: new AccountRepository(sequelize),
    categories: new CategoryRepository(sequelize),
    merchants: new MerchantRepository(sequelize),
    tags: new TagRepository(sequelize),
    transactions: new TransactionRepository(sequelize),
    audit: new AuditRepository(sequelize),
    auth: new AuthRepository(sequelize),
  };
}

/** The transport-neutral core: GraphQL resolvers, the REST adapter (through GraphQL) and the CLI call these. */
export function createServices(sequelize: Sequelize, events: EventBus, config: Config) {
  const repositories = createRepositories(sequelize);
  const audit = new AuditService(repositories.audit, events, { partitionsAhead: config.auditPartitionsAhead });
  const sessions = new SessionService(sequelize, repositories.auth, audit, {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    sessionTtlSeconds: config.sessionTtlSeconds,
  });
  return {
    repositories,
    events,
    users: new UserService(sequelize, audit),
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
    audit,
    sessions,
    logins: new LoginService(sequelize, repositories.auth, audit, sessions, {
      maxFailures: config.loginMaxFailures,
      lockoutSeconds: config.loginLockoutSeconds,
    }),
  };
}
