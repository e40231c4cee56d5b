import type { Sequelize, Transaction } from "sequelize";
import { bindParam, copyIn, selectRows } from "../../platform/common/sql";
import type { CreatedTransactions } from "../transactions";
import type { ImportConfig, StagedRow } from "./import.rows";

export type ImportStatus = "pending" | "importing" | "complete" | "failed";

export type ImportRow = {
  id: string;
  familyId: string;
  accountId: string | null;
  type: string;
  status: ImportStatus;
  config: ImportConfig;
  fileName: string | null;
  byteSize: number;
  rowsCount: number;
  invalidRowsCount: number;
  importedCount: number | null;
  duplicateCount: number | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  publishedAt: Date | null;
};

export type StoredImportRow = StagedRow & { accountId: string | null; transactionId: string | null };

/** What a publish wrote: the new transactions and the days of each account they fall on. */
export type PublishWrite = { created: CreatedTransactions; days: Array<{ accountId: string; date: string }>; candidates: number };

/**
 * The ids of the transactions a publish created, for the rules that follow in its transaction: a
 * temporary table of that transaction (dropped at its end), filled by the publish's INSERT.
 */
const CREATED_TRANSACTIONS = "pg_temp.import_created_transactions";

const IMPORT_COLUMNS = `id, family_id AS "familyId", account_id AS "accountId", type, status, config, file_name AS "fileName",
  byte_size::int AS "byteSize", rows_count AS "rowsCount", invalid_rows_count AS "invalidRowsCount",
  imported_count AS "importedCount", duplicate_count AS "duplicateCount", error, created_at AS "createdAt",
  updated_at AS "updatedAt", published_at AS "publishedAt"`;

/** A stored row without problems: the ones a publish writes (and, read back, the ones that have a transaction). */
const PUBLISHABLE = "r.import_id = $1 AND r.problems = '{}'";
/**
 * A row's fingerprint: account, day, stored amount, currency and name, with the row's rank among the
 * file's identical rows, so two equal coffees on one day are two transactions and the same file
 * imported again matches row for row. Category, tags, notes and merchant are not in it: a file
 * imported again with one of them added or changed is still the same rows. `rows`: a further
 * condition on the rows (`r`); one that keeps or drops whole days of an account keeps the ranks.
 */
const fingerprinted = (rows = "") => `
  SELECT r.row_number, r.account_id, r.entry_date, r.signed_amount, r.currency_code, r.notes, r.category, r.tags, r.merchant,
         coalesce(r.name, 'Imported transaction') AS name,
         'import:' || encode(sha256(convert_to(concat_ws('|', r.account_id, r.entry_date, r.signed_amount, r.currency_code,
           coalesce(r.name, 'Imported transaction'),
           row_number() OVER (PARTITION BY r.account_id, r.entry_date, r.signed_amount, r.currency_code, coalesce(r.name, 'Imported transaction')
                              ORDER BY r.row_number)), 'UTF8')), 'hex') AS fingerprint
    FROM import_rows r WHERE ${PUBLISHABLE} ${rows}`;
const FINGERPRINTED = fingerprinted();
/** Whether the transaction fingerprinted `f` is in its account already (the publish's ON CONFLICT test). */
const IMPORTED_BEFORE = `EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = f.account_id
  AND coalesce(t.source, '') = 'import' AND t.external_id = f.fingerprint)`;

/**
 * A trade row's fingerprint: account, day, security (ticker and exchange), signed quantity, price,
 * currency and name, with the row's rank among the file's identical rows, as a transaction row's.
 */
const TRADE_FINGERPRINTED = `
  SELECT r.row_number, r.account_id, r.security_id, r.entry_date, r.qty_value, r.price_value, r.signed_amount, r.currency_code,
         upper(r.ticker) AS ticker, r.exchange_operating_mic, r.name,
         'trade-import:' || encode(sha256(convert_to(concat_ws('|', r.account_id, r.entry_date, upper(r.ticker), coalesce(r.exchange_operating_mic, ''),
           r.qty_value, r.price_value, r.currency_code, coalesce(r.name, ''),
           row_number() OVER (PARTITION BY r.account_id, r.entry_date, upper(r.ticker), r.exchange_operating_mic, r.qty_value, r.price_value,
                                           r.currency_code, r.name ORDER BY r.row_number)), 'UTF8')), 'hex') AS fingerprint
    FROM import_rows r WHERE ${PUBLISHABLE}`;
