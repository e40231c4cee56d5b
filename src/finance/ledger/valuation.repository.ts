import type { Sequelize, Transaction } from "sequelize";
import { bindParam, readRows, selectRows } from "../../platform/common/sql";

export type ValuationKind = "opening_anchor" | "current_anchor" | "reconciliation";

export type ValuationRow = {
  id: string;
  accountId: string;
  accountName: string;
  accountType: string;
  date: string;
  amount: string;
  currency: string;
  kind: ValuationKind;
  name: string;
  notes: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type ValuationValues = {
  id: string;
  familyId: string;
  accountId: string;
  date: string;
  amount: string;
  currency: string;
  kind: ValuationKind;
  name: string;
  notes?: string | null;
};

export type ValuationChanges = Partial<Pick<ValuationValues, "date" | "amount" | "kind" | "name" | "notes">>;

export type ValuationFilter = { accountId?: string; startDate?: string; endDate?: string };

const COLUMNS = `v.id, v.account_id AS "accountId", a.name AS "accountName", a.account_type AS "accountType", v.date::text AS date,
  v.amount, v.currency, v.kind, v.name, v.notes, v.created_at AS "createdAt", v.updated_at AS "updatedAt"`;
const FROM = "FROM valuations v JOIN accounts a ON a.id = v.account_id";
const CHANGE_COLUMNS: Record<keyof ValuationChanges, string> = {
  date: "date",
  amount: "amount",
  kind: "kind",
  name: "name",
  notes: "notes",
};

export class ValuationRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async insert(row: ValuationValues, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `INSERT INTO valuations (id, family_id, account_id, date, amount, currency, kind, name, notes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [row.id, row.familyId, row.accountId, row.date, row.amount, row.currency, row.kind, row.name, row.notes ?? null],
      transaction,
    );
  }

  async update(id: string, changes: ValuationChanges, transaction: Transaction): Promise<void> {
    const bind: unknown[] = [id];
    const sets = Object.entries(changes)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${CHANGE_COLUMNS[key as keyof ValuationChanges]} = ${bindParam(bind, value)}`);
    if (sets.length === 0) return;
    await selectRows(
      this.sequelize,
      `UPDATE valuations SET ${sets.join(", ")}, updated_at = now() WHERE id = $1 RETURNING id`,
      bind,
      transaction,
    );
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, "DELETE FROM valuations WHERE id = $1 RETURNING id", [id], transaction);
  }

  async byId(familyId: string, id: string, transaction?: Transaction): Promise<ValuationRow | null> {
    const [row] = await readRows<ValuationRow>(
      this.sequelize,
      `SELECT ${COLUMNS} ${FROM} WHERE v.family_id = $1 AND v.id = $2`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  async onDate(accountId: string, date: string, transaction: Transaction): Promise<ValuationRow | null> {
    const [row] = await selectRows<ValuationRow>(
      this.sequelize,
      `SELECT ${COLUMNS} ${FROM} WHERE v.account_id = $1 AND v.date = $2::date`,
      [accountId, date],
      transaction,
    );
    return row ?? null;
  }

  async ofKind(accountId: string, kind: ValuationKind, transaction: Transaction): Promise<ValuationRow | null> {
    const [row] = await selectRows<ValuationRow>(
      this.sequelize,
      `SELECT ${COLUMNS} ${FROM} WHERE v.account_id = $1 AND v.kind = $2 ORDER BY v.date DESC LIMIT 1`,
      [accountId, kind],
      transaction,
    );
    return row ?? null;
  }

  /** How many valuations the account has besides its opening anchor. */
  async countOthers(accountId: string, transaction: Transaction): Promise<number> {
    const [row] = await selectRows<{ count: string }>(
      this.sequelize,
      "SELECT count(*) AS count FROM valuations WHERE account_id = $1 AND kind <> 'opening_anchor'",
      [accountId],
      transaction,
    );
    return Number(row.count);
  }

  /** Newest first, as upstream's reverse_chronological, with the total in the same statement. */
  async page(familyId: string, filter: ValuationFilter, limit: number, offset: number): Promise<{ rows: ValuationRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = ["v.family_id = $1"];
    if (filter.accountId) conditions.push(`v.account_id = ${bindParam(bind, filter.accountId)}::uuid`);
    if (filter.startDate) conditions.push(`v.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`v.date <= ${bindParam(bind, filter.endDate)}::date`);
    const where = conditions.join(" AND ");
    const rows = await readRows<ValuationRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, count(*) OVER () AS total ${FROM} WHERE ${where}
        ORDER BY v.date DESC, v.created_at DESC, v.id DESC LIMIT ${limit} OFFSET ${offset}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(this.sequelize, `SELECT count(*) AS total ${FROM} WHERE ${where}`, bind);
    return { rows, total: Number(count.total) };
  }
}
