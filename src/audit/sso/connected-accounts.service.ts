import type { Sequelize, Transaction } from "sequelize";
import type { AuditService, AuditUser } from "../log";
import { ConflictError, NotFoundError } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import type { Actor } from "../../platform/security/actor";
import type { MappedClaims } from "./provider-settings";
import type { ConnectedAccountRow, SsoIdentityRow, SsoProviderRow, SsoRepository } from "./sso.repository";

export type ConnectedAccountView = ConnectedAccountRow;

/**
 * Connected accounts: the SSO identities a user signs in with. Connecting records
 * `account.connected`, and `account.linked` once the user has several; disconnecting records
 * `account.disconnected`, and `account.unlinked` when it leaves fewer than several. The last way to
 * sign in (no other identity, no password) cannot be removed.
 */
export class ConnectedAccountService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: SsoRepository,
    private readonly audit: AuditService,
  ) {}

  async list(userId: string): Promise<ConnectedAccountView[]> {
    return this.repository.connectedAccounts(userId);
  }

  async find(providerId: string, subject: string, transaction: Transaction): Promise<SsoIdentityRow | null> {
    return this.repository.lockIdentity(providerId, subject, transaction);
  }

  /** Ties a provider identity to a user, inside the caller's transaction (a login or a link). */
  async connect(
    transaction: Transaction,
    user: { id: string; email: string },
    provider: SsoProviderRow,
    claims: MappedClaims,
    actor: AuditUser,
  ): Promise<SsoIdentityRow> {
    await this.lockUser(user.id, transaction);
    const identity = await this.repository.insertIdentity(
      { id: newId(), userId: user.id, providerId: provider.id, subject: claims.subject, email: claims.email, lastLoginAt: null },
      transaction,
    );
    const count = await this.repository.countIdentitiesOfUser(user.id, transaction);
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
      await this.repository.deleteIdentity(account.id, transaction);
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
    const user = await this.repository.lockUserSignIn(userId, transaction);
    if (!user) throw new NotFoundError("User");
    return user.hasPassword;
  }
}
