import type { Sequelize, Transaction } from "sequelize";
import { alignToKeys, bindParam, selectRows } from "../../platform/common/sql";
import { CategoryModel, type CategoryClassification } from "./category.model";

export type CategoryRow = {
  id: string;
  parentId: string | null;
  name: string;
  classification: CategoryClassification;
  color: string;
  icon: string;
  createdAt: Date;
  updatedAt: Date;
  /** Read by the category queries only (undefined on categories read as a transaction's relation). */
  parentName?: string | null;
  subcategoriesCount?: number;
};

export type CategoryListFilter = { rootsOnly?: boolean; parentId?: string };

export type CategoryFields = Pick<CategoryModel, "name" | "classification" | "color" | "icon" | "parentId">;

const COLUMNS = `id, parent_id AS "parentId", name, classification, color, icon, created_at AS "createdAt", updated_at AS "updatedAt",
  (SELECT p.name FROM categories p WHERE p.id = categories.parent_id) AS "parentName",
  (SELECT count(*)::int FROM categories s WHERE s.parent_id = categories.id) AS "subcategoriesCount"`;

export class CategoryRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(familyId: string, id: string, fields: CategoryFields, transaction: Transaction): Promise<void> {
    await CategoryModel.create({ ...fields, id, familyId }, { transaction });
  }

  async update(familyId: string, id: string, changes: Partial<CategoryFields>, transaction: Transaction): Promise<void> {
    await CategoryModel.update(changes, { where: { id, familyId }, transaction });
  }

  /** Whether this call removed the row (of concurrent deletes, only one does). */
  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    return (await CategoryModel.destroy({ where: { id, familyId }, transaction })) > 0;
  }

  async byIds(familyId: string, ids: readonly string[]): Promise<(CategoryRow | null)[]> {
    const rows = await selectRows<CategoryRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM categories WHERE family_id = $1 AND id = ANY($2::uuid[])`,
      [familyId, ids],
    );
    return alignToKeys(ids, rows);
  }

  /** A page ordered by name, with the total in the same statement. */
  async page(familyId: string, filter: CategoryListFilter, limit: number, offset: number): Promise<{ rows: CategoryRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = ["family_id = $1"];
    if (filter.rootsOnly) conditions.push("parent_id IS NULL");
    if (filter.parentId) conditions.push(`parent_id = ${bindParam(bind, filter.parentId)}::uuid`);
    const where = conditions.join(" AND ");
    const rows = await selectRows<CategoryRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM categories WHERE ${where} ORDER BY lower(name), id LIMIT ${limit} OFFSET ${offset}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(this.sequelize, `SELECT count(*) AS total FROM categories WHERE ${where}`, bind);
    return { rows, total: Number(count.total) };
  }

  list(familyId: string): Promise<CategoryRow[]> {
    return selectRows<CategoryRow>(this.sequelize, `SELECT ${COLUMNS} FROM categories WHERE family_id = $1 ORDER BY lower(name), id`, [
      familyId,
    ]);
  }
}
