import type { Sequelize, Transaction } from "sequelize";
import { copyOut, selectRows } from "../../platform/common/sql";

export type FamilyExportStatus = "pending" | "processing" | "completed" | "failed";

export type FamilyExportRecord = {
  id: string;
  familyId: string;
  status: FamilyExportStatus;
  requestedBy: string;
  requestedByEmail: string;
  requestedSession: string | null;
  fileName: string | null;
  fileBytes: number | null;
  manifest: Record<string, unknown> | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
};

const COLUMNS = `id, family_id AS "familyId", status, requested_by AS "requestedBy", requested_by_email AS "requestedByEmail",
  requested_session AS "requestedSession", file_name AS "fileName", file_bytes::float8 AS "fileBytes", manifest, error,
  created_at AS "createdAt", updated_at AS "updatedAt", completed_at AS "completedAt"`;

/** An ISO 8601 UTC time, as upstream's exporter writes created_at. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** Upstream's accountable type (the class name) of each of our account types. */
const ACCOUNTABLE_TYPE = `CASE a.account_type WHEN 'depository' THEN 'Depository' WHEN 'investment' THEN 'Investment'
  WHEN 'crypto' THEN 'Crypto' WHEN 'property' THEN 'Property' WHEN 'vehicle' THEN 'Vehicle' WHEN 'other_asset' THEN 'OtherAsset'
  WHEN 'credit_card' THEN 'CreditCard' WHEN 'loan' THEN 'Loan' ELSE 'OtherLiability' END`;

/**
 * Each tagged transaction's tags, aggregated once for the whole family and joined by hash: a subquery per
 * transaction cost three times the rest of the file. `names` (sorted, comma-separated, as upstream's
 * transactions.csv) and `ids` (a JSON array, as all.ndjson's tag_ids).
 */
const FAMILY_TAGS = `LEFT JOIN (SELECT tt.transaction_id, string_agg(g.name, ',' ORDER BY g.name) AS names,
      json_agg(tt.tag_id ORDER BY tt.tag_id) AS ids
    FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id WHERE g.family_id = $1 GROUP BY tt.transaction_id) tg
  ON tg.transaction_id = t.id`;

/** A value as JSON text, null as null (the transactions line is concatenated: json_build_object's per-row type lookups cost more than COPY itself). */
const jsonOf = (value: string) => `coalesce(to_json(${value})::text, 'null')`;

/**
 * A rule condition's or action's value as upstream exports it: a category, merchant or tag id becomes
 * its name, so the rule reads the same in another family.
 */
const portableValue = (kind: string, value: string) => `CASE
    WHEN ${kind} IN ('transaction_category', 'set_transaction_category')
      THEN coalesce((SELECT c.name FROM categories c WHERE c.family_id = r.family_id AND c.id::text = ${value}), ${value})
    WHEN ${kind} IN ('transaction_merchant', 'set_transaction_merchant')
      THEN coalesce((SELECT m.name FROM merchants m WHERE m.family_id = r.family_id AND m.id::text = ${value}), ${value})
    WHEN ${kind} = 'set_transaction_tags'
      THEN coalesce((SELECT g.name FROM tags g WHERE g.family_id = r.family_id AND g.id::text = ${value}), ${value})
    ELSE ${value} END`;

const RULE_CONDITIONS = `coalesce((SELECT json_agg(json_strip_nulls(json_build_object(
    'condition_type', rc.condition_type, 'operator', rc.operator, 'value', ${portableValue("rc.condition_type", "rc.value")},
    'sub_conditions', (SELECT json_agg(json_build_object('condition_type', sc.condition_type, 'operator', sc.operator,
        'value', ${portableValue("sc.condition_type", "sc.value")}) ORDER BY sc.position, sc.id)
      FROM rule_conditions sc WHERE sc.parent_id = rc.id))) ORDER BY rc.position, rc.id)
  FROM rule_conditions rc WHERE rc.rule_id = r.id AND rc.parent_id IS NULL), '[]')`;

const RULE_ACTIONS = `coalesce((SELECT json_agg(json_build_object('action_type', ra.action_type,
    'value', ${portableValue("ra.action_type", "ra.value")}) ORDER BY ra.position, ra.id)
  FROM rule_actions ra WHERE ra.rule_id = r.id), '[]')`;

/**
 * The CSV files of an export, upstream's columns in upstream's order (Family::DataExporter), each one
 * COPY … (FORMAT csv) of the family's rows: PostgreSQL writes every byte, Node only zips and hashes.
 */
