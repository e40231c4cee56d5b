import type { Sequelize } from "sequelize";
import { AuditSavedSearchModel } from "../audit/audit-saved-search.model";
import { AuthSessionModel, AuthTokenModel } from "../auth/auth-session.model";
import { AccountModel } from "../accounts/account.model";
import { BankConnectionModel, BankSyncRunModel } from "../banking/banking.model";
import { CategoryModel } from "../categories/category.model";
import { ChatMessageModel, ChatModel, ToolCallModel } from "../chats/chat.model";
import { ApiKeyModel } from "../identity/api-key.model";
import { FamilyModel } from "../identity/family.model";
import { UserModel } from "../identity/user.model";
import { MerchantModel } from "../merchants/merchant.model";
import { SsoIdentityModel, SsoProviderModel } from "../sso/sso.model";
import { TagModel } from "../tags/tag.model";
import { TransactionModel, TransactionTagModel, TransferModel } from "../transactions/transaction.model";

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
