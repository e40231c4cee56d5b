import type { Sequelize, Transaction } from "sequelize";
import { newId } from "../../platform/common/ids";
import { selectRows } from "../../platform/common/sql";

export type OtpRow = { id: string; email: string; otpSecretSealed: string | null; otpEnabledAt: Date | null; otpLastStep: string | null };

/** A user's TOTP state (on `users`) and their recovery codes' hashes (`user_recovery_codes`). */
export class TwoFactorRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async row(userId: string, transaction?: Transaction, lock = false): Promise<OtpRow | null> {
    const [row] = await selectRows<OtpRow>(
      this.sequelize,
      `SELECT id, email, otp_secret_sealed AS "otpSecretSealed", otp_enabled_at AS "otpEnabledAt", otp_last_step AS "otpLastStep"
         FROM users WHERE id = $1 ${lock ? "FOR UPDATE" : ""}`,
      [userId],
      transaction,
    );
    return row ?? null;
  }

  async recoveryCodesLeft(userId: string): Promise<number> {
    const [row] = await selectRows<{ count: string }>(
      this.sequelize,
      `SELECT count(*) AS count FROM user_recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
      [userId],
    );
    return Number(row?.count ?? 0);
  }

  /** A new pending secret, unless the factor is already on. */
  async setPendingSecret(userId: string, sealed: string, transaction?: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE users SET otp_secret_sealed = $2, otp_last_step = NULL WHERE id = $1 AND otp_enabled_at IS NULL`, {
      bind: [userId, sealed],
      transaction,
    });
  }

  async enable(userId: string, step: number, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE users SET otp_enabled_at = now(), otp_last_step = $2 WHERE id = $1`, {
      bind: [userId, step],
      transaction,
    });
  }

  async recordStep(userId: string, step: number, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE users SET otp_last_step = $2 WHERE id = $1`, { bind: [userId, step], transaction });
  }

  async clear(userId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE users SET otp_secret_sealed = NULL, otp_enabled_at = NULL, otp_last_step = NULL WHERE id = $1`, {
      bind: [userId],
      transaction,
    });
    await this.sequelize.query(`DELETE FROM user_recovery_codes WHERE user_id = $1`, { bind: [userId], transaction });
  }

  async replaceRecoveryCodes(userId: string, hashes: Buffer[], transaction: Transaction): Promise<void> {
    await this.sequelize.query(`DELETE FROM user_recovery_codes WHERE user_id = $1`, { bind: [userId], transaction });
    for (const hash of hashes) {
      await this.sequelize.query(`INSERT INTO user_recovery_codes (id, user_id, code_hash) VALUES ($1, $2, $3)`, {
        bind: [newId(), userId, hash],
        transaction,
      });
    }
  }

  /** Marks an unused recovery code used; false when there is none with that hash. */
  async useRecoveryCode(userId: string, hash: Buffer, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `UPDATE user_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id`,
      [userId, hash],
      transaction,
    );
    return rows.length > 0;
  }
}
