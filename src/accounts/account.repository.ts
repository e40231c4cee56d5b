import type { Sequelize } from "sequelize";
import { alignToKeys, selectRows } from "../common/sql";
import { AccountModel, type AccountClassification, type AccountType } from "./account.model";

export type AccountRow = {
  id: string;
  name: string;
  accountType: AccountType;
  classification: AccountClassification;
  currency: string;
  balance: string;
  createdAt: Date;
  updatedAt: Date;
};

export type AccountFields = Pick<AccountModel, "name" | "accountType" | "classification" | "currency" | "balance">;

const COLUMNS = `id, name, account_type AS "accountType", classification, currency, balance, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class AccountRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(familyId: string, id: string, fields: AccountFields): Promise<void> {
    await AccountModel.create({ ...fields, id, familyId });
  }

  async update(familyId: string, id: string, changes: Partial<AccountFields>): Promise<void> {
    await AccountModel.update(changes, { where: { id, familyId } });
  }

  async delete(familyId: string, id: string): Promise<void> {
    await AccountModel.destroy({ where: { id, familyId } });
  }

  /** The family's currency, the default of its new accounts. */
  async familyCurrency(familyId: string): Promise<string> {
    const [row] = await selectRows<{ currency: string }>(this.sequelize, "SELECT currency FROM families WHERE id = $1", [familyId]);
    return row.currency;
  }

  async byIds(familyId: string, ids: readonly string[]): Promise<(AccountRow | null)[]> {
    const rows = await selectRows<AccountRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM accounts WHERE family_id = $1 AND id = ANY($2::uuid[])`,
      [familyId, ids],
    );
    return alignToKeys(ids, rows);
  }

  list(familyId: string): Promise<AccountRow[]> {
    return selectRows<AccountRow>(this.sequelize, `SELECT ${COLUMNS} FROM accounts WHERE family_id = $1 ORDER BY lower(name), id`, [
      familyId,
    ]);
  }
}
