import type { CreationAttributes, Sequelize, Transaction } from "sequelize";
import { bindParam, readRows } from "../../platform/common/sql";
import { ApiKeyModel } from "./api-key.model";
import { type ApiKeyScope } from "../../platform/security/actor";
import type { UserRole } from "../../platform/security/actor";
import type { UserStatus } from "./user.model";

export type ApiKeyRow = {
  id: string;
  name: string;
  displayPrefix: string;
  scope: ApiKeyScope;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
};

/** A live key with its owner, as authentication needs it. */
export type KeyOwnerRow = {
  keyId: string;
  scope: ApiKeyScope;
  lastUsedAt: Date | null;
  /** When the key stops working by itself; null: never. */
  expiresAt: Date | null;
  userId: string;
  familyId: string;
  email: string;
  role: UserRole;
  status: UserStatus;
  aiEnabled: boolean;
};

export type ExpiredKeyRow = { id: string; name: string; expiresAt: Date; userId: string; email: string };

function toRow(record: ApiKeyModel): ApiKeyRow {
  return {
    id: record.id,
    name: record.name,
    displayPrefix: record.displayPrefix,
    scope: record.scope,
    lastUsedAt: record.lastUsedAt ?? null,
    expiresAt: record.expiresAt ?? null,
    revokedAt: record.revokedAt ?? null,
    createdAt: record.createdAt,
  };
}

export class ApiKeyRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async insert(key: CreationAttributes<ApiKeyModel>, transaction?: Transaction): Promise<ApiKeyRow> {
    return toRow(await ApiKeyModel.create(key, { transaction }));
  }

  async listForUser(userId: string): Promise<ApiKeyRow[]> {
    const records = await ApiKeyModel.findAll({ where: { userId }, order: [["createdAt", "DESC"]] });
    return records.map(toRow);
  }

  /** Key `id`, only among `ownerUserId`'s keys when given. */
  async byId(id: string, ownerUserId?: string, transaction?: Transaction): Promise<ApiKeyRow | null> {
    const record = await ApiKeyModel.findOne({
      where: ownerUserId ? { id, userId: ownerUserId } : { id },
      transaction,
      lock: transaction ? true : undefined,
    });
    return record ? toRow(record) : null;
  }

  /** Marks the key revoked now; returns when. */
  async markRevoked(id: string, transaction?: Transaction): Promise<Date> {
    const revokedAt = new Date();
    await ApiKeyModel.update({ revokedAt }, { where: { id }, transaction });
    return revokedAt;
  }

  /** Deletes keys revoked or expired more than `retentionDays` ago; how many. */
  async pruneRetired(retentionDays: number): Promise<number> {
    const [, result] = await this.sequelize.query(
      `DELETE FROM api_keys WHERE revoked_at < now() - make_interval(days => $1) OR expires_at < now() - make_interval(days => $1)`,
      { bind: [retentionDays] },
    );
    return (result as { rowCount?: number }).rowCount ?? 0;
  }

  /** The live key with this hash and its owner. One indexed read. */
  async liveOwner(keyHash: Buffer): Promise<KeyOwnerRow | null> {
    const [row] = await readRows<KeyOwnerRow>(
      this.sequelize,
      `SELECT k.id AS "keyId", k.scope, k.last_used_at AS "lastUsedAt", k.expires_at AS "expiresAt",
              u.id AS "userId", u.family_id AS "familyId", u.email, u.role, u.status, u.ai_enabled AS "aiEnabled"
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
      [keyHash],
    );
    return row ?? null;
  }

  /** Keys past their expiry whose expiry is not recorded yet (not revoked ones: their end is recorded), with their owner. */
  expiredUnrecorded(limit: number, keyHash?: Buffer): Promise<ExpiredKeyRow[]> {
    const bind: unknown[] = [];
    const ofKey = keyHash ? `AND k.key_hash = ${bindParam(bind, keyHash)}` : "";
    return readRows<ExpiredKeyRow>(
      this.sequelize,
      `SELECT k.id, k.name, k.expires_at AS "expiresAt", u.id AS "userId", u.email
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.expires_at IS NOT NULL AND k.expiry_recorded_at IS NULL AND k.revoked_at IS NULL AND k.expires_at <= now() ${ofKey}
        ORDER BY k.expires_at LIMIT ${bindParam(bind, limit)}`,
      bind,
    );
  }

  /** Claims the recording of a key's expiry; false when another process recorded it first. */
  async markExpiryRecorded(id: string, transaction: Transaction): Promise<boolean> {
    const [rows] = await this.sequelize.query(
      "UPDATE api_keys SET expiry_recorded_at = now() WHERE id = $1 AND expiry_recorded_at IS NULL AND revoked_at IS NULL RETURNING id",
      { bind: [id], transaction },
    );
    return (rows as unknown[]).length > 0;
  }

  async touch(keyId: string): Promise<void> {
    await this.sequelize.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", { bind: [keyId] });
  }
}