/** The trade rows a publish would write now: those whose fingerprint their account does not hold yet. */
const FRESH_TRADES = `SELECT f.* FROM (${TRADE_FINGERPRINTED}) f
  WHERE NOT EXISTS (SELECT 1 FROM trades t WHERE t.account_id = f.account_id AND t.import_fingerprint = f.fingerprint)`;
/** The memory an import's transaction may sort in (PostgreSQL's work_mem, for that transaction only). */
const IMPORT_WORK_MEM = "64MB";
/** Account types that take trades (as the trade service's). */
const TRADING_ACCOUNT_TYPES = `('investment', 'crypto')`;

export class ImportRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /**
   * Lets the rest of the import's transaction sort and hold its rows in memory: fingerprinting ranks
   * the file's rows by a sort over all of them (about 10 MB for 100,000 rows), and the publish reads its
   * candidates three times; with the default 4 MB both went to temporary files.
   */
  async allowSortMemory(transaction: Transaction): Promise<void> {
    await this.sequelize.query(`SELECT set_config('work_mem', '${IMPORT_WORK_MEM}', true)`, { transaction });
  }

  async insertImport(
    values: { id: string; familyId: string; accountId: string | null; type: string; config: ImportConfig; fileName: string | null },
    transaction: Transaction,
  ): Promise<void> {
    await this.sequelize.query(`INSERT INTO imports (id, family_id, account_id, type, config, file_name) VALUES ($1, $2, $3, $4, $5, $6)`, {
      bind: [values.id, values.familyId, values.accountId, values.type, JSON.stringify(values.config), values.fileName],
      transaction,
    });
  }

  /**
   * The rows as they are read, in one COPY, in the caller's transaction. With the import's one account
   * known, rows get it (and its currency when they name none) here, so no later pass rewrites them.
   */
  async insertRows(
    importId: string,
    rows: AsyncIterable<StagedRow>,
    account: { id: string; currency: string } | null,
    transaction: Transaction,
  ): Promise<void> {
    await copyIn(
      this.sequelize,
      transaction,
      `import_rows (import_id, row_number, account, date, amount, currency, name, category, tags, notes, problems, entry_date, signed_amount,
                    currency_code, account_id, ticker, exchange_operating_mic, qty, price, entity_type, qty_value, price_value, account_type,
                    merchant)`,
      rows,
      (row) => [
        importId,
        row.rowNumber,
        row.account,
        row.date,
        row.amount,
        row.currency,
        row.name,
        row.category,
        row.tags,
        row.notes,
        row.problems,
        row.entryDate,
        row.signedAmount,
        row.currencyCode ?? account?.currency ?? null,
        account?.id ?? null,
        row.ticker,
        row.exchangeOperatingMic,
        row.qty,
        row.price,
        row.entityType,
        row.qtyValue,
        row.priceValue,
        row.accountType,
        row.merchant,
      ],
    );
  }

  /**
   * Gives each row of an import without one account the family's account of the row's name (the
   * oldest when two share a name), and that account's currency when the row names none; a row left
   * without an account gets the problem.
   */
  async resolveAccounts(importId: string, familyId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE import_rows r SET account_id = a.id, currency_code = coalesce(r.currency_code, a.currency)
         FROM (SELECT DISTINCT ON (lower(name)) id, lower(name) AS name, currency FROM accounts
                WHERE family_id = $2 ORDER BY lower(name), created_at, id) a
        WHERE r.import_id = $1 AND a.name = lower(r.account)`,
      { bind: [importId, familyId], transaction },
    );
    await this.sequelize.query(
      `UPDATE import_rows SET problems = problems || CASE WHEN account IS NULL THEN 'Account can''t be blank'
                                                       ELSE 'Account ' || to_json(account)::text || ' is not an account of the family' END
        WHERE import_id = $1 AND account_id IS NULL`,
      { bind: [importId], transaction },
    );
  }

  async countRows(importId: string, transaction: Transaction): Promise<{ rows: number; invalid: number }> {
    const [row] = await selectRows<{ rows: number; invalid: number }>(
      this.sequelize,
      `SELECT count(*)::int AS rows, (count(*) FILTER (WHERE problems <> '{}'))::int AS invalid FROM import_rows WHERE import_id = $1`,
      [importId],
      transaction,
    );
    return row;
  }

  /** The first rows with problems, in file order. */
  async rowsWithProblems(
    importId: string,
    limit: number,
    transaction: Transaction,
  ): Promise<Array<{ rowNumber: number; problems: string[] }>> {
    return selectRows(
      this.sequelize,
      `SELECT row_number AS "rowNumber", problems FROM import_rows WHERE import_id = $1 AND problems <> '{}' ORDER BY row_number LIMIT $2`,
      [importId, limit],
      transaction,
    );
  }

  async publishAccountIds(importId: string, transaction: Transaction): Promise<string[]> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `SELECT DISTINCT r.account_id AS id FROM import_rows r WHERE ${PUBLISHABLE}`,
      [importId],
      transaction,
    );
    return rows.map((row) => row.id);
  }

  /**
   * What a publish would write now, without writing: the rows without problems, and those whose
   * fingerprint the account does not hold yet (the same test as the publish's ON CONFLICT). Only the
   * rows of an account holding imported transactions can be held already, so only those are
   * fingerprinted (a first import into an account hashes nothing). Not by day: a transaction whose
   * date was changed keeps the fingerprint of its import.
   */
  async plan(importId: string, transaction: Transaction): Promise<{ candidates: number; importable: number }> {
    const [row] = await selectRows<{ candidates: number; importable: number }>(
      this.sequelize,
      `WITH candidates AS (SELECT count(*)::int AS count FROM import_rows r WHERE ${PUBLISHABLE}),
       held AS (
         SELECT count(*)::int AS count
           FROM (${fingerprinted(`AND EXISTS (SELECT 1 FROM transactions d WHERE d.account_id = r.account_id AND coalesce(d.source, '') = 'import')`)}) f
          WHERE ${IMPORTED_BEFORE})
       SELECT c.count AS candidates, c.count - h.count AS importable FROM candidates c, held h`,
      [importId],
      transaction,
    );
    return row;
  }

  /**
   * Writes the import's rows without problems as transactions, set-based: categories, tags and
   * merchants named by the rows are created when the family has none of that name (any case), each
   * with the spelling of its first row, then every row whose fingerprint the account does not hold
   * yet becomes a transaction (source `import`), tagged in the same statement. Runs in the caller's transaction, after the ledger lock of the accounts.
   */
  async publish(importId: string, familyId: string, transaction: Transaction): Promise<PublishWrite> {
    const bind = [importId, familyId];
    await this.sequelize.query(
      `INSERT INTO categories (id, family_id, name, classification, color, icon)
       SELECT gen_random_uuid(), $2, c.name, 'expense', '#737373', 'shapes'
         FROM (SELECT DISTINCT ON (lower(r.category)) r.category AS name FROM import_rows r
                WHERE ${PUBLISHABLE} AND r.category IS NOT NULL ORDER BY lower(r.category), r.row_number) c
       ON CONFLICT (family_id, lower(name)) DO NOTHING`,
      { bind, transaction },
    );
    await this.sequelize.query(
      `INSERT INTO tags (id, family_id, name, color)
       SELECT gen_random_uuid(), $2, t.name, '#737373'
         FROM (SELECT DISTINCT ON (lower(trim(tag))) trim(tag) AS name
                 FROM import_rows r CROSS JOIN LATERAL regexp_split_to_table(r.tags, '\\|') AS tag
                WHERE ${PUBLISHABLE} AND trim(tag) <> '' ORDER BY lower(trim(tag)), r.row_number) t
       ON CONFLICT (family_id, lower(name)) DO NOTHING`,
      { bind, transaction },
    );
    // As a bank sync creates merchants (BankImportRepository.merchantIds): a name, no colour or logo.
    await this.sequelize.query(
      `INSERT INTO merchants (id, family_id, name)
       SELECT gen_random_uuid(), $2, m.name
         FROM (SELECT DISTINCT ON (lower(r.merchant)) r.merchant AS name FROM import_rows r
                WHERE ${PUBLISHABLE} AND r.merchant IS NOT NULL ORDER BY lower(r.merchant), r.row_number) m
       ON CONFLICT (family_id, lower(name)) DO NOTHING`,
      { bind, transaction },
    );
    await this.sequelize.query(`CREATE TEMPORARY TABLE ${CREATED_TRANSACTIONS} (id uuid NOT NULL) ON COMMIT DROP`, { transaction });
    const [written] = await selectRows<{
      candidates: number;
      created: number;
      days: Array<{ accountId: string; date: string }> | null;
    }>(
      this.sequelize,
      `WITH candidates AS (${FINGERPRINTED}),
       -- The family's categories as one map, read once: import_rows has no statistics, so a join took the
       -- candidates for one row and looked the categories up once per row (a nested loop, 100,000 index scans).
       category_ids AS MATERIALIZED (
         SELECT coalesce(jsonb_object_agg(lower(name), id), '{}') AS ids FROM categories WHERE family_id = $2),
       -- The family's merchants the same way (a few thousand for a bank-fed family: a map of them is still small).
       merchant_ids AS MATERIALIZED (
         SELECT coalesce(jsonb_object_agg(lower(name), id), '{}') AS ids FROM merchants WHERE family_id = $2),
       inserted AS (
         INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, category_id, merchant_id, external_id, source)
         SELECT gen_random_uuid(), $2, c.account_id, c.entry_date, c.signed_amount, c.currency_code, c.name, c.notes,
                ((SELECT ids FROM category_ids) ->> lower(c.category))::uuid, ((SELECT ids FROM merchant_ids) ->> lower(c.merchant))::uuid,
                c.fingerprint, 'import'
           FROM candidates c
         ON CONFLICT (account_id, coalesce(source, ''), external_id) WHERE external_id IS NOT NULL DO NOTHING
         RETURNING id, account_id, date, external_id),
       created AS (INSERT INTO ${CREATED_TRANSACTIONS} (id) SELECT id FROM inserted RETURNING 1),
       -- The rows' tag names first, once each (MATERIALIZED), joined to the inserted rows after, so a file
       -- without tags joins nothing. import_rows has no statistics yet: the planner takes each CTE for one
       -- row and joined every inserted row to every candidate, splitting its tags each time.
       tag_names AS MATERIALIZED (
         SELECT c.account_id, c.fingerprint, lower(trim(tag)) AS name
           FROM candidates c CROSS JOIN LATERAL regexp_split_to_table(c.tags, '\\|') AS tag
          WHERE c.tags IS NOT NULL AND trim(tag) <> ''),
       tagged AS (
         INSERT INTO transaction_tags (transaction_id, tag_id)
         SELECT DISTINCT i.id, tg.id
           FROM tag_names n JOIN inserted i ON i.account_id = n.account_id AND i.external_id = n.fingerprint
           JOIN tags tg ON tg.family_id = $2 AND lower(tg.name) = n.name
         RETURNING 1)
       SELECT (SELECT count(*)::int FROM candidates) AS candidates, (SELECT count(*) FROM tagged) AS tagged,
              (SELECT count(*)::int FROM created) AS created,
              (SELECT json_agg(json_build_object('accountId', account_id, 'date', date)) FROM (SELECT DISTINCT account_id, date FROM inserted) d) AS days`,
      bind,
      transaction,
    );
    return {
      created: { count: written.created, relation: CREATED_TRANSACTIONS },
      days: written.days ?? [],
      candidates: written.candidates,
    };
  }

  // ---- trade imports -------------------------------------------------------------------------------------

  /**
   * Trade rows go to investment or crypto accounts, in the account's currency (as POST /trades
   * takes them): a row whose account is another, or whose currency is another, gets the problem.
   */
  async checkTradeAccounts(importId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE import_rows r
          SET problems = r.problems || CASE WHEN a.account_type NOT IN ${TRADING_ACCOUNT_TYPES}
                THEN 'Account ' || to_json(a.name)::text || ' is not an investment or crypto account; trades go to those'
                ELSE 'Currency ' || r.currency_code || ' is not the account''s (' || a.currency || ')' END
         FROM accounts a
        WHERE r.import_id = $1 AND a.id = r.account_id AND (a.account_type NOT IN ${TRADING_ACCOUNT_TYPES} OR r.currency_code <> a.currency)`,
      { bind: [importId], transaction },
    );
  }

  /** Gives each trade row the security its ticker and exchange name (the oldest of that ticker, as the trade service finds it). */
  async resolveSecurities(importId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE import_rows r SET security_id = m.id
         FROM (SELECT DISTINCT ON (k.ticker, k.mic) k.ticker, k.mic, s.id
                 FROM (SELECT DISTINCT lower(ticker) AS ticker, exchange_operating_mic AS mic FROM import_rows
                        WHERE import_id = $1 AND ticker IS NOT NULL) k
                 JOIN securities s ON lower(s.ticker) = k.ticker AND s.exchange_operating_mic IS NOT DISTINCT FROM k.mic
                ORDER BY k.ticker, k.mic, s.created_at, s.id) m
        WHERE r.import_id = $1 AND lower(r.ticker) = m.ticker AND r.exchange_operating_mic IS NOT DISTINCT FROM m.mic`,
      { bind: [importId], transaction },
    );
  }

  /** The tickers (with exchange and currency) of rows to publish that no security has yet. */
  async unknownSecurities(
    importId: string,
    transaction: Transaction,
  ): Promise<Array<{ ticker: string; mic: string | null; currency: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT DISTINCT ON (lower(r.ticker), r.exchange_operating_mic) r.ticker, r.exchange_operating_mic AS mic, r.currency_code AS currency
         FROM import_rows r WHERE ${PUBLISHABLE} AND r.security_id IS NULL ORDER BY lower(r.ticker), r.exchange_operating_mic, r.row_number`,
      [importId],
      transaction,
    );
  }

  /**
   * A sell beyond what is held is a problem of its row. Each account's security is followed through
   * its trades and the rows not imported yet, day by day, buys of a day before its sells (the holdings
   * calculator's order); a sell row after which the quantity is below zero gets the problem. Publishing
   * recomputes the holdings with the same rule, so a file without such rows publishes.
   */
  async markOversells(importId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `WITH fresh AS (${FRESH_TRADES}),
       moves AS (
         SELECT t.account_id, t.security_id::text AS security, t.date, t.qty, 0 AS source, t.created_at, NULL::int AS row_number
           FROM trades t
          WHERE t.account_id IN (SELECT account_id FROM fresh) AND t.security_id IN (SELECT security_id FROM fresh WHERE security_id IS NOT NULL)
         UNION ALL
         SELECT f.account_id, coalesce(f.security_id::text, 'new:' || f.ticker || '|' || coalesce(f.exchange_operating_mic, '')),
                f.entry_date, f.qty_value, 1, NULL, f.row_number
           FROM fresh f),
       running AS (
         SELECT m.*, sum(m.qty) OVER (PARTITION BY m.account_id, m.security
                                      ORDER BY m.date, (m.qty < 0), m.source, m.created_at, m.row_number ROWS UNBOUNDED PRECEDING) AS held
           FROM moves m)
       UPDATE import_rows r
          SET problems = r.problems || ('Qty: selling ' || trim_scale(-x.qty)::text || ' ' || upper(r.ticker) || ' on ' || x.date::text
                                        || ' is more than the ' || trim_scale(greatest(x.held - x.qty, 0))::text || ' held')
         FROM running x
        WHERE r.import_id = $1 AND x.source = 1 AND x.row_number = r.row_number AND x.qty < 0 AND x.held < 0`,
      { bind: [importId], transaction },
    );
  }

  /** What a trade import's publish would write now: its rows without problems, and those not imported before. */
  async planTrades(importId: string, transaction: Transaction): Promise<{ candidates: number; importable: number }> {
    const [row] = await selectRows<{ candidates: number; importable: number }>(
      this.sequelize,
      `SELECT (SELECT count(*)::int FROM (${TRADE_FINGERPRINTED}) c) AS candidates, (SELECT count(*)::int FROM (${FRESH_TRADES}) f) AS importable`,
      [importId],
      transaction,
    );
    return row;
  }

  /**
   * Writes the trade rows not imported before, set-based, each keyed by its fingerprint (a second
   * writer of the same rows writes nothing). Named as the trade service names trades unless the row
   * names it. Returns the accounts written and each one's first day, for the holdings to follow.
   */
  async publishTrades(
    importId: string,
    familyId: string,
    transaction: Transaction,
  ): Promise<{ inserted: number; candidates: number; accounts: Array<{ accountId: string; from: string }> }> {
    const [written] = await selectRows<{
      inserted: number;
      candidates: number;
      accounts: Array<{ accountId: string; from: string }> | null;
    }>(
      this.sequelize,
      `WITH candidates AS (${TRADE_FINGERPRINTED}),
       inserted AS (
         INSERT INTO trades (id, family_id, account_id, security_id, date, qty, price, fee, amount, currency, name, investment_activity_label, import_fingerprint)
         SELECT gen_random_uuid(), $2, c.account_id, c.security_id, c.entry_date, c.qty_value, c.price_value, 0, c.signed_amount, c.currency_code,
                coalesce(c.name, CASE WHEN c.qty_value < 0 THEN 'Sell ' ELSE 'Buy ' END
                  || CASE WHEN trim_scale(abs(c.qty_value))::text LIKE '%.%' THEN trim_scale(abs(c.qty_value))::text ELSE trim_scale(abs(c.qty_value))::text || '.0' END
                  || ' shares of ' || c.ticker),
                CASE WHEN c.qty_value < 0 THEN 'Sell' ELSE 'Buy' END, c.fingerprint
           FROM candidates c
         ON CONFLICT (account_id, import_fingerprint) WHERE import_fingerprint IS NOT NULL DO NOTHING
         RETURNING account_id, date)
       SELECT (SELECT count(*)::int FROM inserted) AS inserted, (SELECT count(*)::int FROM candidates) AS candidates,
              (SELECT json_agg(json_build_object('accountId', account_id, 'from', first)) FROM
                (SELECT account_id, min(date)::text AS first FROM inserted GROUP BY account_id) d) AS accounts`,
      [importId, familyId],
      transaction,
    );
    return { inserted: written.inserted, candidates: written.candidates, accounts: written.accounts ?? [] };
  }

  // ---- account imports -----------------------------------------------------------------------------------

  /** An account import names each account once: a name (any case) on an earlier row is a problem of the later one. */
  async markRepeatedNames(importId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE import_rows r SET problems = r.problems || ('Name ' || to_json(r.name)::text || ' is on an earlier row (row ' || e.first || ')')
         FROM (SELECT lower(name) AS name, min(row_number) AS first FROM import_rows WHERE import_id = $1 AND name IS NOT NULL GROUP BY lower(name)) e
        WHERE r.import_id = $1 AND lower(r.name) = e.name AND r.row_number > e.first`,
      { bind: [importId], transaction },
    );
  }

  /** An account import's rows without problems, in file order, each with whether the family has an account of that name already. */
  async accountRows(
    importId: string,
    familyId: string,
    transaction: Transaction,
  ): Promise<
    Array<{
      rowNumber: number;
      name: string;
      accountType: string;
      balance: string;
      currency: string | null;
      date: string | null;
      exists: boolean;
    }>
  > {
    return selectRows(
      this.sequelize,
      `SELECT r.row_number AS "rowNumber", r.name, r.account_type AS "accountType", trim_scale(r.signed_amount)::text AS balance,
              r.currency_code AS currency, r.entry_date::text AS date,
              EXISTS (SELECT 1 FROM accounts a WHERE a.family_id = $2 AND lower(a.name) = lower(r.name)) AS exists
         FROM import_rows r WHERE ${PUBLISHABLE} ORDER BY r.row_number`,
      [importId, familyId],
      transaction,
    );
  }

  /** Serialises account imports of one family, so two imports of one file create each account once. */
  async lockFamilyAccountImports(familyId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`SELECT pg_advisory_xact_lock(hashtext('account-import:' || $1))`, { bind: [familyId], transaction });
  }

  async finish(
    importId: string,
    values: {
      status: ImportStatus;
      rowsCount?: number;
      invalidRowsCount?: number;
      byteSize?: number;
      config?: ImportConfig;
      importedCount?: number;
      duplicateCount?: number;
    },
    transaction: Transaction,
  ): Promise<void> {
    const bind: unknown[] = [importId];
    const sets = [`status = ${bindParam(bind, values.status)}`, "updated_at = now()"];
    if (values.rowsCount !== undefined) sets.push(`rows_count = ${bindParam(bind, values.rowsCount)}`);
    if (values.invalidRowsCount !== undefined) sets.push(`invalid_rows_count = ${bindParam(bind, values.invalidRowsCount)}`);
    if (values.byteSize !== undefined) sets.push(`byte_size = ${bindParam(bind, values.byteSize)}`);
    if (values.config !== undefined) sets.push(`config = ${bindParam(bind, JSON.stringify(values.config))}`);
    if (values.importedCount !== undefined) {
      sets.push(`imported_count = ${bindParam(bind, values.importedCount)}`, "published_at = now()");
      sets.push(`duplicate_count = ${bindParam(bind, values.duplicateCount ?? 0)}`);
    }
    await this.sequelize.query(`UPDATE imports SET ${sets.join(", ")} WHERE id = $1`, { bind, transaction });
  }

  async byId(familyId: string, id: string, transaction?: Transaction, lock = false): Promise<ImportRow | null> {
    const [row] = await selectRows<ImportRow>(
      this.sequelize,
      `SELECT ${IMPORT_COLUMNS} FROM imports WHERE family_id = $1 AND id = $2 ${lock ? "FOR UPDATE" : ""}`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  async page(
    familyId: string,
    filter: { status: string | null; type: string | null },
    limit: number,
    offset: number,
  ): Promise<{ rows: ImportRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = ["family_id = $1"];
    if (filter.status) conditions.push(`status = ${bindParam(bind, filter.status)}`);
    if (filter.type) conditions.push(`type = ${bindParam(bind, filter.type)}`);
    const where = conditions.join(" AND ");
    const paged = [...bind];
    const [rows, [count]] = await Promise.all([
      selectRows<ImportRow>(
        this.sequelize,
        `SELECT ${IMPORT_COLUMNS} FROM imports WHERE ${where} ORDER BY created_at DESC, id DESC
          LIMIT ${bindParam(paged, limit)} OFFSET ${bindParam(paged, offset)}`,
        paged,
      ),
      selectRows<{ total: number }>(this.sequelize, `SELECT count(*)::int AS total FROM imports WHERE ${where}`, bind),
    ]);
    return { rows, total: count.total };
  }

  async rows(importId: string, limit: number, offset: number): Promise<{ rows: StoredImportRow[]; total: number }> {
    const [rows, [count]] = await Promise.all([
      selectRows<StoredImportRow>(
        this.sequelize,
        `WITH fingerprinted AS (${FINGERPRINTED})
         SELECT r.row_number AS "rowNumber", r.account, r.date, r.amount, r.currency, r.name, r.category, r.tags, r.notes, r.merchant, r.problems,
                r.entry_date::text AS "entryDate", trim_scale(r.signed_amount)::text AS "signedAmount", r.currency_code AS "currencyCode",
                r.account_id AS "accountId", t.id AS "transactionId", r.ticker, r.exchange_operating_mic AS "exchangeOperatingMic",
                r.qty, r.price, r.entity_type AS "entityType", r.account_type AS "accountType"
           FROM import_rows r
           LEFT JOIN fingerprinted f ON f.row_number = r.row_number
           LEFT JOIN transactions t ON t.account_id = f.account_id AND coalesce(t.source, '') = 'import' AND t.external_id = f.fingerprint
          WHERE r.import_id = $1 ORDER BY r.row_number LIMIT $2 OFFSET $3`,
        [importId, limit, offset],
      ),
      selectRows<{ total: number }>(this.sequelize, `SELECT count(*)::int AS total FROM import_rows WHERE import_id = $1`, [importId]),
    ]);
    return { rows, total: count.total };
  }
}
