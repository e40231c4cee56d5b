import { ValidationErrors } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import type { Actor } from "../../platform/security/actor";
import { canAdminister } from "../../platform/security/actor";
import type { UserRepository, UserRow } from "./user.repository";

/** What an auditor learns of a user: enough to pick them, nothing of their role, status or sign-ins. */
export type UserChoice = { id: string; email: string; name: string | null };

const MIN_PREFIX = 2;
const MAX_PREFIX = 254;
const DEFAULT_LIMIT = 8;
const MAX_LIMIT = 20;

/**
 * Picking users by e-mail for audit reports, exports and the audit log's filter. Auditors may not list
 * users (that is administration), so this answers narrowly: users whose e-mail begins with what was typed
 * (at least two characters), or the user with a pasted id; for an auditor only members of their own
 * family, for an administrator anyone; deleted accounts never; id, e-mail and name only.
 */
export class UserLookupService {
  constructor(private readonly repository: UserRepository) {}

  async byEmailPrefix(actor: Actor, text: string, limit?: number | null): Promise<UserChoice[]> {
    const prefix = text.trim();
    const problems = new ValidationErrors();
    if (prefix.length < MIN_PREFIX) problems.add(`Email prefix must be at least ${MIN_PREFIX} characters`);
    if (prefix.length > MAX_PREFIX) problems.add(`Email prefix must be at most ${MAX_PREFIX} characters`);
    if (limit !== undefined && limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) {
      problems.add(`Limit must be between 1 and ${MAX_LIMIT}`);
    }
    problems.throwIfAny();
    const familyId = canAdminister(actor) ? null : actor.familyId;
    if (isUuid(prefix)) {
      const user = await this.repository.byId(prefix.toLowerCase());
      return user && user.status !== "deleted" && (!familyId || user.familyId === familyId) ? [choiceOf(user)] : [];
    }
    const rows = await this.repository.byEmailPrefix(prefix, familyId, limit ?? DEFAULT_LIMIT);
    return rows.map(choiceOf);
  }
}

function choiceOf(user: UserRow): UserChoice {
  return { id: user.id, email: user.email, name: user.name };
}
