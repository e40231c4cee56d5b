import type { Sequelize, Transaction } from "sequelize";
import { bindParam, readRows, selectRows } from "../../platform/common/sql";

export type ExchangeRateRow = {
  id: string;
  fromCurrency: string;
  toCurrency: string;
  date: string;
  rate: string;
  createdAt: Date;
  updatedAt: Date;
};

export type ExchangeRateFilter = { fromCurrency?: string; toCurrency?: string; startDate?: string; endDate?: string };

const COLUMNS = `id, from_currency AS "fromCurrency", to_currency AS "toCurrency", date::text AS date, trim_scale(rate)::text AS rate,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The family's exchange rates: one per currency pair per day. */
export class ExchangeRateRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** The currency the family's totals are in. */
  async familyCurrency(familyId: string): Promise<string | null> {
    const [row] = await readRows<{ currency: string }>(this.sequelize, "SELECT currency FROM families WHERE id = $1", [familyId]);
    return row ? row.currency.trim() : null;
  }

  async byId(familyId: string, id: string, transaction?: Transaction): Promise<ExchangeRateRow | null> {
    const [row] = await selectRows<ExchangeRateRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM exchange_rates WHERE family_id = $1 AND id = $2`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  async onDate(familyId: string, from: string, to: string, date: string, transaction: Transaction): Promise<ExchangeRateRow | null> {
    const [row] = await selectRows<ExchangeRateRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM exchange_rates WHERE family_id = $1 AND from_currency = $2 AND to_currency = $3 AND date = $4 FOR UPDATE`,
      [familyId, from, to, date],
      transaction,
    );
    return row ?? null;
  }

  /** Inserts the pair's rate for the day, or replaces the one it already has. */
  async upsert(
    familyId: string,
    id: string,
    from: string,
    to: string,
    date: string,
    rate: string,
    transaction: Transaction,
  ): Promise<string> {
    const [row] = await selectRows<{ id: string }>(
      this.sequelize,
      `INSERT INTO exchange_rates (id, family_id, from_currency, to_currency, date, rate) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (family_id, from_currency, to_currency, date) DO UPDATE SET rate = EXCLUDED.rate, updated_at = now()
       RETURNING id`,
      [id, familyId, from, to, date, rate],
      transaction,
    );
    return row.id;
  }

  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      "DELETE FROM exchange_rates WHERE family_id = $1 AND id = $2 RETURNING id",
      [familyId, id],
      transaction,
    );
    return rows.length > 0;
  }

  /** Newest day first, with the total in the same statement. */
  async page(
    familyId: string,
    filter: ExchangeRateFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: ExchangeRateRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const where = ["family_id = $1"];
    if (filter.fromCurrency) where.push(`from_currency = ${bindParam(bind, filter.fromCurrency)}`);
    if (filter.toCurrency) where.push(`to_currency = ${bindParam(bind, filter.toCurrency)}`);
    if (filter.startDate) where.push(`date >= ${bindParam(bind, filter.startDate)}`);
    if (filter.endDate) where.push(`date <= ${bindParam(bind, filter.endDate)}`);
    const rows = await readRows<ExchangeRateRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM exchange_rates WHERE ${where.join(" AND ")}
        ORDER BY date DESC, from_currency, to_currency LIMIT ${bindParam(bind, limit)} OFFSET ${bindParam(bind, offset)}`,
      bind,
    );
    return { rows: rows.map(({ total: _total, ...row }) => row), total: rows.length > 0 ? Number(rows[0].total) : 0 };
  }

  /**
   * Every rate into `to` from one of `from`, on or before `upTo`, oldest first per currency, plus the
   * newest one before `since` (the rate in force on `since`): what converting a series needs.
   */
  history(familyId: string, to: string, from: readonly string[], since: string, upTo: string): Promise<ExchangeRateRow[]> {
    return readRows<ExchangeRateRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM exchange_rates r
        WHERE family_id = $1 AND to_currency = $2 AND from_currency = ANY($3::text[]) AND date <= $5
          AND date >= coalesce((SELECT max(p.date) FROM exchange_rates p
                                 WHERE p.family_id = $1 AND p.to_currency = $2 AND p.from_currency = r.from_currency AND p.date <= $4), $4)
        ORDER BY from_currency, date`,
      [familyId, to, [...from], since, upTo],
    );
  }
}
