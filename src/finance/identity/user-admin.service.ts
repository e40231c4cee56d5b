import type { Sequelize, Transaction } from "sequelize";
import { diffChanges } from "../../audit/log";
import type { AuditService, AuditUser } from "../../audit/log";
import { announceAccessEnded } from "../auth";
import type { SessionService } from "../auth";
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText, saveUnique } from "../../platform/common/validation";
import { Topic } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import type { Actor } from "../../platform/security/actor";
import { isUserRole } from "../../platform/security/actor";
import { type UserStatus } from "./user.model";
import type { RemovedRows, UserRepository, UserRow } from "./user.repository";
import type { FamilyDataRepository } from "./family-data.repository";
import { isValidEmail, summarizeRow, type UserService, type UserSummary } from "./user.service";

const USER_STATUSES: readonly UserStatus[] = ["active", "suspended", "deleted"];
/** Lists leave deleted (anonymised) accounts out unless a status filter asks for them. */
const LISTED_BY_DEFAULT: UserStatus[] = ["active", "suspended"];
const DEFAULT_PER_PAGE = 25;
const MAX_NAME = 200;
const MAX_EMAIL = 254;
const MAX_REASON = 500;
const DELETED_FAMILY_NAME = "Deleted family";

export type UserListFilter = { search?: string | null; role?: string | null; status?: string | null };
export type UserPage = { items: UserSummary[]; pagination: PageInfo };
export type UserProfileInput = { name?: string | null; email?: string | null };

export type UserDeletion = {
  user: UserSummary;
  /** True when no other member was left, so the family's financial data went too. */
  familyDataRemoved: boolean;
  sessionsEnded: number;
  removed: RemovedRows[];
};

/** The placeholder that replaces a deleted user's e-mail: unique, and never deliverable (RFC 2606 `.invalid`). */
export function deletedEmailOf(userId: string): string {
  return `deleted-${userId}@invalid`;
}

/**
 * Instance-wide user administration for administrators: list and search, profile edits, roles,
 * suspension, reactivation and deletion. Every change and its audit event share one transaction, with
 * the acting administrator as the event's user. Suspension and deletion end the user's sessions there
 * too, and announce it so that open WebSocket connections close.
 */
