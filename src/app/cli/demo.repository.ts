import type { CreationAttributes, Sequelize } from "sequelize";
import { AccountModel } from "../../finance/accounts/account.model";
import { CategoryModel } from "../../finance/categories/category.model";
import { FamilyModel } from "../../finance/identity/family.model";
import { MerchantModel } from "../../finance/merchants/merchant.model";
import { TagModel } from "../../finance/tags/tag.model";
import { TransactionModel, TransactionTagModel, TransferModel } from "../../finance/transactions/transaction.model";
import { LedgerRepository } from "../../finance/ledger/ledger.repository";
import { FULL_HISTORY } from "../../finance/ledger/ledger.sql";
import { ValuationRepository, type ValuationValues } from "../../finance/ledger/valuation.repository";

/** Everything the demo family holds, as rows. */
export type DemoRows = {
  accounts: CreationAttributes<AccountModel>[];
  categories: CreationAttributes<CategoryModel>[];
  merchants: CreationAttributes<MerchantModel>[];
  tags: CreationAttributes<TagModel>[];
  transactions: CreationAttributes<TransactionModel>[];
  transactionTags: CreationAttributes<TransactionTagModel>[];
  transfers: CreationAttributes<TransferModel>[];
  /** Opening anchors and the value updates of the accounts tracked by value; balances are derived from them. */
  valuations: ValuationValues[];
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
      const valuations = new ValuationRepository(this.sequelize);
      for (const valuation of rows.valuations) await valuations.insert(valuation, transaction);
      const ledger = new LedgerRepository(this.sequelize);
      for (const account of rows.accounts) await ledger.recompute(account.id, "forward", FULL_HISTORY, transaction);
    });
  }
}
