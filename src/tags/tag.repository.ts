import type { Sequelize } from "sequelize";
import { alignToKeys, selectRows } from "../common/sql";

export type TagRow = { id: string; name: string; color: string; createdAt: Date; updatedAt: Date };

const COLUMNS = `id, name, color, created_at AS "createdAt", updated_at AS "updatedAt"`;

export class TagRepository {
  constructor(private readonly sequelize: Sequelize) {}

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
