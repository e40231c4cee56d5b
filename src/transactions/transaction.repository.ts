import type { Sequelize, Transaction } from "sequelize";
import { likePattern, selectRows } from "../common/sql";
import type { TagRow } from "../tags/tag.repository";

export type TransactionRow = {
  id: string;
  accountId: string;
  date: string;
  amount: string;
  currency: string;
  name: string;
  notes: string | null;
  categoryId: string | null;
  merchantId: string | null;
  pending: boolean;
  externalId: string | null;
  source: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Set when this transaction is one leg of a transfer. */
  transferId: string | null;
  transferOtherAccountId: string | null;
};

export type TransactionFilter = {
  accountId?: string;
  categoryId?: string;
  merchantId?: string;
  tagIds?: string[];
  startDate?: string;
  endDate?: string;
  minAmount?: string;
  maxAmount?: string;
  type?: "income" | "expense";
  search?: string;
};

const COLUMNS = `
  t.id, t.account_id AS "accountId", t.date, t.amount, t.currency, t.name, t.notes,
  t.category_id AS "categoryId", t.merchant_id AS "merchantId", t.pending,
  t.external_id AS "externalId", t.source, t.created_at AS "createdAt", t.updated_at AS "updatedAt",
  coalesce(tout.id, tin.id) AS "transferId", other.account_id AS "transferOtherAccountId"`;

// A transaction is at most one leg of one transfer, so the two left joins never multiply rows.
const TRANSFER_JOINS = `
    LEFT JOIN transfers tout ON tout.outflow_transaction_id = t.id
    LEFT JOIN transfers tin ON tin.inflow_transaction_id = t.id
    LEFT JOIN transactions other ON other.id = coalesce(tout.inflow_transaction_id, tin.outflow_transaction_id)`;

const SELECT_FROM = `SELECT ${COLUMNS} FROM transactions t ${TRANSFER_JOINS}`;

const NEWEST_FIRST = "ORDER BY t.date DESC, t.created_at DESC, t.id DESC";

export class TransactionRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async byId(familyId: string, id: string, transaction?: Transaction): Promise<TransactionRow | null> {
    const [row] = await selectRows<TransactionRow>(
      this.sequelize,
      `${SELECT_FROM} WHERE t.family_id = $1 AND t.id = $2`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  async byExternalId(accountId: string, source: string | null, externalId: string): Promise<TransactionRow | null> {
    const [row] = await selectRows<TransactionRow>(
      this.sequelize,
      `${SELECT_FROM} WHERE t.account_id = $1 AND coalesce(t.source, '') = coalesce($2, '') AND t.external_id = $3`,
      [accountId, source, externalId],
    );
    return row ?? null;
  }

  /** Newest first, with the filtered total counted in the same statement. */
  async page(
    familyId: string,
    filter: TransactionFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: TransactionRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const where = ["t.family_id = $1", ...filterConditions(filter, bind)].join(" AND ");
    // The page is cut first and only its rows are joined to transfers: the window count needs every
    // matching row, the joins only the page's (joining first cost a transfer lookup per matching row).
    const rows = await selectRows<TransactionRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, t.total
         FROM (SELECT t.*, count(*) OVER () AS total FROM transactions t WHERE ${where} ${NEWEST_FIRST} LIMIT ${limit} OFFSET ${offset}) t
         ${TRANSFER_JOINS}
        ${NEWEST_FIRST}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM transactions t WHERE ${where}`,
      bind,
    );
    return { rows, total: Number(count.total) };
  }

  /** Tags of many transactions in one statement, grouped per transaction id in key order. */
  async tagsOf(familyId: string, transactionIds: readonly string[]): Promise<TagRow[][]> {
    const rows = await selectRows<TagRow & { transactionId: string }>(
      this.sequelize,
      `SELECT tt.transaction_id AS "transactionId", g.id, g.name, g.color, g.created_at AS "createdAt", g.updated_at AS "updatedAt"
         FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
        WHERE g.family_id = $1 AND tt.transaction_id = ANY($2::uuid[])
        ORDER BY g.name`,
      [familyId, transactionIds],
    );
    const grouped = new Map<string, TagRow[]>(transactionIds.map((id) => [id, []]));
    for (const { transactionId, ...tag } of rows) grouped.get(transactionId)?.push(tag);
    return transactionIds.map((id) => grouped.get(id)!);
  }
}

function filterConditions(filter: TransactionFilter, bind: unknown[]): string[] {
  const conditions: string[] = [];
  const param = (value: unknown) => {
    bind.push(value);
    return `$${bind.length}`;
  };
  if (filter.accountId) conditions.push(`t.account_id = ${param(filter.accountId)}`);
  if (filter.categoryId) conditions.push(`t.category_id = ${param(filter.categoryId)}`);
  if (filter.merchantId) conditions.push(`t.merchant_id = ${param(filter.merchantId)}`);
  if (filter.tagIds?.length) {
    conditions.push(
      `EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id AND tt.tag_id = ANY(${param(filter.tagIds)}::uuid[]))`,
    );
  }
  if (filter.startDate) conditions.push(`t.date >= ${param(filter.startDate)}::date`);
  if (filter.endDate) conditions.push(`t.date <= ${param(filter.endDate)}::date`);
  // Amount bounds compare magnitudes: "over $100" means what a person means, for income and expense alike.
  if (filter.minAmount) conditions.push(`abs(t.amount) >= ${param(filter.minAmount)}::numeric`);
  if (filter.maxAmount) conditions.push(`abs(t.amount) <= ${param(filter.maxAmount)}::numeric`);
  if (filter.type === "income") conditions.push("t.amount < 0");
  if (filter.type === "expense") conditions.push("t.amount >= 0");
  if (filter.search) {
    const pattern = param(likePattern(filter.search));
    conditions.push(
      `(t.name ILIKE ${pattern} OR t.notes ILIKE ${pattern} OR EXISTS (SELECT 1 FROM merchants m WHERE m.id = t.merchant_id AND m.name ILIKE ${pattern}))`,
    );
  }
  return conditions;
}
