import type { Sequelize } from "sequelize";
import { UnauthenticatedError } from "../../platform/common/errors";
import type { AuditService } from "../../audit/log";
import type { AuthRepository } from "./auth.repository";
import { verifyPassword } from "./password";
import type { OpenedSession, SessionService } from "./session.service";

export type LoginSettings = { maxFailures: number; lockoutSeconds: number };

/** One answer for every failed attempt, so the response never tells which e-mails have accounts. */
export const INVALID_LOGIN = "Invalid email or password";

/**
 * Local sign-in with an e-mail and password (the bootstrap admin; everyone else comes through SSO).
 * Each attempt is recorded, failures included, and repeated failures lock the account for a while.
 */
export class LoginService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: AuthRepository,
    private readonly audit: AuditService,
    private readonly sessions: SessionService,
    private readonly settings: LoginSettings,
  ) {}

  async login(email: string, password: string): Promise<OpenedSession> {
    // A failed attempt commits its audit event (and failure count) and then answers 401.
    const outcome = await this.sequelize.transaction(async (transaction): Promise<OpenedSession | UnauthenticatedError> => {
      const user = await this.repository.loginUser(email, transaction);
      const passwordMatches = await verifyPassword(password, user?.passwordHash ?? null);
      const fail = async (reason: string, message = INVALID_LOGIN) => {
        await this.audit.record(transaction, {
          type: "auth.login.failed",
          user: { id: user?.id ?? null, email: user?.email ?? email.trim().toLowerCase().slice(0, 320) },
          action: "login",
          error: reason,
        });
        return new UnauthenticatedError(message);
      };
      if (!user) return fail("unknown_user");
      if (user.lockedUntil && user.lockedUntil > new Date()) return fail("account_locked");
      if (!passwordMatches) {
        const locked = await this.repository.recordFailedLogin(
          user.id,
          this.settings.maxFailures,
          this.settings.lockoutSeconds,
          transaction,
        );
        return fail(locked ? "invalid_password; account locked" : "invalid_password");
      }
      if (user.status !== "active") return fail("account_inactive", "Your account has been deactivated");
      await this.repository.clearFailedLogins(user.id, transaction);
      const identity = { id: user.id, email: user.email };
      const session = await this.sessions.open(transaction, identity, { method: "password" });
      await this.audit.record(transaction, {
        type: "auth.login.success",
        user: identity,
        action: "login",
        sessionId: session.sessionId,
        resource: { type: "session", id: session.sessionId, label: "password" },
      });
      return session;
    });
    if (outcome instanceof UnauthenticatedError) throw outcome;
    return outcome;
  }
}
