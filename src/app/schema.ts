import "reflect-metadata";
import type { GraphQLSchema } from "graphql";
import { buildSchema, type ClassType } from "type-graphql";
import { AccountResolver } from "../finance/accounts/account.resolver";
import { AlertResolver } from "../audit/alerts/alert.resolver";
import { BankAccountResolver, BankConnectionResolver, HoldingResolver } from "../finance/banking/banking.resolver";
import { AuditResolver } from "../audit/log/audit.resolver";
import { AuditFacetResolver } from "../audit/log/audit-facets.resolver";
import { AuditExportResolver } from "../audit/exports/export.resolver";
import { RetentionResolver } from "../audit/retention/retention.resolver";
import { CategoryResolver } from "../finance/categories/category.resolver";
import { ChatResolver } from "../finance/chats/chat.resolver";
import { IdentityResolver } from "../finance/identity/identity.resolver";
import { FamilyResetResolver } from "../finance/identity/family-reset.resolver";
import { ImportResolver } from "../finance/imports/import.resolver";
import { FamilyExportResolver } from "../finance/exports/family-export.resolver";
import { UserAdminResolver } from "../finance/identity/user-admin.resolver";
import { UserLookupResolver } from "../finance/identity/user-lookup.resolver";
import { ExchangeRateResolver } from "../finance/exchange-rates/exchange-rate.resolver";
import { TwoFactorResolver } from "../finance/auth/two-factor.resolver";
import { MerchantResolver } from "../finance/merchants/merchant.resolver";
import {
  AccountHistoryResolver,
  BalanceResolver,
  resolveBalanceFiguresDirectly,
  ValuationResolver,
} from "../finance/ledger/ledger.resolver";
import { SecurityPriceResolver, SecurityResolver, TradeResolver } from "../finance/investments/investment.resolver";
import { SsoResolver } from "../audit/sso/sso.resolver";
import { StreamResolver } from "../audit/streaming/stream.resolver";
import { BudgetResolver } from "../finance/planning/budget.resolver";
import { RuleResolver } from "../finance/planning/rule.resolver";
import { RecurringTransactionResolver } from "../finance/planning/recurring.resolver";
import { HouseholdResolver } from "../finance/planning/household.resolver";
import { TagResolver } from "../finance/tags/tag.resolver";
import { TransactionResolver } from "../finance/transactions/transaction.resolver";
import { TransferResolver } from "../finance/transactions/transfer.resolver";
import { UsageResolver } from "../finance/usage/usage.resolver";
import type { EventBus } from "../platform/events/event-bus";
import { authChecker } from "../transports/graphql/auth-checker";

export const resolvers = [
  IdentityResolver,
  FamilyResetResolver,
  ImportResolver,
  FamilyExportResolver,
  AccountResolver,
  AccountHistoryResolver,
  BalanceResolver,
  ValuationResolver,
  ExchangeRateResolver,
  CategoryResolver,
  TagResolver,
  MerchantResolver,
  TransactionResolver,
  TransferResolver,
  ChatResolver,
  BankConnectionResolver,
  BankAccountResolver,
  HoldingResolver,
  SecurityResolver,
  SecurityPriceResolver,
  TradeResolver,
  AuditResolver,
  AuditFacetResolver,
  AuditExportResolver,
  RetentionResolver,
  SsoResolver,
  UserAdminResolver,
  UserLookupResolver,
  TwoFactorResolver,
  StreamResolver,
  AlertResolver,
  UsageResolver,
  BudgetResolver,
  RuleResolver,
  RecurringTransactionResolver,
  HouseholdResolver,
] as const;

/**
 * Builds the one schema every transport executes against. Input rules live in services, not
 * decorators. Subscriptions listen on the event bus, so they see events from every process.
 */
export async function createSchema(events: EventBus, extraResolvers: ClassType[] = []): Promise<GraphQLSchema> {
  const schema = await buildSchema({ resolvers: [...resolvers, ...extraResolvers], authChecker, validate: false, pubSub: events.pubSub });
  resolveBalanceFiguresDirectly(schema);
  return schema;
}
