import { QueryTypes, type Sequelize } from "sequelize";
import { selectRows } from "../../platform/common/sql";

/** An imported transaction as the sync compares it: provider key, content and fingerprint. */
export type ExistingTransaction = {
  id: string;
  accountId: string;
  externalId: string | null;
  date: string;
  amount: string;
  currency: string;
  pending: boolean;
  providerName: string | null;
  providerFingerprint: string | null;
};

export type TransactionWrite = {
  id: string;
  accountId: string;
  date: string;
  amount: string;
  currency: string;
  name: string;
  merchantId: string | null;
  pending: boolean;
  externalId: string;
  fingerprint: string;
};

/** The transactions a sync imports: matched, upserted, re-keyed and expired in bulk statements. */
export class BankImportRepository {
  constructor(private readonly sequelize: Sequelize) {}

  private async execute(sql: string, bind: unknown[]): Promise<void> {
    await this.sequelize.query(sql, { bind, type: QueryTypes.RAW });
  }

  // ---- transactions -----------------------------------------------------------------------------------

  /** Merchant ids by exact name, created when missing (names are unique per family, case-insensitively). */
  async merchantIds(familyId: string, names: string[]): Promise<Map<string, string>> {
    if (names.length === 0) return new Map();
    await this.execute(
      `INSERT INTO merchants (id, family_id, name)
       SELECT gen_random_uuid(), $1, n FROM (SELECT DISTINCT ON (lower(n)) n FROM unnest($2::text[]) n) names
       ON CONFLICT (family_id, lower(name)) DO NOTHING`,
      [familyId, names],
    );
    const rows = await selectRows<{ id: string; name: string }>(
      this.sequelize,
      `SELECT id, lower(name) AS name FROM merchants WHERE family_id = $1 AND lower(name) = ANY(SELECT lower(n) FROM unnest($2::text[]) n)`,
      [familyId, names],
    );
    const byLower = new Map(rows.map((row) => [row.name, row.id]));
    return new Map(names.map((name) => [name, byLower.get(name.toLowerCase())!]));
  }

  existingTransactions(accountIds: string[], source: string, start: string, end: string): Promise<ExistingTransaction[]> {
    return selectRows<ExistingTransaction>(
      this.sequelize,
      `SELECT id, account_id AS "accountId", external_id AS "externalId", date::text AS date, amount::text AS amount, currency, pending,
              provider_name AS "providerName", provider_fingerprint AS "providerFingerprint"
         FROM transactions
        WHERE account_id = ANY($1::uuid[]) AND source = $2 AND date >= $3::date AND date < $4::date`,
      [accountIds, source, start, end],
    );
  }

  /**
   * New and changed rows in one statement. A name the user changed (it no longer equals what the
   * provider last sent) is kept; category, notes and tags are never touched. Rows whose fingerprint is
   * unchanged are not rewritten. Returns how many rows were inserted and how many updated.
   */
  async upsertTransactions(
    familyId: string,
    source: string,
    rows: TransactionWrite[],
  ): Promise<{ created: number; updated: number; createdIds: string[] }> {
    if (rows.length === 0) return { created: 0, updated: 0, createdIds: [] };
    const [result] = await selectRows<{ created: string; updated: string; createdIds: string[] | null }>(
      this.sequelize,
      `WITH written AS (
         INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, merchant_id, pending, external_id, source, provider_name, provider_fingerprint)
         SELECT v.id, $1, v.account_id, v.date, v.amount, v.currency, v.name, v.merchant_id, v.pending, v.external_id, $2, v.name, v.fingerprint
           FROM unnest($3::uuid[], $4::uuid[], $5::date[], $6::numeric[], $7::text[], $8::text[], $9::uuid[], $10::boolean[], $11::text[], $12::text[])
             AS v(id, account_id, date, amount, currency, name, merchant_id, pending, external_id, fingerprint)
         ON CONFLICT (account_id, (coalesce(source, '')), external_id) WHERE external_id IS NOT NULL DO UPDATE SET
           date = EXCLUDED.date, amount = EXCLUDED.amount, currency = EXCLUDED.currency, pending = EXCLUDED.pending,
           name = CASE WHEN transactions.name IS NOT DISTINCT FROM transactions.provider_name THEN EXCLUDED.name ELSE transactions.name END,
           merchant_id = coalesce(transactions.merchant_id, EXCLUDED.merchant_id),
           provider_name = EXCLUDED.provider_name, provider_fingerprint = EXCLUDED.provider_fingerprint, updated_at = now()
         WHERE transactions.provider_fingerprint IS DISTINCT FROM EXCLUDED.provider_fingerprint
         RETURNING id, (xmax = 0) AS inserted)
       SELECT count(*) FILTER (WHERE inserted) AS created, count(*) FILTER (WHERE NOT inserted) AS updated,
              array_agg(id) FILTER (WHERE inserted) AS "createdIds" FROM written`,
      [familyId, source, ...columnsOf(rows)],
    );
    return { created: Number(result.created), updated: Number(result.updated), createdIds: result.createdIds ?? [] };
  }

  /**
   * Rows that come back under a new provider key (a pending row posted, a re-issued id) keep their id,
   * user edits and tags; only the provider's fields and the key change.
   */
  async rekeyTransactions(rows: TransactionWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await this.execute(
      `UPDATE transactions t SET external_id = v.external_id, date = v.date, amount = v.amount, currency = v.currency, pending = v.pending,
              name = CASE WHEN t.name IS NOT DISTINCT FROM t.provider_name THEN v.name ELSE t.name END,
              merchant_id = coalesce(t.merchant_id, v.merchant_id), provider_name = v.name, provider_fingerprint = v.fingerprint, updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[], $3::date[], $4::numeric[], $5::text[], $6::text[], $7::uuid[], $8::boolean[], $9::text[], $10::text[])
           AS v(id, account_id, date, amount, currency, name, merchant_id, pending, external_id, fingerprint)
        WHERE t.id = v.id AND t.account_id = v.account_id`,
      columnsOf(rows),
    );
  }

  async deleteTransactions(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.execute(`DELETE FROM transactions WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /** Pending rows that never posted: gone after this long whatever the provider says. */
  async expireStalePending(accountIds: string[], source: string, before: string): Promise<number> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `DELETE FROM transactions WHERE account_id = ANY($1::uuid[]) AND source = $2 AND pending AND date < $3::date RETURNING id`,
      [accountIds, source, before],
    );
    return rows.length;
  }
}

function columnsOf(rows: TransactionWrite[]): unknown[] {
  const ids: string[] = [];
  const accounts: string[] = [];
  const dates: string[] = [];
  const amounts: string[] = [];
  const currencies: string[] = [];
  const names: string[] = [];
  const merchants: (string | null)[] = [];
  const pendings: boolean[] = [];
  const externalIds: string[] = [];
  const fingerprints: string[] = [];
  for (const row of rows) {
    ids.push(row.id);
    accounts.push(row.accountId);
    dates.push(row.date);
    amounts.push(row.amount);
    currencies.push(row.currency);
    names.push(row.name);
    merchants.push(row.merchantId);
    pendings.push(row.pending);
    externalIds.push(row.externalId);
    fingerprints.push(row.fingerprint);
  }
  return [ids, accounts, dates, amounts, currencies, names, merchants, pendings, externalIds, fingerprints];
}
