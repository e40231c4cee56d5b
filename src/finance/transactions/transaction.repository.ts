import type { CreationAttributes, Sequelize, Transaction } from "sequelize";
import type { AccountRow } from "../accounts";
import type { CategoryRow } from "../categories";
import { bindParam, readPrepared, readRows, selectRows } from "../../platform/common/sql";
import type { MerchantRow } from "../merchants";
import type { TagRow } from "../tags";
import { TransactionModel, TransactionTagModel, TransferModel } from "./transaction.model";
import { transactionConditions, type TransactionFilter } from "./transaction.filter";

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

/** What the transactions of a page point at: accounts (transfer counterparts included), categories, merchants by id, tags by transaction id. */
export type RelationIds = {
  accountIds: readonly string[];
  categoryIds: readonly string[];
  merchantIds: readonly string[];
  tagsOfTransactionIds: readonly string[];
};

export type Relations = {
  accounts: Map<string, AccountRow>;
  categories: Map<string, CategoryRow>;
  merchants: Map<string, MerchantRow>;
  /** Every requested transaction id has an entry, ordered by tag name. */
  tagsOfTransaction: Map<string, TagRow[]>;
};

/** One row of the relations statement: the columns of every kind, unused ones null. */
type RelationRow = {
  kind: "account" | "category" | "merchant" | "tag" | "tagging";
  transactionId: string | null;
  id: string;
  name: string;
  accountType: AccountRow["accountType"];
  classification: string;
  currency: string;
  balance: string;
  parentId: string | null;
  color: string | null;
  icon: string;
  logoUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type TransferFilter = { id?: string; accountId?: string; startDate?: string; endDate?: string };

/** A transfer and the ids of its two legs. */
export type TransferLink = { id: string; outflowId: string; inflowId: string; createdAt: Date };

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

const BY_ID = `${SELECT_FROM} WHERE t.family_id = $1 AND t.id = $2`;

const NEWEST_FIRST = "ORDER BY t.date DESC, t.created_at DESC, t.id DESC";

/** The columns a write sets (ids and family included). */
export type TransactionValues = CreationAttributes<TransactionModel>;
export type TransactionChanges = Partial<
  Pick<TransactionModel, "accountId" | "date" | "name" | "notes" | "amount" | "currency" | "pending" | "categoryId" | "merchantId">
>;

export class TransactionRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async insert(row: TransactionValues, transaction: Transaction): Promise<void> {
    await TransactionModel.create(row, { transaction });
  }

  async insertMany(rows: TransactionValues[], transaction: Transaction): Promise<void> {
    await TransactionModel.bulkCreate(rows, { transaction });
  }

  async update(familyId: string, id: string, changes: TransactionChanges, transaction: Transaction): Promise<void> {
    await TransactionModel.update(changes, { where: { id, familyId }, transaction });
  }

  /** Whether this call removed the row (of concurrent deletes, only one does). */
  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    return (await TransactionModel.destroy({ where: { id, familyId }, transaction })) > 0;
  }

  /** Links an outflow and an inflow leg as one transfer. */
  async insertTransfer(
    transfer: { id: string; familyId: string; outflowTransactionId: string; inflowTransactionId: string },
    transaction: Transaction,
  ): Promise<void> {
    await TransferModel.create(transfer, { transaction });
  }

  /**
   * Makes `tagIds` the transaction's whole tag set and answers the set it replaced (for its audit event);
   * null when the transaction no longer exists. Its row is locked first, so concurrent replacements take
   * turns and the last one wins whole instead of merging with another's.
   */
  async replaceTags(transactionId: string, tagIds: readonly string[], transaction: Transaction): Promise<string[] | null> {
    const row = await TransactionModel.findByPk(transactionId, { attributes: ["id"], lock: transaction.LOCK.UPDATE, transaction });
    if (!row) return null;
    const replaced = await selectRows<{ tagId: string }>(
      this.sequelize,
      `DELETE FROM transaction_tags WHERE transaction_id = $1 RETURNING tag_id AS "tagId"`,
      [transactionId],
      transaction,
    );
    await this.addTags(transactionId, tagIds, transaction);
    return replaced.map((tagging) => tagging.tagId);
  }

  /** Tags a transaction created in this same database transaction. */
  async addTags(transactionId: string, tagIds: readonly string[], transaction: Transaction): Promise<void> {
    const unique = [...new Set(tagIds)];
    if (unique.length)
      await TransactionTagModel.bulkCreate(
        unique.map((tagId) => ({ transactionId, tagId })),
        { transaction },
      );
  }

  /** Prepared: every GET of a transaction runs it, and its plan (the primary key) is the same whatever the id. */
  async byId(familyId: string, id: string, transaction?: Transaction): Promise<TransactionRow | null> {
    const [row] = await readPrepared<TransactionRow>(this.sequelize, BY_ID, [familyId, id], transaction);
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

  /** These transactions of the family, in no particular order; unknown ids are left out. */
  byIds(familyId: string, ids: readonly string[]): Promise<TransactionRow[]> {
    return readRows<TransactionRow>(this.sequelize, `${SELECT_FROM} WHERE t.family_id = $1 AND t.id = ANY($2::uuid[])`, [familyId, ids]);
  }

  /**
   * The family's transfers, newest first, with the total: `accountId` matches either leg, the dates
   * the outflow leg's date (both legs share it when made here).
   */
  async transfersPage(
    familyId: string,
    filter: TransferFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: TransferLink[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = ["x.family_id = $1"];
    if (filter.id) conditions.push(`x.id = ${bindParam(bind, filter.id)}::uuid`);
    if (filter.accountId) {
      const account = bindParam(bind, filter.accountId);
      conditions.push(`(o.account_id = ${account}::uuid OR i.account_id = ${account}::uuid)`);
    }
    if (filter.startDate) conditions.push(`o.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`o.date <= ${bindParam(bind, filter.endDate)}::date`);
    const rows = await readRows<TransferLink & { total: string }>(
      this.sequelize,
      `SELECT x.id, x.outflow_transaction_id AS "outflowId", x.inflow_transaction_id AS "inflowId", x.created_at AS "createdAt",
              count(*) OVER () AS total
         FROM transfers x JOIN transactions o ON o.id = x.outflow_transaction_id JOIN transactions i ON i.id = x.inflow_transaction_id
        WHERE ${conditions.join(" AND ")}
        ORDER BY x.created_at DESC, x.id DESC LIMIT ${limit} OFFSET ${offset}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM transfers x JOIN transactions o ON o.id = x.outflow_transaction_id
         JOIN transactions i ON i.id = x.inflow_transaction_id WHERE ${conditions.join(" AND ")}`,
      bind,
    );
    return { rows, total: Number(count.total) };
  }

  /** Newest first, with the filtered total counted in the same statement. */
  async page(
    familyId: string,
    filter: TransactionFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: TransactionRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const where = ["t.family_id = $1", ...transactionConditions(filter, bind)].join(" AND ");
    // The page is cut first and only its rows are joined to transfers: the window count needs every
    // matching row, the joins only the page's (joining first cost a transfer lookup per matching row).
    const rows = await readRows<TransactionRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, t.total
         FROM (SELECT t.*, count(*) OVER () AS total FROM transactions t WHERE ${where} ${NEWEST_FIRST} LIMIT ${limit} OFFSET ${offset}) t
         ${TRANSFER_JOINS}
        ${NEWEST_FIRST}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(this.sequelize, `SELECT count(*) AS total FROM transactions t WHERE ${where}`, bind);
    return { rows, total: Number(count.total) };
  }

  /**
   * Everything a set of transactions points at, read in one statement whatever the mix of kinds:
   * a page's relations cost one round trip instead of one per kind. Every branch is scoped to the family.
   */
  async relations(familyId: string, ids: RelationIds): Promise<Relations> {
    const kinds = RELATION_KINDS.filter((kind) => ids[kind].length > 0);
    const relations: Relations = {
      accounts: new Map(),
      categories: new Map(),
      merchants: new Map(),
      tagsOfTransaction: new Map(ids.tagsOfTransactionIds.map((id) => [id, []])),
    };
    if (kinds.length === 0) return relations;
    const bind: unknown[] = [familyId, ...kinds.map((kind) => ids[kind])];
    // Ordering by name puts each transaction's tags in order. Prepared: every read of transactions that
    // shows a relation runs one of these few statements, and each branch's plan (by id) is the same whatever the ids.
    const rows = await readPrepared<RelationRow>(this.sequelize, relationsStatement(kinds), bind);
    const tags = new Map<string, TagRow>();
    const taggings: RelationRow[] = [];
    for (const row of rows) {
      const { id, name, createdAt, updatedAt } = row;
      if (row.kind === "account") {
        const { accountType, currency, balance } = row;
        relations.accounts.set(id, {
          id,
          name,
          accountType,
          classification: row.classification as AccountRow["classification"],
          currency,
          balance,
          createdAt,
          updatedAt,
        });
      } else if (row.kind === "category") {
        const { parentId, icon } = row;
        const classification = row.classification as CategoryRow["classification"];
        relations.categories.set(id, { id, parentId, name, classification, color: row.color!, icon, createdAt, updatedAt });
      } else if (row.kind === "merchant") {
        relations.merchants.set(id, { id, name, color: row.color, logoUrl: row.logoUrl, createdAt, updatedAt });
      } else if (row.kind === "tag") {
        tags.set(id, { id, name, color: row.color!, createdAt, updatedAt });
      } else {
        taggings.push(row);
      }
    }
    // Taggings come ordered by tag name, so each transaction's tags do too.
    for (const { transactionId, id } of taggings) relations.tagsOfTransaction.get(transactionId!)?.push(tags.get(id)!);
    return relations;
  }
}

/**
 * The columns of the relations statement and their types. Each branch gives some and the rest are
 * NULLs of the column's type: UNION resolves types pair by pair, so an untyped NULL in two branches
 * would become text and then clash with a later branch's uuid.
 */
const RELATION_COLUMNS = {
  kind: "text",
  transactionId: "uuid",
  id: "uuid",
  name: "text",
  accountType: "text",
  classification: "text",
  currency: "text",
  balance: "numeric",
  parentId: "uuid",
  color: "text",
  icon: "text",
  logoUrl: "text",
  createdAt: "timestamptz",
  updatedAt: "timestamptz",
} as const satisfies Record<keyof RelationRow, string>;

type RelationColumns = Partial<Record<keyof RelationRow, string>>;

function relationBranch(columns: RelationColumns, from: string): string {
  const list = Object.entries(RELATION_COLUMNS).map(
    ([name, type]) => `${columns[name as keyof RelationRow] ?? `NULL::${type}`} AS "${name}"`,
  );
  return `SELECT ${list.join(", ")} ${from}`;
}

/** The kinds of relations a read asks for, in the order their ids are bound ($2, $3 …). */
const RELATION_KINDS = ["accountIds", "categoryIds", "merchantIds", "tagsOfTransactionIds"] as const;
type RelationKind = (typeof RELATION_KINDS)[number];

/** The branches of each kind, given the placeholder of its ids. Every branch is scoped to the family ($1). */
const RELATION_BRANCHES: Record<RelationKind, (ids: string) => string[]> = {
  accountIds: (ids) => [
    relationBranch(
      {
        kind: "'account'",
        id: "id",
        name: "name",
        accountType: "account_type",
        classification: "classification",
        currency: "currency",
        balance: "balance",
        createdAt: "created_at",
        updatedAt: "updated_at",
      },
      `FROM accounts WHERE family_id = $1 AND id = ANY(${ids})`,
    ),
  ],
  categoryIds: (ids) => [
    relationBranch(
      {
        kind: "'category'",
        id: "id",
        name: "name",
        classification: "classification",
        parentId: "parent_id",
        color: "color",
        icon: "icon",
        createdAt: "created_at",
        updatedAt: "updated_at",
      },
      `FROM categories WHERE family_id = $1 AND id = ANY(${ids})`,
    ),
  ],
  merchantIds: (ids) => [
    relationBranch(
      { kind: "'merchant'", id: "id", name: "name", color: "color", logoUrl: "logo_url", createdAt: "created_at", updatedAt: "updated_at" },
      `FROM merchants WHERE family_id = $1 AND id = ANY(${ids})`,
    ),
  ],
  // Each tag once with all its columns, then only which transaction carries which tag: a page repeats a
  // few tags many times, and timestamps cost more to parse than anything else in a row.
  tagsOfTransactionIds: (transactionIds) => [
    relationBranch(
      { kind: "'tag'", id: "g.id", name: "g.name", color: "g.color", createdAt: "g.created_at", updatedAt: "g.updated_at" },
      `FROM tags g WHERE g.family_id = $1 AND g.id IN (SELECT tt.tag_id FROM transaction_tags tt WHERE tt.transaction_id = ANY(${transactionIds}))`,
    ),
    relationBranch(
      { kind: "'tagging'", transactionId: "tt.transaction_id", id: "g.id", name: "g.name" },
      `FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id WHERE g.family_id = $1 AND tt.transaction_id = ANY(${transactionIds})`,
    ),
  ],
};

/** The relations statement of each mix of kinds, built on its first use: its text depends on nothing else, and building it cost more than parsing its answer. */
const relationsStatements = new Map<string, string>();

function relationsStatement(kinds: readonly RelationKind[]): string {
  const key = kinds.join();
  let sql = relationsStatements.get(key);
  if (sql === undefined) {
    const branches = kinds.flatMap((kind, index) => RELATION_BRANCHES[kind](`$${index + 2}::uuid[]`));
    sql = `${branches.join(" UNION ALL ")} ORDER BY name`;
    relationsStatements.set(key, sql);
  }
  return sql;
}
