import type { Sequelize } from "sequelize";
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
      let familyId: string;
      if (options.familyOfEmail) {
        const member = await this.findByEmail(options.familyOfEmail);
        if (!member) throw new NotFoundError(`User ${options.familyOfEmail}`);
        familyId = member.familyId;
      } else {
        familyId = newId();
        await FamilyModel.create({ id: familyId, name: options.familyName ?? `${email}'s family`, currency }, { transaction });
      }
      const user = await UserModel.create(
        {
          id: newId(),
          familyId,
          email,
          role: role as UserRole,
          name: options.name ?? null,
          aiEnabled: options.aiEnabled ?? false,
          passwordHash,
        },
        { transaction },
      );
      await this.audit.record(transaction, {
        type: "user.created",
        user: options.actor ?? null,
        action: "create",
        resource: { type: "user", id: user.id, label: email },
        changes: { role: { old: null, new: role }, password: { old: null, new: passwordHash ? "set" : null } },
      });
      return summarize(user);
    });
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
