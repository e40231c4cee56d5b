import type { Sequelize } from "sequelize";
import { alignToKeys, selectRows } from "../common/sql";
import type { AccountClassification, AccountType } from "./account.model";

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

const COLUMNS = `id, name, account_type AS "accountType", classification, currency, balance, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class AccountRepository {
  constructor(private readonly sequelize: Sequelize) {}

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