export const CSV_FILES = {
  "accounts.csv": {
    header: ["id", "name", "type", "subtype", "balance", "currency", "created_at"],
    select: `SELECT a.id, a.name, ${ACCOUNTABLE_TYPE}, NULL, a.balance, a.currency, ${iso("a.created_at")}
      FROM accounts a WHERE a.family_id = $1 ORDER BY a.created_at, a.id`,
  },
  "transactions.csv": {
    header: ["date", "account_name", "amount", "name", "category", "tags", "notes", "currency"],
    // In no particular order (as upstream's find_each): sorting the family's transactions spilled to disk and cost a third of the file.
    select: `SELECT t.date, a.name, t.amount, t.name, c.name, tg.names, t.notes, t.currency
      FROM transactions t JOIN accounts a ON a.id = t.account_id LEFT JOIN categories c ON c.id = t.category_id ${FAMILY_TAGS}
      WHERE t.family_id = $1`,
  },
  "trades.csv": {
    header: ["date", "account_name", "ticker", "quantity", "price", "amount", "currency"],
    select: `SELECT tr.date, a.name, s.ticker, tr.qty, tr.price, tr.amount, tr.currency
      FROM trades tr JOIN accounts a ON a.id = tr.account_id JOIN securities s ON s.id = tr.security_id
      WHERE tr.family_id = $1 ORDER BY tr.date, tr.id`,
  },
  "categories.csv": {
    header: ["name", "color", "parent_category", "lucide_icon"],
    select: `SELECT c.name, c.color, p.name, c.icon FROM categories c LEFT JOIN categories p ON p.id = c.parent_id
      WHERE c.family_id = $1 ORDER BY c.name, c.id`,
  },
  // Upstream's merchants.csv (MerchantImport's columns); a merchant here has no website, so that column is empty.
  "merchants.csv": {
    header: ["name", "color", "website_url"],
    select: `SELECT m.name, m.color, NULL FROM merchants m WHERE m.family_id = $1 ORDER BY m.name, m.id`,
  },
  "rules.csv": {
    header: ["name", "resource_type", "active", "effective_date", "conditions", "actions"],
    select: `SELECT r.name, r.resource_type, r.active, r.effective_date, ${RULE_CONDITIONS}, ${RULE_ACTIONS}
      FROM rules r WHERE r.family_id = $1 ORDER BY r.created_at, r.id`,
  },
} as const;

export type CsvFileName = keyof typeof CSV_FILES;

/**
 * The lines of all.ndjson, one statement per record type, in the order a restore needs them (what a
 * line refers to comes before it). Each line is `{"type": …, "data": {…}}` as upstream writes it; the
 * data carries upstream's field names and every column of ours a restore needs to reproduce the row;
 * amounts are strings (as upstream's JSON writes decimals), so no digit is lost to a float.
 */
