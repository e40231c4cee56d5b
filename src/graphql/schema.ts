import "reflect-metadata";
import type { GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { AccountResolver } from "../accounts/account.resolver";
import { AlertResolver } from "../alerts/alert.resolver";
import { BankAccountResolver, BankConnectionResolver, HoldingResolver } from "../banking/banking.resolver";
import { AuditResolver } from "../audit/audit.resolver";
import { AuditExportResolver } from "../exports/export.resolver";
import { RetentionResolver } from "../retention/retention.resolver";
import { CategoryResolver } from "../categories/category.resolver";
import { ChatResolver } from "../chats/chat.resolver";
import { IdentityResolver } from "../identity/identity.resolver";
import { UserAdminResolver } from "../identity/user-admin.resolver";
import { MerchantResolver } from "../merchants/merchant.resolver";
import { SsoResolver } from "../sso/sso.resolver";
import { StreamResolver } from "../streaming/stream.resolver";
import { TagResolver } from "../tags/tag.resolver";
import { TransactionResolver } from "../transactions/transaction.resolver";
import { TransferResolver } from "../transactions/transfer.resolver";
import { UsageResolver } from "../usage/usage.resolver";
import type { EventBus } from "../events/event-bus";
import { authChecker } from "./auth-checker";

export const resolvers = [
  IdentityResolver,
  AccountResolver,
  CategoryResolver,
  TagResolver,
  MerchantResolver,
  TransactionResolver,
  TransferResolver,
  ChatResolver,
  BankConnectionResolver,
  BankAccountResolver,
  HoldingResolver,
  AuditResolver,
  AuditExportResolver,
  RetentionResolver,
  SsoResolver,
  UserAdminResolver,
  StreamResolver,
  AlertResolver,
  UsageResolver,
] as const;

/**
 * Builds the one schema every transport executes against. Input rules live in services, not
 * decorators. Subscriptions listen on the event bus, so they see events from every process.
 */
export function createSchema(events: EventBus): Promise<GraphQLSchema> {
  return buildSchema({ resolvers, authChecker, validate: false, pubSub: events.pubSub });
}
