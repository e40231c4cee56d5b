import { createHash, randomBytes } from "node:crypto";
import { QueryTypes, type Sequelize } from "sequelize";

/** Authorization requests are answered within minutes or not at all. */
export const LOGIN_REQUEST_TTL_SECONDS = 600;

export type LoginPurpose = "login" | "link" | "test" | "mobile";

export type LoginRequestRow = {
  providerId: string;
  purpose: LoginPurpose;
  userId: string | null;
  nonce: string;
  codeVerifierEncrypted: string;
  returnTo: string | null;
  browserHash: Buffer | null;
  /** The mobile app's device (purpose "mobile"); `returnTo` is then its deep link. */
  device?: Record<string, string> | null;
  expiresAt: Date;
};

export function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

export function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Authorization requests in flight. Rows are keyed by the SHA-256 of their `state` and bound to the
 * browser that started them by the SHA-256 of a cookie, so neither value is usable from a database
 * dump; `take` deletes as it reads, so each request completes at most once.
 */
export class SsoLoginRequestRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(state: string, row: Omit<LoginRequestRow, "expiresAt">): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO sso_login_requests (state_hash, browser_hash, provider_id, purpose, user_id, nonce, code_verifier_encrypted, return_to, expires_at, device)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9), $10)`,
      {
        bind: [
          digest(state),
          row.browserHash,
          row.providerId,
          row.purpose,
          row.userId,
          row.nonce,
          row.codeVerifierEncrypted,
          row.returnTo,
          LOGIN_REQUEST_TTL_SECONDS,
          row.device ? JSON.stringify(row.device) : null,
        ],
      },
    );
  }

  /** Binds an administrator's test request, created without a browser, to the browser that opens it (once). */
  async bindTest(
    state: string,
    providerId: string,
    browserHash: Buffer,
  ): Promise<Pick<LoginRequestRow, "nonce" | "codeVerifierEncrypted"> | null> {
    const rows = await this.sequelize.query<Pick<LoginRequestRow, "nonce" | "codeVerifierEncrypted">>(
      `UPDATE sso_login_requests SET browser_hash = $3
        WHERE state_hash = $1 AND provider_id = $2 AND purpose = 'test' AND browser_hash IS NULL AND expires_at > now()
       RETURNING nonce, code_verifier_encrypted AS "codeVerifierEncrypted"`,
      { bind: [digest(state), providerId, browserHash], type: QueryTypes.SELECT },
    );
    return rows[0] ?? null;
  }

  /** Removes and returns the live request for a state, or null. */
  async take(state: string): Promise<LoginRequestRow | null> {
    const rows = await this.sequelize.query<LoginRequestRow>(
      `DELETE FROM sso_login_requests WHERE state_hash = $1
       RETURNING provider_id AS "providerId", purpose, user_id AS "userId", nonce, code_verifier_encrypted AS "codeVerifierEncrypted",
                 return_to AS "returnTo", browser_hash AS "browserHash", expires_at AS "expiresAt", device`,
      { bind: [digest(state)], type: QueryTypes.SELECT },
    );
    const row = rows[0];
    return row && row.expiresAt > new Date() ? row : null;
  }

  async sweepExpired(): Promise<number> {
    const [, result] = await this.sequelize.query(`DELETE FROM sso_login_requests WHERE expires_at <= now()`);
    return (result as { rowCount: number }).rowCount;
  }
}
