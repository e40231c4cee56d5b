import type { Sequelize, Transaction } from "sequelize";
import { alignToKeys, selectRows } from "../../platform/common/sql";
import { TagModel } from "./tag.model";

export type TagRow = { id: string; name: string; color: string; createdAt: Date; updatedAt: Date };

export type TagFields = Pick<TagModel, "name" | "color">;

const COLUMNS = `id, name, color, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class TagRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(familyId: string, id: string, fields: TagFields, transaction: Transaction): Promise<void> {
    await TagModel.create({ ...fields, id, familyId }, { transaction });
  }

  async update(familyId: string, id: string, changes: Partial<TagFields>, transaction: Transaction): Promise<void> {
    await TagModel.update(changes, { where: { id, familyId }, transaction });
  }

  /** Whether this call removed the row (of concurrent deletes, only one does). */
  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    return (await TagModel.destroy({ where: { id, familyId }, transaction })) > 0;
  }

  async byIds(familyId: string, ids: readonly string[]): Promise<(TagRow | null)[]> {
    const rows = await selectRows<TagRow>(this.sequelize, `SELECT ${COLUMNS} FROM tags WHERE family_id = $1 AND id = ANY($2::uuid[])`, [
      familyId,
      ids,
    ]);
    return alignToKeys(ids, rows);
  }

  list(familyId: string): Promise<TagRow[]> {
    return selectRows<TagRow>(this.sequelize, `SELECT ${COLUMNS} FROM tags WHERE family_id = $1 ORDER BY lower(name), id`, [familyId]);
  }
}
