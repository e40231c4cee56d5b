import type { CreationAttributes, Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import type { UserRole } from "../../platform/security/actor";
import type { UserStatus } from "../../platform/security/actor";
import { AuthSessionModel, AuthTokenModel } from "./auth-session.model";

export type TokenOwnerRow = {
  tokenId: string;
  kind: "access" | "refresh";
  tokenExpiresAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
  /** The sealed pair this refresh token was exchanged for (kept for the grace window). */
  successorSealed: string | null;
  sessionId: string;
  sessionExpiresAt: Date;
  sessionEndedAt: Date | null;
  userId: string;
  familyId: string;
  email: string;
  role: UserRole;
  status: UserStatus;
  aiEnabled: boolean;
};

export type LoginUserRow = {
  id: string;
  email: string;
  role: UserRole;
  status: UserStatus;
  passwordHash: string | null;
  failedLoginCount: number;
  lockedUntil: Date | null;
};

const OWNER_COLUMNS = `s.id AS "sessionId", s.expires_at AS "sessionExpiresAt", s.ended_at AS "sessionEndedAt",
  u.id AS "userId", u.family_id AS "familyId", u.email, u.role, u.status, u.ai_enabled AS "aiEnabled"`;

export class AuthRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async insertSession(session: CreationAttributes<AuthSessionModel>, transaction: Transaction): Promise<void> {
    await AuthSessionModel.create(session, { transaction });
  }

  async insertTokens(tokens: CreationAttributes<AuthTokenModel>[], transaction: Transaction): Promise<void> {
    await AuthTokenModel.bulkCreate(tokens, { transaction });
  }

  /** A token with its session and user, whatever its state (the service decides what a state means). */
  async tokenByHash(hash: Buffer, transaction?: Transaction, lock = false): Promise<TokenOwnerRow | null> {
    const [row] = await selectRows<TokenOwnerRow>(
      this.sequelize,
      `SELECT t.id AS "tokenId", t.kind, t.expires_at AS "tokenExpiresAt", t.rotated_at AS "rotatedAt", t.revoked_at AS "revokedAt",
              t.successor_sealed AS "successorSealed", ${OWNER_COLUMNS}
         FROM auth_tokens t JOIN auth_sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id
        WHERE t.token_hash = $1 ${lock ? "FOR UPDATE OF t, s" : ""}`,
      [hash],
      transaction,
    );
    return row ?? null;
  }

  async sessionBySecretHash(
    hash: Buffer,
  ): Promise<Omit<TokenOwnerRow, "tokenId" | "kind" | "tokenExpiresAt" | "rotatedAt" | "revokedAt" | "successorSealed"> | null> {
    const [row] = await selectRows<TokenOwnerRow>(
      this.sequelize,
      `SELECT ${OWNER_COLUMNS} FROM auth_sessions s JOIN users u ON u.id = s.user_id WHERE s.secret_hash = $1`,
      [hash],
    );
    return row ?? null;
  }

  async loginUser(email: string, transaction: Transaction): Promise<LoginUserRow | null> {
    const [row] = await selectRows<LoginUserRow>(
      this.sequelize,
      `SELECT id, email, role, status, password_hash AS "passwordHash", failed_login_count AS "failedLoginCount", locked_until AS "lockedUntil"
         FROM users WHERE lower(email) = lower($1) FOR UPDATE`,
      [email.trim()],
      transaction,
    );
    return row ?? null;
  }

  /** Ends the session unless already ended; true when this call ended it (so its event is recorded once). */
  async endSession(sessionId: string, reason: string, transaction: Transaction): Promise<boolean> {
    const [ended] = await this.sequelize.query(
      `UPDATE auth_sessions SET ended_at = now(), end_reason = $2 WHERE id = $1 AND ended_at IS NULL RETURNING id`,
      { bind: [sessionId, reason], transaction },
    );
    if ((ended as unknown[]).length === 0) return false;
    await this.sequelize.query(`UPDATE auth_tokens SET revoked_at = now() WHERE session_id = $1 AND revoked_at IS NULL`, {
      bind: [sessionId],
      transaction,
    });
    return true;
  }

  /** Ends every open session of the user and revokes all their tokens; returns the sessions ended. */
  async endUserSessions(userId: string, reason: string, transaction: Transaction): Promise<string[]> {
    const ended = await selectRows<{ id: string }>(
      this.sequelize,
      `UPDATE auth_sessions SET ended_at = now(), end_reason = $2 WHERE user_id = $1 AND ended_at IS NULL RETURNING id`,
      [userId, reason],
      transaction,
    );
    await this.sequelize.query(
      `UPDATE auth_tokens SET revoked_at = now()
        WHERE revoked_at IS NULL AND session_id IN (SELECT id FROM auth_sessions WHERE user_id = $1)`,
      { bind: [userId], transaction },
    );
    return ended.map((row) => row.id);
  }

  async revokeToken(tokenId: string, transaction: Transaction): Promise<boolean> {
    const [rows] = await this.sequelize.query(
      `UPDATE auth_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id`,
      {
        bind: [tokenId],
        transaction,
      },
    );
    return (rows as unknown[]).length > 0;
  }

  /** Marks a refresh token used, keeping the sealed pair it was exchanged for; false when another request used it first. */
  async markRotated(tokenId: string, successorSealed: string, transaction: Transaction): Promise<boolean> {
    const [rows] = await this.sequelize.query(
      `UPDATE auth_tokens SET rotated_at = clock_timestamp(), successor_sealed = $2
        WHERE id = $1 AND rotated_at IS NULL AND revoked_at IS NULL RETURNING id`,
      { bind: [tokenId, successorSealed], transaction },
    );
    return (rows as unknown[]).length > 0;
  }

  /** Forgets the pairs kept for refresh tokens whose grace window has passed. */
  async clearSuccessors(graceSeconds: number): Promise<void> {
    await this.sequelize.query(
      `UPDATE auth_tokens SET successor_sealed = NULL
        WHERE successor_sealed IS NOT NULL AND rotated_at < now() - make_interval(secs => $1)`,
      { bind: [graceSeconds] },
    );
  }

  async revokeAccessTokens(sessionId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE auth_tokens SET revoked_at = now() WHERE session_id = $1 AND kind = 'access' AND revoked_at IS NULL`,
      {
        bind: [sessionId],
        transaction,
      },
    );
  }

  async expiredOpenSessions(limit: number): Promise<Array<{ id: string; userId: string; email: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT s.id, s.user_id AS "userId", u.email FROM auth_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.ended_at IS NULL AND s.expires_at <= now() ORDER BY s.expires_at LIMIT $1`,
      [limit],
    );
  }

  async recordFailedLogin(userId: string, maxFailures: number, lockoutSeconds: number, transaction: Transaction): Promise<boolean> {
    const [row] = await selectRows<{ locked: boolean }>(
      this.sequelize,
      `UPDATE users SET
         failed_login_count = CASE WHEN failed_login_count + 1 >= $2 THEN 0 ELSE failed_login_count + 1 END,
         locked_until = CASE WHEN failed_login_count + 1 >= $2 THEN now() + make_interval(secs => $3) ELSE locked_until END
       WHERE id = $1 RETURNING locked_until > now() AS locked`,
      [userId, maxFailures, lockoutSeconds],
      transaction,
    );
    return row?.locked ?? false;
  }

  /** A session was opened for the user: when, and how (password, or sso and the provider's id). */
  async recordSignIn(userId: string, method: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE users SET last_sign_in_at = now(), last_sign_in_method = $2 WHERE id = $1`, {
      bind: [userId, method],
      transaction,
    });
  }

  async profile(userId: string): Promise<{ id: string; email: string; name: string | null; aiEnabled: boolean } | null> {
    const [row] = await selectRows<{ id: string; email: string; name: string | null; aiEnabled: boolean }>(
      this.sequelize,
      `SELECT id, email, name, ai_enabled AS "aiEnabled" FROM users WHERE id = $1`,
      [userId],
    );
    return row ?? null;
  }

  async clearFailedLogins(userId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE users SET failed_login_count = 0, locked_until = NULL WHERE id = $1`, {
      bind: [userId],
      transaction,
    });
  }
}
