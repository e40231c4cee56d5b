import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import { digest } from "./sso-login-request.repository";

export type MobileCodeKind = "tokens" | "link";

export type MobileCodeRow = {
  kind: MobileCodeKind;
  providerId: string | null;
  userId: string | null;
  device: Record<string, string>;
  payloadSealed: string;
  expiresAt: Date;
};

const COLUMNS = `kind, provider_id AS "providerId", user_id AS "userId", device, payload_sealed AS "payloadSealed", expires_at AS "expiresAt"`;

/**
 * The one-time codes the mobile app's SSO hands to its deep link: only their SHA-256 is stored, what
 * they stand for is sealed (SecretBox), and `take` deletes as it reads, so each code works once.
 */
export class MobileSsoCodeRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async create(code: string, row: Omit<MobileCodeRow, "expiresAt">, ttlSeconds: number, transaction?: Transaction): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO mobile_sso_codes (code_hash, kind, provider_id, user_id, device, payload_sealed, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
      {
        bind: [digest(code), row.kind, row.providerId, row.userId, JSON.stringify(row.device), row.payloadSealed, ttlSeconds],
        transaction,
      },
    );
  }

  async peek(code: string, kind: MobileCodeKind): Promise<MobileCodeRow | null> {
    const rows = await this.sequelize.query<MobileCodeRow>(
      `SELECT ${COLUMNS} FROM mobile_sso_codes WHERE code_hash = $1 AND kind = $2 AND expires_at > now()`,
      { bind: [digest(code), kind], type: QueryTypes.SELECT },
    );
    return rows[0] ?? null;
  }

  /** Removes and returns a live code of that kind, or null (unknown, expired, or already used). */
  async take(code: string, kind: MobileCodeKind, transaction?: Transaction): Promise<MobileCodeRow | null> {
    const rows = await this.sequelize.query<MobileCodeRow>(
      `DELETE FROM mobile_sso_codes WHERE code_hash = $1 AND kind = $2 RETURNING ${COLUMNS}`,
      { bind: [digest(code), kind], type: QueryTypes.SELECT, transaction },
    );
    const row = rows[0];
    return row && row.expiresAt > new Date() ? row : null;
  }

  async sweepExpired(): Promise<number> {
    const [, result] = await this.sequelize.query(`DELETE FROM mobile_sso_codes WHERE expires_at <= now()`);
    return (result as { rowCount: number }).rowCount;
  }
}
