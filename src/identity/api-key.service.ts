import { createHash, randomBytes } from "node:crypto";
import type { Sequelize } from "sequelize";
import { NotFoundError, UnauthenticatedError, ValidationErrors } from "../common/errors";
import { isUuid, newId } from "../common/ids";
import { Topic } from "../events/catalogue";
import { readRows } from "../common/sql";
import type { EventBus } from "../events/event-bus";
import type { Actor } from "./actor";
import { API_KEY_SCOPES, ApiKeyModel, type ApiKeyScope } from "./api-key.model";
import type { UserRole, UserStatus } from "./user.model";

const KEY_PREFIX = "fgk_";
/** last_used_at is refreshed at most this often, so authentication stays a single read per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export type ApiKeySummary = {
  id: string;
  name: string;
  displayPrefix: string;
  scope: ApiKeyScope;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
};

export type CreatedApiKey = { apiKey: ApiKeySummary; plaintext: string };

export function hashApiKey(plaintext: string): Buffer {
  return createHash("sha256").update(plaintext).digest();
}

type KeyOwnerRow = {
  keyId: string;
  scope: ApiKeyScope;
  lastUsedAt: Date | null;
  userId: string;
  familyId: string;
  email: string;
  role: UserRole;
  status: UserStatus;
  aiEnabled: boolean;
};

export class ApiKeyService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly events: EventBus,
  ) {}

  async create(userId: string, options: { scope: string; name?: string | null; expiresAt?: Date | null }): Promise<CreatedApiKey> {
    const problems = new ValidationErrors();
    if (!(API_KEY_SCOPES as readonly string[]).includes(options.scope)) problems.add("Scope must be one of read, read_write");
    const name = options.name?.trim() || "API key";
    if (name.length > 100) problems.add("Name is too long (maximum is 100 characters)");
    if (options.expiresAt && options.expiresAt.getTime() <= Date.now()) problems.add("Expires at must be in the future");
    problems.throwIfAny();

    // 32 random bytes: a key is a bearer secret, so it must be unguessable; only its hash is kept.
    const plaintext = KEY_PREFIX + randomBytes(32).toString("base64url");
    const record = await ApiKeyModel.create({
      id: newId(),
      userId,
      name,
      keyHash: hashApiKey(plaintext),
      displayPrefix: plaintext.slice(0, KEY_PREFIX.length + 6),
      scope: options.scope as ApiKeyScope,
      expiresAt: options.expiresAt ?? null,
    });
    return { apiKey: summarize(record), plaintext };
  }

  async listForUser(userId: string): Promise<ApiKeySummary[]> {
    const records = await ApiKeyModel.findAll({ where: { userId }, order: [["createdAt", "DESC"]] });
    return records.map(summarize);
  }

  /** Revokes one of the actor's own keys; another user's key id answers as unknown. */
  async revokeOwn(actor: Actor, id: string): Promise<ApiKeySummary> {
    return this.revoke(id, actor.userId);
  }

  async revoke(id: string, ownerUserId?: string): Promise<ApiKeySummary> {
    if (!isUuid(id)) throw new NotFoundError("API key");
    const record = await ApiKeyModel.findOne({ where: ownerUserId ? { id, userId: ownerUserId } : { id } });
    if (!record) throw new NotFoundError("API key");
    if (!record.revokedAt) {
      await record.update({ revokedAt: new Date() });
      this.events.publish(Topic.AccessEnded, { kind: "api_key", apiKeyId: record.id, reason: "revoked" });
    }
    return summarize(record);
  }

  /**
   * Deletes keys revoked or expired more than `retentionDays` ago: a dead credential's hash has no use
   * left, and keeping less is safer.
   */
  async pruneRetired(retentionDays = 90): Promise<number> {
    const [, result] = await this.sequelize.query(
      `DELETE FROM api_keys WHERE revoked_at < now() - make_interval(days => $1) OR expires_at < now() - make_interval(days => $1)`,
      { bind: [retentionDays] },
    );
    return (result as { rowCount?: number }).rowCount ?? 0;
  }

  /** Resolves a presented key to its actor, or throws 401. One indexed read on the hash. */
  async authenticate(plaintext: string): Promise<Actor> {
    if (!plaintext.startsWith(KEY_PREFIX)) throw new UnauthenticatedError();
    const [row] = await readRows<KeyOwnerRow>(
      this.sequelize,
      `SELECT k.id AS "keyId", k.scope, k.last_used_at AS "lastUsedAt",
              u.id AS "userId", u.family_id AS "familyId", u.email, u.role, u.status, u.ai_enabled AS "aiEnabled"
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
      [hashApiKey(plaintext)],
    );
    if (!row) throw new UnauthenticatedError();
    if (row.status !== "active") throw new UnauthenticatedError("Your account has been deactivated");
    if (!row.lastUsedAt || Date.now() - new Date(row.lastUsedAt).getTime() > LAST_USED_RESOLUTION_MS) {
      this.touch(row.keyId);
    }
    return {
      userId: row.userId,
      familyId: row.familyId,
      email: row.email,
      role: row.role,
      scope: row.scope,
      aiEnabled: row.aiEnabled,
      credential: { kind: "api_key", id: row.keyId },
    };
  }

  private touch(keyId: string): void {
    // Off the request's critical path: a lost update of a usage timestamp harms nothing.
    this.sequelize.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", { bind: [keyId] }).catch(() => undefined);
  }
}

function summarize(record: ApiKeyModel): ApiKeySummary {
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
