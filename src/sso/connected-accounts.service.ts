import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { AuditService, AuditUser } from "../audit/audit.service";
import { ConflictError, NotFoundError } from "../common/errors";
import { isUuid, newId } from "../common/ids";
import type { Actor } from "../identity/actor";
import type { MappedClaims } from "./provider-settings";
import { SsoIdentityModel, type SsoProviderModel } from "./sso.model";

export type ConnectedAccountView = {
  id: string;
  providerId: string;
  providerSlug: string;
  providerName: string;
  subject: string;
  email: string | null;
  createdAt: Date;
  lastLoginAt: Date | null;
};

/**
 * Connected accounts: the SSO identities a user signs in with. Connecting records
 * `account.connected`, and `account.linked` once the user has several; disconnecting records
 * `account.disconnected`, and `account.unlinked` when it leaves fewer than several. The last way to
 * sign in (no other identity, no password) cannot be removed.
 */
export class ConnectedAccountService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly audit: AuditService,
  ) {}

  async list(userId: string): Promise<ConnectedAccountView[]> {
    return this.sequelize.query<ConnectedAccountView>(
      `SELECT i.id, i.provider_id AS "providerId", p.slug AS "providerSlug", p.name AS "providerName", i.subject, i.email,
              i.created_at AS "createdAt", i.last_login_at AS "lastLoginAt"
         FROM sso_identities i JOIN sso_providers p ON p.id = i.provider_id
        WHERE i.user_id = $1 ORDER BY i.created_at, i.id`,
      { bind: [userId], type: QueryTypes.SELECT },
    );
  }

  async find(providerId: string, subject: string, transaction: Transaction): Promise<SsoIdentityModel | null> {
    return SsoIdentityModel.findOne({ where: { providerId, subject }, transaction, lock: transaction.LOCK.UPDATE });
  }

  /** Ties a provider identity to a user, inside the caller's transaction (a login or a link). */
  async connect(
    transaction: Transaction,
    user: { id: string; email: string },
    provider: SsoProviderModel,
    claims: MappedClaims,
    actor: AuditUser,
  ): Promise<SsoIdentityModel> {
    await this.lockUser(user.id, transaction);
    const identity = await SsoIdentityModel.create(
      { id: newId(), userId: user.id, providerId: provider.id, subject: claims.subject, email: claims.email, lastLoginAt: null },
      { transaction },
    );
    const count = await SsoIdentityModel.count({ where: { userId: user.id }, transaction });
    const resource = { type: "connected_account", id: identity.id, label: `${provider.slug}:${claims.email ?? claims.subject}` };
    const target = { old: null, new: { provider: provider.slug, subject: claims.subject, user: user.id } };
    await this.audit.record(transaction, {
      type: "account.connected",
      user: actor,
      provider: provider.id,
      action: "connect",
      resource,
      changes: { identity: target },
    });
    if (count >= 2) {
      await this.audit.record(transaction, {
        type: "account.linked",
        user: actor,
        provider: provider.id,
        action: "link",
        resource,
        changes: { connectedAccounts: { old: count - 1, new: count } },
      });
    }
    return identity;
  }

  /** Removes one of the actor's own connected accounts, unless it is their last way to sign in. */
  async disconnect(actor: Actor, identityId: string): Promise<ConnectedAccountView> {
    return this.sequelize.transaction(async (transaction) => {
      const hasPassword = await this.lockUser(actor.userId, transaction);
      const accounts = await this.list(actor.userId);
      const account = isUuid(identityId) ? accounts.find((candidate) => candidate.id === identityId) : undefined;
      if (!account) throw new NotFoundError("Connected account");
      if (accounts.length === 1 && !hasPassword) {
        throw new ConflictError("This is your last way to sign in: connect another account or set a password first");
      }
      await SsoIdentityModel.destroy({ where: { id: account.id }, transaction });
      const user = { id: actor.userId, email: actor.email };
      const resource = { type: "connected_account", id: account.id, label: `${account.providerSlug}:${account.email ?? account.subject}` };
      await this.audit.record(transaction, {
        type: "account.disconnected",
        user,
        provider: account.providerId,
        action: "disconnect",
        resource,
        changes: { identity: { old: { provider: account.providerSlug, subject: account.subject, user: actor.userId }, new: null } },
      });
      if (accounts.length >= 2) {
        await this.audit.record(transaction, {
          type: "account.unlinked",
          user,
          provider: account.providerId,
          action: "unlink",
          resource,
          changes: { connectedAccounts: { old: accounts.length, new: accounts.length - 1 } },
        });
      }
      return account;
    });
  }

  /** Serialises changes to one user's sign-in methods; answers whether the user has a password. */
  private async lockUser(userId: string, transaction: Transaction): Promise<boolean> {
    const rows = await this.sequelize.query<{ hasPassword: boolean }>(
      `SELECT password_hash IS NOT NULL AS "hasPassword" FROM users WHERE id = $1 FOR UPDATE`,
      { bind: [userId], type: QueryTypes.SELECT, transaction },
    );
    if (!rows[0]) throw new NotFoundError("User");
    return rows[0].hasPassword;
  }
}
