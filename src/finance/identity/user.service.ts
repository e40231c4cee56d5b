import type { Sequelize, Transaction } from "sequelize";
import type { AuditService, AuditUser } from "../../audit/log";
import { announceAccessEnded } from "../auth";
import { hashPassword } from "../auth";
import { ConflictError, NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import type { EventBus } from "../../platform/events/event-bus";
import { isKnownCurrency } from "../money";
import { isUserRole, ROLE_PRIVILEGE, USER_ROLES, type UserRole } from "../../platform/security/actor";
import { type UserStatus } from "./user.model";
import type { UserRepository, UserRow } from "./user.repository";

export type UserSummary = {
  id: string;
  email: string;
  familyId: string;
  role: UserRole;
  name: string | null;
  aiEnabled: boolean;
  status: UserStatus;
  createdAt: Date;
  updatedAt: Date;
  lockedUntil: Date | null;
  lastSignInAt: Date | null;
  lastSignInMethod: string | null;
};

/** How a role change is recorded: by hand (`user.roles.updated`) or from an identity provider (`user.roles.synced`). */
export type RoleChangeOptions = {
  eventType: "user.roles.updated" | "user.roles.synced";
  /** Who changed it: the administrator, or for a sync the user signing in; null for the CLI. */
  actor: AuditUser | null;
  /** The SSO provider whose claims the role came from (syncs). */
  provider?: string | null;
};

/** Roles from most to least powerful; each includes what the ones after it may do. */

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isValidEmail(email: string): boolean {
  return EMAIL_PATTERN.test(email);
}

export class UserService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly audit: AuditService,
    private readonly events: EventBus,
    private readonly repository: UserRepository,
  ) {}

  /** Creates a user, in a new family unless `familyOfEmail` names a member of an existing one. */
  async create(options: {
    email: string;
    role?: string;
    name?: string;
    familyOfEmail?: string;
    familyName?: string;
    currency?: string;
    aiEnabled?: boolean;
    /** Enables local sign-in; only its scrypt hash is stored. */
    password?: string;
    /** Who creates the account, for the audit log; none for the CLI. */
    actor?: AuditUser | null;
  }): Promise<UserSummary> {
    const email = options.email.trim().toLowerCase();
    const role = options.role ?? "member";
    const currency = (options.currency ?? "USD").toUpperCase();
    const problems = new ValidationErrors();
    if (!isValidEmail(email)) problems.add("Email is invalid");
    if (!isUserRole(role)) problems.add(`Role must be one of ${USER_ROLES.join(", ")}`);
    if (!isKnownCurrency(currency)) problems.add("Currency is not a valid ISO 4217 code");
    if (await this.findByEmail(email)) problems.add("Email has already been taken");
    if (options.password !== undefined && options.password.length < 12) problems.add("Password is too short (minimum is 12 characters)");
    problems.throwIfAny();
    const passwordHash = options.password === undefined ? null : await hashPassword(options.password);

    return this.sequelize.transaction(async (transaction) => {
      let familyId: string | null = null;
      if (options.familyOfEmail) {
        const member = await this.findByEmail(options.familyOfEmail);
        if (!member) throw new NotFoundError(`User ${options.familyOfEmail}`);
        familyId = member.familyId;
      }
      return this.insert(transaction, {
        email,
        role: role as UserRole,
        name: options.name ?? null,
        familyId,
        familyName: options.familyName,
        currency,
        aiEnabled: options.aiEnabled ?? false,
        passwordHash,
        actor: options.actor ?? null,
      });
    });
  }

  /**
   * Inserts a validated user (and a family of their own unless `familyId` is given) with its
   * `user.created` event, inside the caller's transaction: the CLI and admins through `create`, SSO
   * just-in-time provisioning directly (with the provider that vouched for the user).
   */
  async insert(
    transaction: Transaction,
    user: {
      /** Chosen by the caller when the new user is also the event's actor (SSO provisioning). */
      id?: string;
      email: string;
      role: UserRole;
      name: string | null;
      familyId: string | null;
      familyName?: string;
      currency?: string;
      aiEnabled?: boolean;
      passwordHash?: string | null;
      actor: AuditUser | null;
      provider?: string | null;
    },
  ): Promise<UserSummary> {
    let familyId = user.familyId;
    if (!familyId) {
      familyId = newId();
      await this.repository.insertFamily(
        { id: familyId, name: user.familyName ?? `${user.email}'s family`, currency: user.currency ?? "USD" },
        transaction,
      );
    }
    const created = await this.repository.insertUser(
      {
        id: user.id ?? newId(),
        familyId,
        email: user.email,
        role: user.role,
        name: user.name,
        aiEnabled: user.aiEnabled ?? false,
        passwordHash: user.passwordHash ?? null,
      },
      transaction,
    );
    await this.audit.record(transaction, {
      type: "user.created",
      user: user.actor,
      provider: user.provider ?? null,
      action: user.provider ? "provision" : "create",
      resource: { type: "user", id: created.id, label: user.email },
      changes: { role: { old: null, new: user.role }, password: { old: null, new: user.passwordHash ? "set" : null } },
    });
    return summarizeRow(created);
  }

  async findByEmail(email: string): Promise<UserSummary | null> {
    const user = await this.repository.byEmail(email);
    return user ? summarizeRow(user) : null;
  }

  async getById(id: string): Promise<UserSummary> {
    const user = isUuid(id) ? await this.repository.byId(id) : null;
    if (!user) throw new NotFoundError("User");
    return summarizeRow(user);
  }

  /**
   * The one way a user's role changes, by hand or from an identity provider's claims: inside the
   * caller's transaction, with its audit event (`changes.role` old → new), refusing to demote the last
   * active administrator. Open WebSocket connections of the user are closed after the commit, as they
   * were authorised under the old role. Returns whether the role changed (no event when it did not).
   */
  async changeRole(transaction: Transaction, user: { id: string }, newRole: string, options: RoleChangeOptions): Promise<boolean> {
    if (!isUserRole(newRole)) throw new ValidationError([`Role must be one of ${USER_ROLES.join(", ")}`]);
    const current = await this.repository.byId(user.id, transaction, true);
    if (!current) throw new NotFoundError("User");
    if (current.status === "deleted") throw new ConflictError("A deleted user cannot be changed");
    if (current.role === newRole) return false;
    if (current.role === "admin") await this.assertNotLastActiveAdministrator(transaction, current, "demoted");
    await this.repository.update(current.id, { role: newRole }, transaction);
    await this.audit.record(transaction, {
      type: options.eventType,
      user: options.actor,
      provider: options.provider ?? null,
      action: ROLE_PRIVILEGE[newRole] > ROLE_PRIVILEGE[current.role] ? "promote" : "demote",
      resource: { type: "user", id: current.id, label: current.email },
      changes: { role: { old: current.role, new: newRole } },
    });
    announceAccessEnded(this.events, transaction, { kind: "user", userId: current.id, reason: "role_changed" });
    return true;
  }

  /**
   * Refuses a change that would leave the instance without an active administrator: nobody could
   * manage users or providers any more. Holds the administrators' lock until the transaction ends.
   */
  async assertNotLastActiveAdministrator(transaction: Transaction, user: UserRow, verb: string): Promise<void> {
    if (user.role !== "admin" || user.status !== "active") return;
    await this.repository.lockAdministrators(transaction);
    const others = (await this.repository.activeAdministratorIds(transaction)).filter((id) => id !== user.id);
    if (others.length === 0) {
      throw new ConflictError(`The last active administrator cannot be ${verb}`, { details: { reason: "last_active_administrator" } });
    }
  }
}

/** The summary of a user row: what every user-returning operation answers. */
export function summarizeRow(row: UserRow): UserSummary {
  return {
    id: row.id,
    email: row.email,
    familyId: row.familyId,
    role: row.role,
    name: row.name,
    aiEnabled: row.aiEnabled,
    status: row.status,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    lockedUntil: row.lockedUntil ?? null,
    lastSignInAt: row.lastSignInAt ?? null,
    lastSignInMethod: row.lastSignInMethod ?? null,
  };
}
