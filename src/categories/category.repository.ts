import type { Sequelize } from "sequelize";
import { alignToKeys, selectRows } from "../common/sql";
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
};

export type CategoryFields = Pick<CategoryModel, "name" | "classification" | "color" | "icon" | "parentId">;

const COLUMNS = `id, parent_id AS "parentId", name, classification, color, icon, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class CategoryRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(familyId: string, id: string, fields: CategoryFields): Promise<void> {
    await CategoryModel.create({ ...fields, id, familyId });
  }

  async update(familyId: string, id: string, changes: Partial<CategoryFields>): Promise<void> {
    await CategoryModel.update(changes, { where: { id, familyId } });
  }

  async delete(familyId: string, id: string): Promise<void> {
    await CategoryModel.destroy({ where: { id, familyId } });
  }

  async byIds(familyId: string, ids: readonly string[]): Promise<(CategoryRow | null)[]> {
    const rows = await selectRows<CategoryRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM categories WHERE family_id = $1 AND id = ANY($2::uuid[])`,
      [familyId, ids],
    );
    return alignToKeys(ids, rows);
  }

  list(familyId: string): Promise<CategoryRow[]> {
    return selectRows<CategoryRow>(this.sequelize, `SELECT ${COLUMNS} FROM categories WHERE family_id = $1 ORDER BY lower(name), id`, [
      familyId,
    ]);
  }
}
