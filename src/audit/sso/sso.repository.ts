import { QueryTypes, type CreationAttributes, type InferAttributes, type Sequelize, type Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import { SsoIdentityModel, SsoProviderModel } from "./sso.model";

export type SsoProviderRow = InferAttributes<SsoProviderModel>;
export type SsoIdentityRow = InferAttributes<SsoIdentityModel>;

/** The settings an administrator sets on a provider (everything but its id and timestamps). */
export type SsoProviderSettings = Omit<SsoProviderRow, "id" | "createdAt" | "updatedAt">;

export type ConnectedAccountRow = {
  id: string;
  providerId: string;
  providerSlug: string;
  providerName: string;
  subject: string;
  email: string | null;
  createdAt: Date;
  lastLoginAt: Date | null;
};

/** SSO providers, the identities tied to users, and the SSO side of sessions (for RP-initiated logout). */
export class SsoRepository {
  constructor(private readonly sequelize: Sequelize) {}

  // ---- providers -------------------------------------------------------------------------------------

  listProviders(): Promise<SsoProviderRow[]> {
    return SsoProviderModel.findAll({ order: [["createdAt", "ASC"]], raw: true });
  }

  providerBySlug(slug: string): Promise<SsoProviderRow | null> {
    return SsoProviderModel.findOne({ where: { slug }, raw: true });
  }

  providerById(id: string, transaction?: Transaction): Promise<SsoProviderRow | null> {
    return SsoProviderModel.findByPk(id, { transaction, raw: true });
  }

  /** The provider, row-locked until the transaction ends. */
  lockProvider(id: string, transaction: Transaction): Promise<SsoProviderRow | null> {
    return SsoProviderModel.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE, raw: true });
  }

  async insertProvider(provider: CreationAttributes<SsoProviderModel>, transaction: Transaction): Promise<SsoProviderRow> {
    return (await SsoProviderModel.create(provider, { transaction })).get({ plain: true });
  }

  async updateProvider(id: string, changes: Partial<SsoProviderSettings>, transaction: Transaction): Promise<SsoProviderRow> {
    const [, rows] = await SsoProviderModel.update(changes, { where: { id }, transaction, returning: true });
    return rows[0].get({ plain: true });
  }

  async deleteProvider(id: string, transaction: Transaction): Promise<void> {
    await SsoProviderModel.destroy({ where: { id }, transaction });
  }

  async slugTaken(slug: string): Promise<boolean> {
    return (await SsoProviderModel.count({ where: { slug } })) > 0;
  }

  async familyExists(familyId: string): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(this.sequelize, "SELECT id FROM families WHERE id = $1", [familyId]);
    return rows.length > 0;
  }

  // ---- identities (connected accounts) ---------------------------------------------------------------

  async identitiesOfProvider(providerId: string, transaction: Transaction): Promise<number> {
    const [row] = await selectRows<{ count: number }>(
      this.sequelize,
      `SELECT count(*)::int AS count FROM sso_identities WHERE provider_id = $1`,
      [providerId],
      transaction,
    );
    return row.count;
  }

  connectedAccounts(userId: string, transaction?: Transaction): Promise<ConnectedAccountRow[]> {
    return selectRows<ConnectedAccountRow>(
      this.sequelize,
      `SELECT i.id, i.provider_id AS "providerId", p.slug AS "providerSlug", p.name AS "providerName", i.subject, i.email,
              i.created_at AS "createdAt", i.last_login_at AS "lastLoginAt"
         FROM sso_identities i JOIN sso_providers p ON p.id = i.provider_id
        WHERE i.user_id = $1 ORDER BY i.created_at, i.id`,
      [userId],
      transaction,
    );
  }

  /** The identity of `subject` at the provider, row-locked until the transaction ends. */
  lockIdentity(providerId: string, subject: string, transaction: Transaction): Promise<SsoIdentityRow | null> {
    return SsoIdentityModel.findOne({ where: { providerId, subject }, transaction, lock: transaction.LOCK.UPDATE, raw: true });
  }

  async insertIdentity(identity: CreationAttributes<SsoIdentityModel>, transaction: Transaction): Promise<SsoIdentityRow> {
    return (await SsoIdentityModel.create(identity, { transaction })).get({ plain: true });
  }

  countIdentitiesOfUser(userId: string, transaction: Transaction): Promise<number> {
    return SsoIdentityModel.count({ where: { userId }, transaction });
  }

  async deleteIdentity(id: string, transaction: Transaction): Promise<void> {
    await SsoIdentityModel.destroy({ where: { id }, transaction });
  }

  async recordIdentityLogin(providerId: string, subject: string, email: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE sso_identities SET last_login_at = now(), email = $3 WHERE provider_id = $1 AND subject = $2`, {
      bind: [providerId, subject, email],
      transaction,
    });
  }

  /**
   * Serialises changes to one user's sign-in methods (a row lock on the user); answers whether the
   * user has a password, or null when there is no such user.
   */
  async lockUserSignIn(userId: string, transaction: Transaction): Promise<{ hasPassword: boolean } | null> {
    const rows = await this.sequelize.query<{ hasPassword: boolean }>(
      `SELECT password_hash IS NOT NULL AS "hasPassword" FROM users WHERE id = $1 FOR UPDATE`,
      { bind: [userId], type: QueryTypes.SELECT, transaction },
    );
    return rows[0] ?? null;
  }

  // ---- SSO sessions ----------------------------------------------------------------------------------

  async insertSession(sessionId: string, providerId: string, idTokenEncrypted: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`INSERT INTO sso_sessions (session_id, provider_id, id_token_encrypted) VALUES ($1, $2, $3)`, {
      bind: [sessionId, providerId, idTokenEncrypted],
      transaction,
    });
  }

  async sessionOf(sessionId: string): Promise<{ providerId: string | null; idTokenEncrypted: string } | null> {
    const [row] = await selectRows<{ providerId: string | null; idTokenEncrypted: string }>(
      this.sequelize,
      `SELECT provider_id AS "providerId", id_token_encrypted AS "idTokenEncrypted" FROM sso_sessions WHERE session_id = $1`,
      [sessionId],
    );
    return row ?? null;
  }
}
