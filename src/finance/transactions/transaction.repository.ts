import pg from "pg";
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
   * a page's relations cost one round trip instead of one per kind. Every part is scoped to the family.
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
    // Prepared: every read of transactions that shows a relation runs one of these few statements, and
    // each part's plan (by id) is the same whatever the ids.
    const [row] = await readPrepared<RelationsRow>(this.sequelize, relationsStatement(kinds), bind);
    for (const account of row.accounts ?? []) relations.accounts.set(account.id, new AccountRelation(account));
    for (const category of row.categories ?? []) relations.categories.set(category.id, new CategoryRelation(category));
    for (const merchant of row.merchants ?? []) relations.merchants.set(merchant.id, new MerchantRelation(merchant));
    const tags = new Map<string, TagRow>();
    for (const tag of row.tags ?? []) tags.set(tag.id, new TagRelation(tag));
    // Taggings come ordered by tag name, so each transaction's tags do too.
    for (const [transactionId, tagId] of row.taggings ?? []) relations.tagsOfTransaction.get(transactionId)?.push(tags.get(tagId)!);
    return relations;
  }
}

/**
 * The relations statement's one row: each kind a JSON array (null when none matched), which
 * PostgreSQL builds and JSON.parse reads natively, where a row per relation and per tagging was
 * parsed field by field in JavaScript. Timestamps come as PostgreSQL's own text of them.
 */
type RelationsRow = {
  accounts?: Array<Stamped<AccountRow>> | null;
  categories?: Array<Stamped<CategoryRow>> | null;
  merchants?: Array<Stamped<MerchantRow>> | null;
  tags?: Array<Stamped<TagRow>> | null;
  /** [transaction id, tag id], ordered by the tag's name. */
  taggings?: Array<[string, string]> | null;
};

type Stamped<Row extends { createdAt: Date; updatedAt: Date }> = Omit<Row, "createdAt" | "updatedAt"> & {
  createdAt: string;
  updatedAt: string;
};

/** pg's own parser of a timestamptz's text, so a relation's timestamp is the Date a column of it would have given. */
const parseTimestamp = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, "text") as (text: string) => Date;

/**
 * A relation's timestamps, kept as PostgreSQL's text and parsed when read: the REST answers and most
 * queries never select a relation's timestamps, and parsing them (80 for a page of 100) cost more than
 * the rest of the relations.
 */
abstract class StampedRelation {
  readonly #createdAt: string;
  readonly #updatedAt: string;

  constructor(stamps: { createdAt: string; updatedAt: string }) {
    this.#createdAt = stamps.createdAt;
    this.#updatedAt = stamps.updatedAt;
  }

  get createdAt(): Date {
    return parseTimestamp(this.#createdAt);
  }

  get updatedAt(): Date {
    return parseTimestamp(this.#updatedAt);
  }
}

class AccountRelation extends StampedRelation implements AccountRow {
  readonly id: string;
  readonly name: string;
  readonly accountType: AccountRow["accountType"];
  readonly classification: AccountRow["classification"];
  readonly currency: string;
  readonly balance: string;

  constructor(row: Stamped<AccountRow>) {
    super(row);
    this.id = row.id;
    this.name = row.name;
    this.accountType = row.accountType;
    this.classification = row.classification;
    this.currency = row.currency;
    this.balance = row.balance;
  }
}

class CategoryRelation extends StampedRelation implements CategoryRow {
  readonly id: string;
  readonly parentId: string | null;
  readonly name: string;
  readonly classification: CategoryRow["classification"];
  readonly color: string;
  readonly icon: string;

  constructor(row: Stamped<CategoryRow>) {
    super(row);
    this.id = row.id;
    this.parentId = row.parentId;
    this.name = row.name;
    this.classification = row.classification;
    this.color = row.color;
    this.icon = row.icon;
  }
}

class MerchantRelation extends StampedRelation implements MerchantRow {
  readonly id: string;
  readonly name: string;
  readonly color: string | null;
  readonly logoUrl: string | null;

  constructor(row: Stamped<MerchantRow>) {
    super(row);
    this.id = row.id;
    this.name = row.name;
    this.color = row.color;
    this.logoUrl = row.logoUrl;
  }
}

class TagRelation extends StampedRelation implements TagRow {
  readonly id: string;
  readonly name: string;
  readonly color: string;

  constructor(row: Stamped<TagRow>) {
    super(row);
    this.id = row.id;
    this.name = row.name;
    this.color = row.color;
  }
}

/** The kinds of relations a read asks for, in the order their ids are bound ($2, $3 …). */
const RELATION_KINDS = ["accountIds", "categoryIds", "merchantIds", "tagsOfTransactionIds"] as const;
type RelationKind = (typeof RELATION_KINDS)[number];

/**
 * The columns of each kind, given the placeholder of its ids, each a JSON array built by PostgreSQL.
 * Numbers and timestamps are sent as text (a JSON number would be read as a float). Every part is
 * scoped to the family ($1).
 */
const RELATION_PARTS: Record<RelationKind, (ids: string) => string[]> = {
  accountIds: (ids) => [
    `(SELECT json_agg(json_build_object('id', id, 'name', name, 'accountType', account_type, 'classification', classification,
        'currency', currency, 'balance', balance::text, 'createdAt', created_at::text, 'updatedAt', updated_at::text))
        FROM accounts WHERE family_id = $1 AND id = ANY(${ids})) AS accounts`,
  ],
  categoryIds: (ids) => [
    `(SELECT json_agg(json_build_object('id', id, 'parentId', parent_id, 'name', name, 'classification', classification,
        'color', color, 'icon', icon, 'createdAt', created_at::text, 'updatedAt', updated_at::text))
        FROM categories WHERE family_id = $1 AND id = ANY(${ids})) AS categories`,
  ],
  merchantIds: (ids) => [
    `(SELECT json_agg(json_build_object('id', id, 'name', name, 'color', color, 'logoUrl', logo_url,
        'createdAt', created_at::text, 'updatedAt', updated_at::text))
        FROM merchants WHERE family_id = $1 AND id = ANY(${ids})) AS merchants`,
  ],
  // Each tag once with all its columns, then only which transaction carries which tag: a page repeats a
  // few tags many times.
  tagsOfTransactionIds: (transactionIds) => [
    `(SELECT json_agg(json_build_object('id', g.id, 'name', g.name, 'color', g.color,
        'createdAt', g.created_at::text, 'updatedAt', g.updated_at::text))
        FROM tags g WHERE g.family_id = $1
         AND g.id IN (SELECT tt.tag_id FROM transaction_tags tt WHERE tt.transaction_id = ANY(${transactionIds}))) AS tags`,
    `(SELECT json_agg(json_build_array(tt.transaction_id, g.id) ORDER BY g.name)
        FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
       WHERE g.family_id = $1 AND tt.transaction_id = ANY(${transactionIds})) AS taggings`,
  ],
};

/** The relations statement of each mix of kinds, built on its first use: its text depends on nothing else, and building it cost more than parsing its answer. */
const relationsStatements = new Map<string, string>();

function relationsStatement(kinds: readonly RelationKind[]): string {
  const key = kinds.join();
  let sql = relationsStatements.get(key);
  if (sql === undefined) {
    const parts = kinds.flatMap((kind, index) => RELATION_PARTS[kind](`$${index + 2}::uuid[]`));
    sql = `SELECT ${parts.join(", ")}`;
    relationsStatements.set(key, sql);
  }
  return sql;
}
