import type { Sequelize, Transaction } from "sequelize";
import { alignToKeys, selectRows } from "../../platform/common/sql";
import { AccountModel, type AccountClassification, type AccountType } from "./account.model";

export type AccountRow = {
  id: string;
  name: string;
  accountType: AccountType;
  classification: AccountClassification;
  currency: string;
  balance: string;
  /** The cash part of the balance, kept by the ledger with it (an investment's balance less its holdings). */
  cashBalance?: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The institution of the bank-provider account feeding it; read by the account queries only (undefined elsewhere). */
  institutionName?: string | null;
};

export type AccountFields = Pick<AccountModel, "name" | "accountType" | "classification" | "currency" | "balance">;
/** What a client may change; the balance is the ledger's to write. */
export type AccountChanges = Partial<Omit<AccountFields, "balance">>;

const COLUMNS = `id, name, account_type AS "accountType", classification, currency, balance, cash_balance AS "cashBalance", created_at AS "createdAt", updated_at AS "updatedAt"`;
/** With the institution of the provider account feeding it: the account routes show it, relation reads do not need it. */
const DETAIL_COLUMNS = `${COLUMNS}, (SELECT min(p.institution) FROM bank_provider_accounts p WHERE p.account_id = accounts.id) AS "institutionName"`;

export class AccountRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(familyId: string, id: string, fields: AccountFields, transaction: Transaction): Promise<void> {
    await AccountModel.create({ ...fields, id, familyId }, { transaction });
  }

  async update(familyId: string, id: string, changes: AccountChanges, transaction: Transaction): Promise<void> {
    if (Object.keys(changes).length > 0) await AccountModel.update(changes, { where: { id, familyId }, transaction });
  }

  /** Whether this call removed the row (of concurrent deletes, only one does). */
  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    return (await AccountModel.destroy({ where: { id, familyId }, transaction })) > 0;
  }

  /** The family's currency, the default of its new accounts. */
  async familyCurrency(familyId: string, transaction?: Transaction): Promise<string> {
    const [row] = await selectRows<{ currency: string }>(
      this.sequelize,
      "SELECT currency FROM families WHERE id = $1",
      [familyId],
      transaction,
    );
    return row.currency;
  }

  async byIds(familyId: string, ids: readonly string[], transaction?: Transaction): Promise<(AccountRow | null)[]> {
    const rows = await selectRows<AccountRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM accounts WHERE family_id = $1 AND id = ANY($2::uuid[])`,
      [familyId, ids],
      transaction,
    );
    return alignToKeys(ids, rows);
  }

  async detail(familyId: string, id: string): Promise<AccountRow | null> {
    const [row] = await selectRows<AccountRow>(this.sequelize, `SELECT ${DETAIL_COLUMNS} FROM accounts WHERE family_id = $1 AND id = $2`, [
      familyId,
      id,
    ]);
    return row ?? null;
  }

  /** A page ordered by name, with the total in the same statement. */
  async page(familyId: string, limit: number, offset: number): Promise<{ rows: AccountRow[]; total: number }> {
    const rows = await selectRows<AccountRow & { total: string }>(
      this.sequelize,
      `SELECT ${DETAIL_COLUMNS}, count(*) OVER () AS total FROM accounts WHERE family_id = $1 ORDER BY lower(name), id LIMIT $2 OFFSET $3`,
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
