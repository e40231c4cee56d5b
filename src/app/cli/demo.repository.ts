import type { CreationAttributes, Sequelize } from "sequelize";
import { AccountModel } from "../../finance/accounts/account.model";
import { CategoryModel } from "../../finance/categories/category.model";
import { FamilyModel } from "../../finance/identity/family.model";
import { MerchantModel } from "../../finance/merchants/merchant.model";
import { TagModel } from "../../finance/tags/tag.model";
import { TransactionModel, TransactionTagModel, TransferModel } from "../../finance/transactions/transaction.model";

/** Everything the demo family holds, as rows. */
export type DemoRows = {
  accounts: CreationAttributes<AccountModel>[];
  categories: CreationAttributes<CategoryModel>[];
  merchants: CreationAttributes<MerchantModel>[];
  tags: CreationAttributes<TagModel>[];
  transactions: CreationAttributes<TransactionModel>[];
  transactionTags: CreationAttributes<TransactionTagModel>[];
  transfers: CreationAttributes<TransferModel>[];
};

/** Writes the demo family's data in one transaction: all of it or none. */
export class DemoRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Families already on the instance: the demo refuses to join them unless forced. */
  countFamilies(): Promise<number> {
    return FamilyModel.count();
  }

  async insert(rows: DemoRows): Promise<void> {
    await this.sequelize.transaction(async (transaction) => {
      await AccountModel.bulkCreate(rows.accounts, { transaction });
      await CategoryModel.bulkCreate(rows.categories, { transaction });
      await MerchantModel.bulkCreate(rows.merchants, { transaction });
      await TagModel.bulkCreate(rows.tags, { transaction });
      await TransactionModel.bulkCreate(rows.transactions, { transaction });
      await TransactionTagModel.bulkCreate(rows.transactionTags, { transaction });
      await TransferModel.bulkCreate(rows.transfers, { transaction });
    });
  }
}