export class UserAdminService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: UserRepository,
    private readonly familyData: FamilyDataRepository,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly events: EventBus,
  ) {}

  async list(filter: UserListFilter, page: { page?: number | null; perPage?: number | null }): Promise<UserPage> {
    const problems = new ValidationErrors();
    const role = filter.role?.trim().toLowerCase() || null;
    const status = filter.status?.trim().toLowerCase() || null;
    if (role && !isUserRole(role)) problems.add("Role must be one of admin, auditor, member");
    if (status && !(USER_STATUSES as readonly string[]).includes(status)) problems.add(`Status must be one of ${USER_STATUSES.join(", ")}`);
    const search = optionalText(problems, "Search", filter.search?.trim() || null, 200);
    problems.throwIfAny();
    const request = clampPage(page.page, page.perPage, DEFAULT_PER_PAGE);
    const { rows, total } = await this.repository.page(
      { search, roles: role ? [role as UserRow["role"]] : [], statuses: status ? [status as UserStatus] : LISTED_BY_DEFAULT },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows.map(summarizeRow), pagination: pageInfo(request, total) };
  }

  async get(id: string): Promise<UserSummary> {
    return this.users.getById(id);
  }

  /** Changes a user's name and e-mail; `user.updated` carries what changed. The e-mail stays unique. */
  async updateProfile(actor: Actor, id: string, input: UserProfileInput): Promise<UserSummary> {
    const problems = new ValidationErrors();
    const values: { name?: string | null; email?: string } = {};
    if (input.name !== undefined) values.name = optionalText(problems, "Name", input.name?.trim() || null, MAX_NAME);
    if (input.email !== undefined) {
      const email = input.email?.trim().toLowerCase() ?? "";
      if (!isValidEmail(email) || email.length > MAX_EMAIL) problems.add("Email is invalid");
      values.email = email;
    }
    problems.throwIfAny();
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(id, transaction);
      if (values.email !== undefined && (await this.repository.emailTaken(values.email, user.id, transaction))) {
        throw new ValidationError(["Email has already been taken"]);
      }
      const changes = diffChanges(user, values, Object.keys(values));
      if (Object.keys(changes).length === 0) return summarizeRow(user);
      const updated = await saveUnique("Email has already been taken", () => this.repository.update(user.id, values, transaction));
      announceUserChanged(this.events, transaction, user.id);
      await this.audit.record(transaction, {
        type: "user.updated",
        user: auditUserOf(actor),
        action: "update",
        resource: { type: "user", id: user.id, label: user.email },
        changes,
      });
      return summarizeRow(updated);
    });
  }

  /** Turns the AI assistant on for the actor themself (upstream's auth/enable_ai); `user.updated` records it once. */
  async enableAi(actor: Actor): Promise<UserSummary> {
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(actor.userId, transaction);
      if (user.aiEnabled) return summarizeRow(user);
      const updated = await this.repository.setAiEnabled(user.id, true, transaction);
      announceUserChanged(this.events, transaction, user.id);
      await this.audit.record(transaction, {
        type: "user.updated",
        user: auditUserOf(actor),
        action: "update",
        resource: { type: "user", id: user.id, label: user.email },
        changes: { ai_enabled: { old: false, new: true } },
      });
      return summarizeRow(updated);
    });
  }

  /** Sets the user's one role by hand (`user.roles.updated`); an administrator cannot demote themselves. */
  async setRole(actor: Actor, id: string, role: string): Promise<UserSummary> {
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(id, transaction);
      if (user.id === actor.userId && isUserRole(role) && role !== user.role) throw selfForbidden("change your own role");
      await this.users.changeRole(transaction, user, role, { eventType: "user.roles.updated", actor: auditUserOf(actor) });
      return summarizeRow((await this.repository.byId(user.id, transaction))!);
    });
  }

  /**
   * Suspends an active user. Their API keys, access tokens and session cookies are refused from the
   * next request on (every credential check reads the user's status, or, for an API key remembered by
   * a process, that process forgets it when the commit announces the end); their open sessions are ended
   * and their tokens revoked here, so they stay ended after a reactivation; their live WebSocket
   * connections are closed once this commits.
   */
  async suspend(actor: Actor, id: string, reason?: string | null): Promise<UserSummary> {
    const problems = new ValidationErrors();
    const why = optionalText(problems, "Reason", reason?.trim() || null, MAX_REASON);
    problems.throwIfAny();
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(id, transaction);
      if (user.id === actor.userId) throw selfForbidden("suspend yourself");
      if (user.status !== "active") throw new ConflictError("The user is already suspended", { details: { reason: "not_active" } });
      await this.users.assertNotLastActiveAdministrator(transaction, user, "suspended");
      const updated = await this.repository.update(user.id, { status: "suspended" }, transaction);
      await this.audit.record(transaction, {
        type: "user.suspended",
        user: auditUserOf(actor),
        action: "suspend",
        resource: { type: "user", id: user.id, label: user.email },
        changes: { status: { old: user.status, new: "suspended" }, ...(why ? { reason: { old: null, new: why } } : {}) },
      });
      await this.sessions.endAllForUser(transaction, user, "user_suspended");
      announceAccessEnded(this.events, transaction, { kind: "user", userId: user.id, reason: "suspended" });
      return summarizeRow(updated);
    });
  }

  /** Lets a suspended user back in: API keys work again; sessions ended by the suspension do not. */
  async reactivate(actor: Actor, id: string): Promise<UserSummary> {
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(id, transaction);
      if (user.status !== "suspended")
        throw new ConflictError("Only a suspended user can be reactivated", { details: { reason: "not_suspended" } });
      const updated = await this.repository.update(user.id, { status: "active" }, transaction);
      await this.audit.record(transaction, {
        type: "user.reactivated",
        user: auditUserOf(actor),
        action: "reactivate",
        resource: { type: "user", id: user.id, label: user.email },
        changes: { status: { old: user.status, new: "active" } },
      });
      return summarizeRow(updated);
    });
  }

  /**
   * Deletes a user as docs/users.md's "User deletion policy" describes, in one transaction: sessions
   * ended (each recorded), credentials and the user's own content removed, the family's financial data
   * removed when no other member is left, and the user row anonymised so audit events keep its id.
   */
  async delete(actor: Actor, id: string): Promise<UserDeletion> {
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(id, transaction);
      if (user.id === actor.userId) throw selfForbidden("delete yourself");
      return this.deleteLocked(actor, user, transaction);
    });
  }

  /**
   * A user's own deletion (upstream's `DELETE /users/me`), under the same policy as an administrator's;
   * the instance's last active administrator is refused, as they would be by anyone else. `confirm`
   * must be true: the GraphQL caller says so explicitly; the REST route's DELETE is its confirmation.
   */
  async deleteSelf(actor: Actor, confirm: boolean): Promise<UserDeletion> {
    if (!confirm) throw new ValidationError(["Confirm must be true to delete your account"]);
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(actor.userId, transaction);
      return this.deleteLocked(actor, user, transaction);
    });
  }

  private async deleteLocked(actor: Actor, user: UserRow, transaction: Transaction): Promise<UserDeletion> {
    await this.users.assertNotLastActiveAdministrator(transaction, user, "deleted");
    await this.familyData.lockFamily(user.familyId, transaction);
    const sessionsEnded = await this.sessions.endAllForUser(transaction, user, "user_deleted");
    const removed = [
      ...(await this.repository.removeCredentials(user.id, transaction)),
      ...(await this.repository.removeContent(user.id, transaction)),
    ];
    const familyDataRemoved = (await this.repository.remainingMembers(user.familyId, user.id, transaction)) === 0;
    if (familyDataRemoved) {
      removed.push(...(await this.familyData.remove(user.familyId, transaction)));
      await this.repository.renameFamily(user.familyId, DELETED_FAMILY_NAME, transaction);
    }
    const anonymised = await this.repository.anonymise(user.id, deletedEmailOf(user.id), transaction);
    await this.audit.record(transaction, {
      type: "user.deleted",
      user: auditUserOf(actor),
      action: familyDataRemoved ? "delete_with_family_data" : "delete",
      resource: { type: "user", id: user.id, label: user.email },
      changes: { status: { old: user.status, new: "deleted" }, email: { old: user.email, new: anonymised.email } },
    });
    announceAccessEnded(this.events, transaction, { kind: "user", userId: user.id, reason: "deleted" });
    return { user: summarizeRow(anonymised), familyDataRemoved, sessionsEnded: sessionsEnded.length, removed };
  }

  /** Lifts a lock after repeated wrong passwords now (`user.unlocked`); an account not locked is left as it is. */
  async unlock(actor: Actor, id: string): Promise<UserSummary> {
    return this.sequelize.transaction(async (transaction) => {
      const user = await this.changeable(id, transaction);
      if (!user.lockedUntil) return summarizeRow(user);
      const unlocked = await this.repository.unlock(user.id, transaction);
      await this.audit.record(transaction, {
        type: "user.unlocked",
        user: auditUserOf(actor),
        action: "unlock",
        resource: { type: "user", id: user.id, label: user.email },
        changes: { locked_until: { old: user.lockedUntil.toISOString(), new: null } },
      });
      return summarizeRow(unlocked);
    });
  }

  /** The user, locked for the rest of the transaction; deleted accounts are final. */
  private async changeable(id: string, transaction: Transaction): Promise<UserRow> {
    const user = isUuid(id) ? await this.repository.byId(id, transaction, true) : null;
    if (!user) throw new NotFoundError("User");
    if (user.status === "deleted") throw new ConflictError("A deleted user cannot be changed", { details: { reason: "deleted" } });
    return user;
  }
}

function auditUserOf(actor: Actor): AuditUser {
  return { id: actor.userId, email: actor.email };
}

function selfForbidden(what: string): ForbiddenError {
  return new ForbiddenError(`Administrators cannot ${what}`, "forbidden");
}

/**
 * After the commit, tells every process that the user's row changed (Topic.UserChanged): an API key's
 * remembered owner carries the e-mail and AI access, and must not answer with the old ones. The commit
 * waits for the event to leave, as announceAccessEnded's does.
 */
function announceUserChanged(events: EventBus, transaction: Transaction, userId: string): void {
  transaction.afterCommit(async () => {
    events.publish(Topic.UserChanged, { userId });
    await events.flush();
  });
}
