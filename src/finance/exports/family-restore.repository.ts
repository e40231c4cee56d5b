import type { Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";

/** What a restore writes, table by table: batches of rows already validated and given their new ids. */
export type RestoredAccount = { id: string; name: string; account_type: string; classification: string; currency: string; balance: string };
export type RestoredCategory = { id: string; name: string; classification: string; color: string; icon: string; parent_id: string | null };
export type RestoredTag = { id: string; name: string; color: string };
export type RestoredMerchant = { id: string; name: string; color: string | null; logo_url: string | null };
export type RestoredValuation = {
  id: string;
  account_id: string;
  date: string;
  amount: string;
  currency: string;
  kind: string;
  name: string;
  notes: string | null;
};
export type RestoredTransaction = {
  id: string;
  account_id: string;
  date: string;
  amount: string;
  currency: string;
  name: string;
  notes: string | null;
  pending: boolean;
  category_id: string | null;
  merchant_id: string | null;
  tag_ids: string[];
  external_id: string | null;
  source: string | null;
  provider_name: string | null;
};
export type RestoredTransfer = { id: string; outflow_transaction_id: string; inflow_transaction_id: string };
export type RestoredSecurity = {
  key: string;
  ticker: string | null;
  name: string | null;
  isin: string | null;
  figi: string | null;
  cusip: string | null;
  currency: string | null;
  kind: string;
  exchange_operating_mic: string | null;
  exchange_mic: string | null;
  exchange_acronym: string | null;
  exchange_name: string | null;
  country_code: string | null;
};
export type RestoredTrade = {
  id: string;
  account_id: string;
  security_key: string;
  date: string;
  qty: string;
  price: string;
  fee: string;
  amount: string;
  currency: string;
  name: string;
  notes: string | null;
  investment_activity_label: string | null;
  category_id: string | null;
};

/**
 * The writes of a restore, each one statement per batch (rows passed as one JSON array and expanded by
 * json_populate_recordset), all in the restore's transaction.
 */
export class FamilyRestoreRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Serialises restores (and nothing else) of one family. */
  async lockFamily(familyId: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `SELECT pg_advisory_xact_lock(hashtextextended('family_restore:' || $1, 0))`, [familyId], transaction);
  }

  /** Whether the family holds any finance data a restore would write beside. */
  async holdsData(familyId: string, transaction: Transaction): Promise<boolean> {
    const [row] = await selectRows<{ holds: boolean }>(
      this.sequelize,
      `SELECT EXISTS (SELECT 1 FROM accounts WHERE family_id = $1) OR EXISTS (SELECT 1 FROM categories WHERE family_id = $1)
           OR EXISTS (SELECT 1 FROM tags WHERE family_id = $1) OR EXISTS (SELECT 1 FROM merchants WHERE family_id = $1)
           OR EXISTS (SELECT 1 FROM rules WHERE family_id = $1) AS holds`,
      [familyId],
      transaction,
    );
    return row.holds;
  }

  async insertAccounts(familyId: string, rows: RestoredAccount[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO accounts (id, family_id, name, account_type, classification, currency, balance)
       SELECT r.id, $2, r.name, r.account_type, r.classification, r.currency, r.balance
         FROM json_to_recordset($1::json) AS r(id uuid, name text, account_type text, classification text, currency text, balance numeric)`,
      familyId,
      rows,
      transaction,
    );
  }

  /** Categories without their parents first; setCategoryParents links them once all exist. */
  async insertCategories(familyId: string, rows: RestoredCategory[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO categories (id, family_id, name, classification, color, icon)
       SELECT r.id, $2, r.name, r.classification, r.color, r.icon
         FROM json_to_recordset($1::json) AS r(id uuid, name text, classification text, color text, icon text)`,
      familyId,
      rows,
      transaction,
    );
  }

  async setCategoryParents(familyId: string, rows: { id: string; parent_id: string }[], transaction: Transaction): Promise<void> {
    await this.insert(
      `UPDATE categories c SET parent_id = r.parent_id FROM json_to_recordset($1::json) AS r(id uuid, parent_id uuid)
        WHERE c.id = r.id AND c.family_id = $2`,
      familyId,
      rows,
      transaction,
    );
  }

  async insertTags(familyId: string, rows: RestoredTag[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO tags (id, family_id, name, color) SELECT r.id, $2, r.name, r.color
         FROM json_to_recordset($1::json) AS r(id uuid, name text, color text)`,
      familyId,
      rows,
      transaction,
    );
  }

  async insertMerchants(familyId: string, rows: RestoredMerchant[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO merchants (id, family_id, name, color, logo_url) SELECT r.id, $2, r.name, r.color, r.logo_url
         FROM json_to_recordset($1::json) AS r(id uuid, name text, color text, logo_url text)`,
      familyId,
      rows,
      transaction,
    );
  }

  async insertValuations(familyId: string, rows: RestoredValuation[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO valuations (id, family_id, account_id, date, amount, currency, kind, name, notes)
       SELECT r.id, $2, r.account_id, r.date, r.amount, r.currency, r.kind, r.name, r.notes
         FROM json_to_recordset($1::json) AS r(id uuid, account_id uuid, date date, amount numeric, currency text, kind text, name text, notes text)`,
      familyId,
      rows,
      transaction,
    );
  }

  /** Transactions and their tags, in one statement. */
  async insertTransactions(familyId: string, rows: RestoredTransaction[], transaction: Transaction): Promise<void> {
    await this.insert(
      `WITH r AS (
         SELECT * FROM json_to_recordset($1::json) AS r(id uuid, account_id uuid, date date, amount numeric, currency text, name text,
           notes text, pending boolean, category_id uuid, merchant_id uuid, tag_ids uuid[], external_id text, source text, provider_name text)
       ), inserted AS (
         INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, pending, category_id, merchant_id,
                                   external_id, source, provider_name)
         SELECT id, $2, account_id, date, amount, currency, name, notes, pending, category_id, merchant_id, external_id, source, provider_name
           FROM r RETURNING id
       )
       INSERT INTO transaction_tags (transaction_id, tag_id)
       SELECT r.id, tag FROM r, unnest(r.tag_ids) AS tag WHERE EXISTS (SELECT 1 FROM inserted i WHERE i.id = r.id)`,
      familyId,
      rows.map((row) => ({ ...row, tag_ids: `{${row.tag_ids.join(",")}}` })),
      transaction,
    );
  }

  async insertTransfers(familyId: string, rows: RestoredTransfer[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO transfers (id, family_id, outflow_transaction_id, inflow_transaction_id)
       SELECT r.id, $2, r.outflow_transaction_id, r.inflow_transaction_id
         FROM json_to_recordset($1::json) AS r(id uuid, outflow_transaction_id uuid, inflow_transaction_id uuid)`,
      familyId,
      rows,
      transaction,
    );
  }

  /** Securities are shared by the instance: one already known by its key is used as it is. */
  async ensureSecurities(rows: (RestoredSecurity & { id: string })[], transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `INSERT INTO securities (id, key, ticker, name, isin, figi, cusip, currency, kind, exchange_operating_mic, exchange_mic,
                               exchange_acronym, exchange_name, country_code)
       SELECT r.id, r.key, r.ticker, r.name, r.isin, r.figi, r.cusip, r.currency, r.kind, r.exchange_operating_mic, r.exchange_mic,
              r.exchange_acronym, r.exchange_name, r.country_code
         FROM json_to_recordset($1::json) AS r(id uuid, key text, ticker text, name text, isin text, figi text, cusip text, currency text,
              kind text, exchange_operating_mic text, exchange_mic text, exchange_acronym text, exchange_name text, country_code text)
       ON CONFLICT (key) DO NOTHING RETURNING id`,
      [JSON.stringify(rows)],
      transaction,
    );
  }

  async insertTrades(familyId: string, rows: RestoredTrade[], transaction: Transaction): Promise<void> {
    await this.insert(
      `INSERT INTO trades (id, family_id, account_id, security_id, date, qty, price, fee, amount, currency, name, notes,
                           investment_activity_label, category_id)
       SELECT r.id, $2, r.account_id, s.id, r.date, r.qty, r.price, r.fee, r.amount, r.currency, r.name, r.notes,
              r.investment_activity_label, r.category_id
         FROM json_to_recordset($1::json) AS r(id uuid, account_id uuid, security_key text, date date, qty numeric, price numeric,
              fee numeric, amount numeric, currency text, name text, notes text, investment_activity_label text, category_id uuid)
         JOIN securities s ON s.key = r.security_key`,
      familyId,
      rows,
      transaction,
    );
  }

  /** The earliest trade date of each of the family's accounts with trades. */
  tradeAccounts(familyId: string, transaction: Transaction): Promise<{ accountId: string; from: string }[]> {
    return selectRows(
      this.sequelize,
      `SELECT account_id AS "accountId", min(date)::text AS "from" FROM trades WHERE family_id = $1 GROUP BY account_id ORDER BY account_id`,
      [familyId],
      transaction,
    );
  }

  private async insert(sql: string, familyId: string, rows: object[], transaction: Transaction): Promise<void> {
    if (rows.length === 0) return;
    await selectRows(this.sequelize, sql, [JSON.stringify(rows), familyId], transaction);
  }
}
