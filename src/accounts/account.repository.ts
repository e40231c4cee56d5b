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
  /** The institution of the bank-provider account feeding it; read by the account queries only (undefined elsewhere). */
  institutionName?: string | null;
};

const COLUMNS = `id, name, account_type AS "accountType", classification, currency, balance, created_at AS "createdAt", updated_at AS "updatedAt",
  (SELECT min(p.institution) FROM bank_provider_accounts p WHERE p.account_id = accounts.id) AS "institutionName"`;

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

  /** A page ordered by name, with the total in the same statement. */
  async page(familyId: string, limit: number, offset: number): Promise<{ rows: AccountRow[]; total: number }> {
    const rows = await selectRows<AccountRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM accounts WHERE family_id = $1 ORDER BY lower(name), id LIMIT $2 OFFSET $3`,
      [familyId, limit, offset],
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(this.sequelize, "SELECT count(*) AS total FROM accounts WHERE family_id = $1", [
      familyId,
    ]);
    return { rows, total: Number(count.total) };
  }

  list(familyId: string): Promise<AccountRow[]> {
    return selectRows<AccountRow>(this.sequelize, `SELECT ${COLUMNS} FROM accounts WHERE family_id = $1 ORDER BY lower(name), id`, [
      familyId,
    ]);
  }
}
