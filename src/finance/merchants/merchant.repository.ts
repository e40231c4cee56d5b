import type { Sequelize, Transaction } from "sequelize";
import { alignToKeys, selectRows } from "../../platform/common/sql";
import { MerchantModel } from "./merchant.model";

export type MerchantRow = {
  id: string;
  name: string;
  color: string | null;
  logoUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type MerchantFields = Pick<MerchantModel, "name" | "color" | "logoUrl">;

const COLUMNS = `id, name, color, logo_url AS "logoUrl", created_at AS "createdAt", updated_at AS "updatedAt"`;

export class MerchantRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(familyId: string, id: string, fields: MerchantFields, transaction: Transaction): Promise<void> {
    await MerchantModel.create({ ...fields, id, familyId }, { transaction });
  }

  async update(familyId: string, id: string, changes: Partial<MerchantFields>, transaction: Transaction): Promise<void> {
    await MerchantModel.update(changes, { where: { id, familyId }, transaction });
  }

  /** Whether this call removed the row (of concurrent deletes, only one does). */
  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    return (await MerchantModel.destroy({ where: { id, familyId }, transaction })) > 0;
  }

  async byIds(familyId: string, ids: readonly string[]): Promise<(MerchantRow | null)[]> {
    const rows = await selectRows<MerchantRow>(
      this.sequelize,
      `SELECT ${COLUMNS} FROM merchants WHERE family_id = $1 AND id = ANY($2::uuid[])`,
      [familyId, ids],
    );
    return alignToKeys(ids, rows);
  }

  /** A page ordered by name, with the total in the same statement. */
  async page(familyId: string, limit: number, offset: number): Promise<{ rows: MerchantRow[]; total: number }> {
    const rows = await selectRows<MerchantRow & { total: string }>(
      this.sequelize,
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM merchants WHERE family_id = $1 ORDER BY lower(name), id LIMIT $2 OFFSET $3`,
      [familyId, limit, offset],
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    return { rows, total: await this.count(familyId) };
  }

  private async count(familyId: string): Promise<number> {
    const [row] = await selectRows<{ total: string }>(this.sequelize, "SELECT count(*) AS total FROM merchants WHERE family_id = $1", [
      familyId,
    ]);
    return Number(row.total);
  }

  async nameTaken(familyId: string, name: string, exceptId?: string): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      "SELECT id FROM merchants WHERE family_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3::uuid",
      [familyId, name, exceptId ?? null],
    );
    return rows.length > 0;
  }
}
