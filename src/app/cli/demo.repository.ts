import type { CreationAttributes, Sequelize } from "sequelize";
import { AuditRepository, type NewAuditEvent } from "../../audit/log/audit.repository";
import { selectRows } from "../../platform/common/sql";
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

  /** Events per month ("2026-03") recorded with the demo history's user agent, oldest first. */
  async historyMonths(agent: string): Promise<Array<{ month: string; events: number }>> {
    const rows = await selectRows<{ month: string; events: string }>(
      this.sequelize,
      `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, count(*) AS events
         FROM audit_events WHERE user_agent = $1 GROUP BY 1 ORDER BY 1`,
      [agent],
    );
    return rows.map((row) => ({ month: row.month, events: Number(row.events) }));
  }

  /**
   * Past audit events, stored as record() stores them (each with its queue entry for the sequencer), after
   * their months' partitions are created: in one transaction, all of them or none.
   */
  async insertAuditHistory(months: string[], events: NewAuditEvent[]): Promise<void> {
    const audit = new AuditRepository(this.sequelize);
    await this.sequelize.transaction(async (transaction) => {
      for (const month of months) {
        const [row] = await selectRows<{ ok: boolean }>(
          this.sequelize,
          "SELECT audit_create_month_partition($1::date) AS ok",
          [`${month}-01`],
          transaction,
        );
        if (!row.ok) throw new Error(`cannot add the audit partition of ${month}: the default partition holds events of that month`);
      }
      for (const event of events) await audit.append(event, transaction);
    });
  }
}
