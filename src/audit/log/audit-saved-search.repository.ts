import { AuditSavedSearchModel } from "./audit-saved-search.model";

export type SavedSearchRow = {
  id: string;
  ownerUserId: string;
  name: string;
  filter: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
};

/** The saved audit searches of each administrator or auditor. */
export class AuditSavedSearchRepository {
  list(ownerUserId: string): Promise<SavedSearchRow[]> {
    return AuditSavedSearchModel.findAll({ where: { ownerUserId }, order: [["name", "ASC"]], raw: true });
  }

  byId(ownerUserId: string, id: string): Promise<SavedSearchRow | null> {
    return AuditSavedSearchModel.findOne({ where: { id, ownerUserId }, raw: true });
  }

  async create(values: Pick<SavedSearchRow, "id" | "ownerUserId" | "name" | "filter">): Promise<SavedSearchRow> {
    return (await AuditSavedSearchModel.create(values)).get({ plain: true });
  }

  async rename(ownerUserId: string, id: string, name: string): Promise<SavedSearchRow | null> {
    const [, rows] = await AuditSavedSearchModel.update({ name }, { where: { id, ownerUserId }, returning: true });
    return rows[0]?.get({ plain: true }) ?? null;
  }

  async delete(ownerUserId: string, id: string): Promise<void> {
    await AuditSavedSearchModel.destroy({ where: { id, ownerUserId } });
  }
}