export const NDJSON_SELECTS: ReadonlyArray<{ type: string; select: string }> = [
  {
    type: "Account",
    select: `SELECT json_build_object('type', 'Account', 'data', json_build_object('id', a.id, 'name', a.name,
        'accountable_type', ${ACCOUNTABLE_TYPE}, 'account_type', a.account_type, 'classification', a.classification,
        'currency', a.currency, 'balance', a.balance::text, 'cash_balance', a.cash_balance::text, 'created_at', a.created_at))::text
      FROM accounts a WHERE a.family_id = $1 ORDER BY a.created_at, a.id`,
  },
  {
    type: "Category",
    select: `SELECT json_build_object('type', 'Category', 'data', json_build_object('id', c.id, 'name', c.name,
        'parent_id', c.parent_id, 'classification', c.classification, 'color', c.color, 'lucide_icon', c.icon,
        'created_at', c.created_at))::text
      FROM categories c WHERE c.family_id = $1 ORDER BY c.parent_id NULLS FIRST, c.name, c.id`,
  },
  {
    type: "Tag",
    select: `SELECT json_build_object('type', 'Tag', 'data', json_build_object('id', g.id, 'name', g.name, 'color', g.color,
        'created_at', g.created_at))::text
      FROM tags g WHERE g.family_id = $1 ORDER BY g.name, g.id`,
  },
  {
    type: "Merchant",
    select: `SELECT json_build_object('type', 'Merchant', 'data', json_build_object('id', m.id, 'name', m.name, 'color', m.color,
        'logo_url', m.logo_url, 'created_at', m.created_at))::text
      FROM merchants m WHERE m.family_id = $1 ORDER BY m.name, m.id`,
  },
  {
    type: "Valuation",
    select: `SELECT json_build_object('type', 'Valuation', 'data', json_build_object('id', v.id, 'account_id', v.account_id,
        'date', v.date, 'amount', v.amount::text, 'currency', v.currency, 'name', v.name, 'notes', v.notes, 'kind', v.kind,
        'created_at', v.created_at))::text
      FROM valuations v WHERE v.family_id = $1 ORDER BY v.account_id, v.date`,
  },
  {
    type: "Transaction",
    select: `SELECT '{"type":"Transaction","data":{"id":"' || t.id || '","account_id":"' || t.account_id || '","date":"' || t.date
        || '","amount":"' || t.amount || '","currency":' || to_json(t.currency) || ',"name":' || to_json(t.name)
        || ',"notes":' || ${jsonOf("t.notes")} || ',"pending":' || t.pending
        || ',"category_id":' || ${jsonOf("t.category_id")} || ',"merchant_id":' || ${jsonOf("t.merchant_id")}
        || ',"tag_ids":' || coalesce(tg.ids::text, '[]') || ',"external_id":' || ${jsonOf("t.external_id")}
        || ',"source":' || ${jsonOf("t.source")} || ',"provider_name":' || ${jsonOf("t.provider_name")}
        || ',"created_at":' || to_json(t.created_at) || '}}'
      FROM transactions t ${FAMILY_TAGS} WHERE t.family_id = $1`,
  },
  {
    type: "Transfer",
    select: `SELECT json_build_object('type', 'Transfer', 'data', json_build_object('id', x.id,
        'outflow_transaction_id', x.outflow_transaction_id, 'inflow_transaction_id', x.inflow_transaction_id))::text
      FROM transfers x WHERE x.family_id = $1 ORDER BY x.created_at, x.id`,
  },
  {
    type: "Trade",
    select: `SELECT json_build_object('type', 'Trade', 'data', json_build_object('id', tr.id, 'account_id', tr.account_id,
        'security_id', tr.security_id, 'ticker', s.ticker, 'security_name', s.name, 'exchange_operating_mic', s.exchange_operating_mic,
        'security', json_build_object('key', s.key, 'ticker', s.ticker, 'name', s.name, 'isin', s.isin, 'figi', s.figi,
          'cusip', s.cusip, 'currency', s.currency, 'kind', s.kind, 'exchange_operating_mic', s.exchange_operating_mic,
          'exchange_mic', s.exchange_mic, 'exchange_acronym', s.exchange_acronym, 'exchange_name', s.exchange_name,
          'country_code', s.country_code),
        'date', tr.date, 'qty', tr.qty::text, 'price', tr.price::text, 'fee', tr.fee::text, 'amount', tr.amount::text, 'currency', tr.currency,
        'name', tr.name, 'notes', tr.notes, 'investment_activity_label', tr.investment_activity_label,
        'category_id', tr.category_id, 'created_at', tr.created_at))::text
      FROM trades tr JOIN securities s ON s.id = tr.security_id WHERE tr.family_id = $1 ORDER BY tr.date, tr.id`,
  },
  {
    type: "Rule",
    select: `SELECT json_build_object('type', 'Rule', 'version', 1, 'data', json_build_object('name', r.name,
        'resource_type', r.resource_type, 'active', r.active, 'effective_date', r.effective_date,
        'conditions', ${RULE_CONDITIONS}, 'actions', ${RULE_ACTIONS}))::text
      FROM rules r WHERE r.family_id = $1 ORDER BY r.created_at, r.id`,
  },
];

