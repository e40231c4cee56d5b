import type { Sequelize, Transaction } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";
import { moneySql } from "../transactions";

export type RecurringRow = {
  id: string;
  accountId: string | null;
  accountName: string | null;
  accountType: string | null;
  merchantId: string | null;
  merchantName: string | null;
  name: string | null;
  amount: string;
  currency: string;
  expectedDayOfMonth: number;
  lastOccurrenceDate: string;
  nextExpectedDate: string;
  status: string;
  occurrenceCount: number;
  manual: boolean;
  expectedAmountMin: string | null;
  expectedAmountMax: string | null;
  expectedAmountAvg: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type RecurringFields = Omit<RecurringRow, "id" | "accountName" | "accountType" | "merchantName" | "createdAt" | "updatedAt">;

/** A group of the recent history that may be a recurring pattern. */
export type Candidate = {
  accountId: string;
  merchantId: string | null;
  name: string | null;
  amount: string;
  currency: string;
  occurrences: number;
  lastDate: string;
  days: number[];
};

export type DetectedPattern = Omit<Candidate, "days"> & { expectedDay: number; nextExpectedDate: string };

const COLUMNS = `r.id, r.account_id AS "accountId", a.name AS "accountName", a.account_type AS "accountType", r.merchant_id AS "merchantId",
  m.name AS "merchantName", r.name, r.amount, r.currency, r.expected_day_of_month AS "expectedDayOfMonth",
  r.last_occurrence_date::text AS "lastOccurrenceDate", r.next_expected_date::text AS "nextExpectedDate", r.status,
  r.occurrence_count AS "occurrenceCount", r.manual, r.expected_amount_min AS "expectedAmountMin", r.expected_amount_max AS "expectedAmountMax",
  r.expected_amount_avg AS "expectedAmountAvg", r.created_at AS "createdAt", r.updated_at AS "updatedAt"`;
const FROM = "recurring_transactions r LEFT JOIN accounts a ON a.id = r.account_id LEFT JOIN merchants m ON m.id = r.merchant_id";

export class RecurringRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async page(
    familyId: string,
    filter: { status?: string; accountId?: string },
    limit: number,
    offset: number,
  ): Promise<{ rows: RecurringRow[]; total: number }> {
    const bind: unknown[] = [];
    const where = [`r.family_id = ${bindParam(bind, familyId)}`];
    if (filter.status) where.push(`r.status = ${bindParam(bind, filter.status)}`);
    if (filter.accountId) where.push(`r.account_id = ${bindParam(bind, filter.accountId)}`);
    const [{ total }] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM recurring_transactions r WHERE ${where.join(" AND ")}`,
      bind,
    );
    const rows = await selectRows<RecurringRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(" AND ")} ORDER BY r.status, r.next_expected_date, r.id
       LIMIT ${bindParam(bind, limit)} OFFSET ${bindParam(bind, offset)}`,
      bind,
    );
    return { rows, total: Number(total) };
  }

  async byId(familyId: string, id: string, transaction?: Transaction): Promise<RecurringRow | null> {
    const [row] = await selectRows<RecurringRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE r.family_id = $1 AND r.id = $2`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  /** Active bills (money out) expected between two days, soonest first. */
  async upcoming(familyId: string, from: string, to: string): Promise<RecurringRow[]> {
    return selectRows<RecurringRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE r.family_id = $1 AND r.status = 'active' AND r.amount > 0
         AND r.next_expected_date BETWEEN $2 AND $3 ORDER BY r.next_expected_date, r.id`,
      [familyId, from, to],
    );
  }

  async insert(familyId: string, id: string, fields: RecurringFields, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO recurring_transactions (id, family_id, account_id, merchant_id, name, amount, currency, expected_day_of_month,
         last_occurrence_date, next_expected_date, status, occurrence_count, manual, expected_amount_min, expected_amount_max, expected_amount_avg)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      {
        bind: [
          id,
          familyId,
          fields.accountId,
          fields.merchantId,
          fields.name,
          fields.amount,
          fields.currency,
          fields.expectedDayOfMonth,
          fields.lastOccurrenceDate,
          fields.nextExpectedDate,
          fields.status,
          fields.occurrenceCount,
          fields.manual,
          fields.expectedAmountMin,
          fields.expectedAmountMax,
          fields.expectedAmountAvg,
        ],
        transaction,
      },
    );
  }

  async update(
    familyId: string,
    id: string,
    changes: { status?: string; expectedDayOfMonth?: number; nextExpectedDate?: string },
    transaction: Transaction,
  ): Promise<void> {
    const bind: unknown[] = [];
    const sets = ["updated_at = now()"];
    if (changes.status !== undefined) sets.push(`status = ${bindParam(bind, changes.status)}`);
    if (changes.expectedDayOfMonth !== undefined) sets.push(`expected_day_of_month = ${bindParam(bind, changes.expectedDayOfMonth)}`);
    if (changes.nextExpectedDate !== undefined) sets.push(`next_expected_date = ${bindParam(bind, changes.nextExpectedDate)}`);
    await this.sequelize.query(
      `UPDATE recurring_transactions SET ${sets.join(", ")} WHERE family_id = ${bindParam(bind, familyId)} AND id = ${bindParam(bind, id)}`,
      { bind, transaction },
    );
  }

  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      "DELETE FROM recurring_transactions WHERE family_id = $1 AND id = $2 RETURNING id",
      [familyId, id],
      transaction,
    );
    return rows.length > 0;
  }

  /**
   * Upstream's candidate groups in one aggregate: the last three months' transactions (transfers left
   * out) by account, merchant (or name when there is none), amount to the cent and currency; at least
   * three of them, the newest within 45 days.
   */
  async candidates(familyId: string, since: string, recentSince: string): Promise<Candidate[]> {
    return selectRows<Candidate>(
      this.sequelize,
      `SELECT t.account_id AS "accountId", t.merchant_id AS "merchantId", CASE WHEN t.merchant_id IS NULL THEN t.name END AS name,
              round(t.amount, 2)::text AS amount, t.currency, count(*)::int AS occurrences, max(t.date)::text AS "lastDate",
              array_agg(extract(day FROM t.date)::int) AS days
       FROM transactions t
       WHERE t.family_id = $1 AND t.date >= $2 AND ${moneySql.notTransfer("t")}
       GROUP BY t.account_id, t.merchant_id, CASE WHEN t.merchant_id IS NULL THEN t.name END, round(t.amount, 2), t.currency
       HAVING count(*) >= 3 AND max(t.date) >= $3`,
      [familyId, since, recentSince],
    );
  }

  /**
   * Creates or refreshes the detected rows in one statement; a hand-entered row for the same pattern
   * is left alone (upstream skips manual ones), and a detected row keeps the status a client gave it.
   */
  async upsertDetected(familyId: string, patterns: DetectedPattern[], transaction: Transaction): Promise<number> {
    if (patterns.length === 0) return 0;
    const column = <K extends keyof DetectedPattern>(key: K) => patterns.map((pattern) => pattern[key]);
    const [row] = await selectRows<{ written: number }>(
      this.sequelize,
      `WITH written AS (
         INSERT INTO recurring_transactions (id, family_id, account_id, merchant_id, name, amount, currency, expected_day_of_month,
           last_occurrence_date, next_expected_date, status, occurrence_count, manual)
         SELECT gen_random_uuid(), $1, v.account_id, v.merchant_id, v.name, v.amount, v.currency, v.day, v.last, v.next, 'active', v.n, false
         FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::numeric[], $6::text[], $7::int[], $8::date[], $9::date[], $10::int[])
           AS v(account_id, merchant_id, name, amount, currency, day, last, next, n)
         WHERE NOT EXISTS (SELECT 1 FROM recurring_transactions m WHERE m.family_id = $1 AND m.manual AND m.account_id = v.account_id
           AND m.merchant_id IS NOT DISTINCT FROM v.merchant_id AND m.name IS NOT DISTINCT FROM v.name AND m.amount = v.amount AND m.currency = v.currency)
         ON CONFLICT (family_id, account_id, merchant_id, name, amount, currency) WHERE NOT manual DO UPDATE SET
           expected_day_of_month = EXCLUDED.expected_day_of_month, last_occurrence_date = EXCLUDED.last_occurrence_date,
           next_expected_date = EXCLUDED.next_expected_date, occurrence_count = EXCLUDED.occurrence_count, updated_at = now()
         RETURNING 1)
       SELECT count(*)::int AS written FROM written`,
      [
        familyId,
        column("accountId"),
        column("merchantId"),
        column("name"),
        column("amount"),
        column("currency"),
        column("expectedDay"),
        column("lastDate"),
        column("nextExpectedDate"),
        column("occurrences"),
      ],
      transaction,
    );
    return row.written;
  }

  async familyCurrency(familyId: string): Promise<string> {
    const [row] = await selectRows<{ currency: string }>(this.sequelize, "SELECT currency FROM families WHERE id = $1", [familyId]);
    return row.currency;
  }
}

/** Whether an account or merchant id is one of the family's. */
export async function ownedBy(sequelize: Sequelize, familyId: string, table: "accounts" | "merchants", id: string): Promise<boolean> {
  const rows = await selectRows<{ id: string }>(sequelize, `SELECT id FROM ${table} WHERE family_id = $1 AND id = $2`, [familyId, id]);
  return rows.length > 0;
}

/** The family's own stored fields. */
export async function familyRow(
  sequelize: Sequelize,
  familyId: string,
): Promise<{ id: string; name: string; currency: string; createdAt: Date; updatedAt: Date } | undefined> {
  const [row] = await selectRows<{ id: string; name: string; currency: string; createdAt: Date; updatedAt: Date }>(
    sequelize,
    `SELECT id, name, currency, created_at AS "createdAt", updated_at AS "updatedAt" FROM families WHERE id = $1`,
    [familyId],
  );
  return row;
}
