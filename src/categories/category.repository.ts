import type { Sequelize } from "sequelize";
import { alignToKeys, selectRows } from "../common/sql";
import type { CategoryClassification } from "./category.model";

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

const COLUMNS = `id, parent_id AS "parentId", name, classification, color, icon, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class CategoryRepository {
  constructor(private readonly sequelize: Sequelize) {}

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