/** The family_exports table, and the reads an export is written from. */
export class FamilyExportRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async insert(
    record: Pick<FamilyExportRecord, "id" | "familyId" | "requestedBy" | "requestedByEmail" | "requestedSession">,
    transaction: Transaction,
  ): Promise<FamilyExportRecord> {
    const [row] = await selectRows<FamilyExportRecord>(
      this.sequelize,
      `INSERT INTO family_exports (id, family_id, status, requested_by, requested_by_email, requested_session)
       VALUES ($1, $2, 'pending', $3, $4, $5) RETURNING ${COLUMNS}`,
      [record.id, record.familyId, record.requestedBy, record.requestedByEmail, record.requestedSession],
      transaction,
    );
    return row;
  }

  /** One of the family's exports (another family's is as unknown as a missing one). */
  async find(familyId: string, id: string, transaction?: Transaction): Promise<FamilyExportRecord | null> {
    const [row] = await selectRows<FamilyExportRecord>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM family_exports WHERE id = $1 AND family_id = $2`,
      [id, familyId],
      transaction,
    );
    return row ?? null;
  }

  /** The worker's read: the request whatever its family. */
  async byId(id: string): Promise<FamilyExportRecord | null> {
    const [row] = await selectRows<FamilyExportRecord>(this.sequelize, `SELECT ${COLUMNS} FROM family_exports WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** A page of the family's exports, newest first, and how many there are. */
  async page(familyId: string, limit: number, offset: number): Promise<{ rows: FamilyExportRecord[]; total: number }> {
    const rows = await selectRows<FamilyExportRecord & { total: number }>(
      this.sequelize,
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM family_exports WHERE family_id = $1
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [familyId, limit, offset],
    );
    const total =
      rows[0]?.total ??
      (
        await selectRows<{ total: number }>(this.sequelize, `SELECT count(*)::int AS total FROM family_exports WHERE family_id = $1`, [
          familyId,
        ])
      )[0].total;
    return { rows: rows.map(({ total: _total, ...row }) => row), total };
  }

  /** Which of these ids are exports still (of any family): the files of the others are nobody's. */
  async existing(ids: readonly string[]): Promise<Set<string>> {
    const rows = await selectRows<{ id: string }>(this.sequelize, `SELECT id FROM family_exports WHERE id = ANY($1::uuid[])`, [ids]);
    return new Set(rows.map((row) => row.id));
  }

  /** How many of the family's exports are waiting or being written. */
  async countActive(familyId: string, transaction: Transaction): Promise<number> {
    const [row] = await selectRows<{ count: number }>(
      this.sequelize,
      `SELECT count(*)::int AS count FROM family_exports WHERE family_id = $1 AND status IN ('pending', 'processing')`,
      [familyId],
      transaction,
    );
    return row.count;
  }

  /** A transaction-scoped advisory lock per family, so two requests at once cannot both pass the limit. */
  async lockFamily(familyId: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `SELECT pg_advisory_xact_lock(hashtextextended('family_exports:' || $1, 0))`, [familyId], transaction);
  }

  /**
   * Requests pending since before `before`, or processing since before it, oldest first, at most `limit`:
   * their job may never have reached the queue, or may have failed after its worker died twice.
   */
  unfinishedBefore(before: Date, limit: number): Promise<{ id: string }[]> {
    return selectRows<{ id: string }>(
      this.sequelize,
      `SELECT id FROM family_exports
        WHERE (status = 'pending' AND created_at < $1) OR (status = 'processing' AND started_at < $1)
        ORDER BY created_at, id LIMIT $2`,
      [before, limit],
    );
  }

  /** Claims a pending (or a crashed worker's processing) request; false when it is already finished. */
  async start(id: string): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `UPDATE family_exports SET status = 'processing', started_at = now(), updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'processing') RETURNING id`,
      [id],
    );
    return rows.length === 1;
  }

  async complete(
    id: string,
    result: { fileName: string; fileBytes: number; manifest: object },
    transaction: Transaction,
  ): Promise<FamilyExportRecord> {
    const [row] = await selectRows<FamilyExportRecord>(
      this.sequelize,
      `UPDATE family_exports SET status = 'completed', file_name = $2, file_bytes = $3, manifest = $4, completed_at = now(), updated_at = now()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, result.fileName, result.fileBytes, JSON.stringify(result.manifest)],
      transaction,
    );
    return row;
  }

  async fail(id: string, error: string, transaction: Transaction): Promise<FamilyExportRecord> {
    const [row] = await selectRows<FamilyExportRecord>(
      this.sequelize,
      `UPDATE family_exports SET status = 'failed', error = $2, completed_at = now(), updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, error],
      transaction,
    );
    return row;
  }

  /** One CSV file's records (no header), as COPY writes them, within the export's snapshot. */
  csvFile(name: CsvFileName, familyId: string, transaction: Transaction): AsyncGenerator<Buffer> {
    return copyOut(this.sequelize, CSV_FILES[name].select, [familyId], "csv", transaction);
  }

  /** One record type's lines of all.ndjson, as binary COPY of one text column (copy-binary.ts), within the export's snapshot. */
  ndjsonLines(select: string, familyId: string, transaction: Transaction): AsyncGenerator<Buffer> {
    return copyOut(this.sequelize, select, [familyId], "binary", transaction);
  }
}
