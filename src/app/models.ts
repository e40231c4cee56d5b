import type { Sequelize } from "sequelize";
import { AuditSavedSearchModel } from "../audit/log/audit-saved-search.model";
import { AuthSessionModel, AuthTokenModel } from "../finance/auth/auth-session.model";
import { AccountModel } from "../finance/accounts/account.model";
import { BankConnectionModel, BankSyncRunModel } from "../finance/banking/banking.model";
import { CategoryModel } from "../finance/categories/category.model";
import { ChatMessageModel, ChatModel, ToolCallModel } from "../finance/chats/chat.model";
import { ApiKeyModel } from "../finance/identity/api-key.model";
import { FamilyModel } from "../finance/identity/family.model";
import { UserModel } from "../finance/identity/user.model";
import { MerchantModel } from "../finance/merchants/merchant.model";
import { SsoIdentityModel, SsoProviderModel } from "../audit/sso/sso.model";
import { TagModel } from "../finance/tags/tag.model";
import { TransactionModel, TransactionTagModel, TransferModel } from "../finance/transactions/transaction.model";

/** Binds every model class to the process's Sequelize instance (one database per process). */
export function initModels(sequelize: Sequelize): void {
  for (const model of [
    FamilyModel,
    UserModel,
    ApiKeyModel,
    AccountModel,
    CategoryModel,
    MerchantModel,
    TagModel,
    TransactionModel,
    TransactionTagModel,
    TransferModel,
    ChatModel,
    ChatMessageModel,
    ToolCallModel,
    BankConnectionModel,
    BankSyncRunModel,
    AuditSavedSearchModel,
    AuthSessionModel,
    AuthTokenModel,
    SsoProviderModel,
    SsoIdentityModel,
  ]) {
    model.initialize(sequelize);
  }
}
