import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { requiredText, saveUnique } from "../../platform/common/validation";
import type { AuditSavedSearchRepository, SavedSearchRow } from "./audit-saved-search.repository";
import { parseFilter, type AuditFilterInput } from "./audit-filter";

export type SavedSearch = { id: string; name: string; filter: AuditFilterInput; createdAt: Date; updatedAt: Date };

const NAME_TAKEN = "Name has already been taken";

/** Named audit filters, each its owner's alone, reopened from the dashboard. */
export class AuditSavedSearchService {
  constructor(private readonly repository: AuditSavedSearchRepository) {}

  async list(ownerUserId: string): Promise<SavedSearch[]> {
    return (await this.repository.list(ownerUserId)).map(toSavedSearch);
  }

  async get(ownerUserId: string, id: string): Promise<SavedSearch> {
    return toSavedSearch(await this.find(ownerUserId, id));
  }

  async create(ownerUserId: string, name: string, filter: AuditFilterInput): Promise<SavedSearch> {
    const problems = new ValidationErrors();
    const trimmed = requiredText(problems, "Name", name, 100);
    problems.throwIfAny();
    parseFilter(filter);
    const row = await saveUnique(NAME_TAKEN, () =>
      this.repository.create({ id: newId(), ownerUserId, name: trimmed, filter: compactFilter(filter) }),
    );
    return toSavedSearch(row);
  }

  async rename(ownerUserId: string, id: string, name: string): Promise<SavedSearch> {
    await this.find(ownerUserId, id);
    const problems = new ValidationErrors();
    const trimmed = requiredText(problems, "Name", name, 100);
    problems.throwIfAny();
    const row = await saveUnique(NAME_TAKEN, () => this.repository.rename(ownerUserId, id, trimmed));
    if (!row) throw new NotFoundError("Saved search");
    return toSavedSearch(row);
  }

  async delete(ownerUserId: string, id: string): Promise<SavedSearch> {
    const row = await this.find(ownerUserId, id);
    await this.repository.delete(ownerUserId, id);
    return toSavedSearch(row);
  }

  private async find(ownerUserId: string, id: string): Promise<SavedSearchRow> {
    const row = isUuid(id) ? await this.repository.byId(ownerUserId, id) : null;
    if (!row) throw new NotFoundError("Saved search");
    return row;
  }
}

/** Keeps only the filter values that say something, so a reopened search shows what was chosen. */
function compactFilter(filter: AuditFilterInput): AuditFilterInput {
  return Object.fromEntries(
    Object.entries(filter).filter(([, value]) => value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0)),
  );
}

function toSavedSearch(row: SavedSearchRow): SavedSearch {
  return { id: row.id, name: row.name, filter: row.filter as AuditFilterInput, createdAt: row.createdAt, updatedAt: row.updatedAt };
}
