import type { Sequelize, Transaction } from "sequelize";
import type { AuditService, AuditUser } from "../audit/audit.service";
import { hashPassword } from "../auth/password";
import { NotFoundError, ValidationErrors } from "../common/errors";
import { newId } from "../common/ids";
import { isKnownCurrency } from "../money/money";
import { FamilyModel } from "./family.model";
import { USER_ROLES, UserModel, type UserRole } from "./user.model";

export type UserSummary = { id: string; email: string; familyId: string; role: UserRole; name: string | null; aiEnabled: boolean };

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class UserService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly audit: AuditService,
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
    if (!EMAIL_PATTERN.test(email)) problems.add("Email is invalid");
    if (!(USER_ROLES as readonly string[]).includes(role)) problems.add(`Role must be one of ${USER_ROLES.join(", ")}`);
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
      await FamilyModel.create(
        { id: familyId, name: user.familyName ?? `${user.email}'s family`, currency: user.currency ?? "USD" },
        { transaction },
      );
    }
    const created = await UserModel.create(
      {
        id: user.id ?? newId(),
        familyId,
        email: user.email,
        role: user.role,
        name: user.name,
        aiEnabled: user.aiEnabled ?? false,
        passwordHash: user.passwordHash ?? null,
      },
      { transaction },
    );
    await this.audit.record(transaction, {
      type: "user.created",
      user: user.actor,
      provider: user.provider ?? null,
      action: user.provider ? "provision" : "create",
      resource: { type: "user", id: created.id, label: user.email },
      changes: { role: { old: null, new: user.role }, password: { old: null, new: user.passwordHash ? "set" : null } },
    });
    return summarize(created);
  }

  async findByEmail(email: string): Promise<UserSummary | null> {
    const user = await UserModel.findOne({
      where: this.sequelize.where(this.sequelize.fn("lower", this.sequelize.col("email")), email.trim().toLowerCase()),
    });
    return user ? summarize(user) : null;
  }

  async getById(id: string): Promise<UserSummary> {
    const user = await UserModel.findByPk(id);
    if (!user) throw new NotFoundError("User");
    return summarize(user);
  }
}

function summarize(user: UserModel): UserSummary {
  return { id: user.id, email: user.email, familyId: user.familyId, role: user.role, name: user.name ?? null, aiEnabled: user.aiEnabled };
}
