import { createHash, randomBytes } from "node:crypto";
import type { Sequelize } from "sequelize";
import type { AuditService } from "../../audit/log";
import { NotFoundError, UnauthenticatedError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { Topic } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import type { Actor } from "../../platform/security/actor";
import { API_KEY_SCOPES, type ApiKeyScope } from "../../platform/security/actor";
import type { ApiKeyRepository, ApiKeyRow, ExpiredKeyRow } from "./api-key.repository";

const KEY_PREFIX = "fgk_";
/** last_used_at is refreshed at most this often, so authentication stays a single read per request. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys whose expiry the sweep records per read. */
const EXPIRY_SWEEP_BATCH = 100;
/** Live keys remembered at most; the oldest is forgotten first. Only keys that authenticated are kept, so guessing fills nothing. */
const OWNER_CACHE_MAX = 10_000;

type CachedOwner = { actor: Actor; until: number; expiresAtMs: number | null; touchedAtMs: number };

export type ApiKeySummary = ApiKeyRow;

export type CreatedApiKey = { apiKey: ApiKeySummary; plaintext: string };

export function hashApiKey(plaintext: string): Buffer {
  return createHash("sha256").update(plaintext).digest();
}

/**
 * A live key's owner is remembered in its process for `cacheMs` (API_KEY_CACHE_MS), so a client's
 * requests do not each read the key and its user. Short, as a backstop only: every change that matters
 * evicts at once in every process (Topic.AccessEnded: revoked, suspended, deleted, role changed;
 * Topic.UserChanged: e-mail, AI access), and an expiry is checked against the remembered expires_at on
 * every request. What the lifetime bounds is a change made behind the service's back (SQL typed into
 * the database) or an event lost while the bus was reconnecting.
 */
export class ApiKeyService {
  /** Live keys' owners by key hash (base64), each for `cacheMs`. */
  private readonly owners = new Map<string, CachedOwner>();
  /** Bumped by every eviction: a read that began before one must not remember what it read. */
  private evictions = 0;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: ApiKeyRepository,
    private readonly audit: AuditService,
    private readonly events: EventBus,
    private readonly cacheMs: number,
  ) {
    void this.forgetOnAccessEnded();
    void this.forgetOnUserChanged();
  }

  private async forgetOnAccessEnded(): Promise<void> {
    for await (const message of this.events.subscribe(Topic.AccessEnded)) {
      if (message.kind === "api_key") this.forget((owner) => owner.actor.credential.id === message.apiKeyId);
      else if (message.kind === "user") this.forget((owner) => owner.actor.userId === message.userId);
    }
  }

  private async forgetOnUserChanged(): Promise<void> {
    for await (const message of this.events.subscribe(Topic.UserChanged)) this.forget((owner) => owner.actor.userId === message.userId);
  }

  private forget(matches: (owner: CachedOwner) => boolean): void {
    this.evictions += 1;
    for (const [hash, owner] of this.owners) if (matches(owner)) this.owners.delete(hash);
  }

  /**
   * Issues a key to `userId` and records `auth.api_key.created` in the same transaction, naming `by`
   * (the caller; null for the command line, whose origin the event carries).
   */
  async create(
    userId: string,
    options: { scope: string; name?: string | null; expiresAt?: Date | null },
    by: Actor | null = null,
  ): Promise<CreatedApiKey> {
    const problems = new ValidationErrors();
    if (!(API_KEY_SCOPES as readonly string[]).includes(options.scope)) problems.add("Scope must be one of read, read_write");
    const name = options.name?.trim() || "API key";
    if (name.length > 100) problems.add("Name is too long (maximum is 100 characters)");
    if (options.expiresAt && options.expiresAt.getTime() <= Date.now()) problems.add("Expires at must be in the future");
    problems.throwIfAny();

    // 32 random bytes: a key is a bearer secret, so it must be unguessable; only its hash is kept.
    const plaintext = KEY_PREFIX + randomBytes(32).toString("base64url");
    const apiKey = await this.sequelize.transaction(async (transaction) => {
      const row = await this.repository.insert(
        {
          id: newId(),
          userId,
          name,
          keyHash: hashApiKey(plaintext),
          displayPrefix: plaintext.slice(0, KEY_PREFIX.length + 6),
          scope: options.scope as ApiKeyScope,
          expiresAt: options.expiresAt ?? null,
        },
        transaction,
      );
      await this.audit.record(transaction, {
        type: "auth.api_key.created",
        user: by && { id: by.userId, email: by.email },
        action: "create",
        resource: { type: "api_key", id: row.id, label: row.name },
        changes: {
          owner: { old: null, new: userId },
          scope: { old: null, new: row.scope },
          expires_at: { old: null, new: row.expiresAt?.toISOString() ?? null },
        },
      });
      return row;
    });
    return { apiKey, plaintext };
  }

  async listForUser(userId: string): Promise<ApiKeySummary[]> {
    return this.repository.listForUser(userId);
  }

  /** Revokes one of the actor's own keys; another user's key id answers as unknown. */
  async revokeOwn(actor: Actor, id: string): Promise<ApiKeySummary> {
    return this.revoke(id, actor.userId, actor);
  }

  /** Revokes a key (among `ownerUserId`'s when given) and records `auth.api_key.revoked` in the same transaction. */
  async revoke(id: string, ownerUserId?: string, by: Actor | null = null): Promise<ApiKeySummary> {
    if (!isUuid(id)) throw new NotFoundError("API key");
    const revoked = await this.sequelize.transaction(async (transaction) => {
      const key = await this.repository.byId(id, ownerUserId, transaction);
      if (!key) throw new NotFoundError("API key");
      if (key.revokedAt) return { key, revokedNow: false };
      const revokedAt = await this.repository.markRevoked(key.id, transaction);
      await this.audit.record(transaction, {
        type: "auth.api_key.revoked",
        user: by && { id: by.userId, email: by.email },
        action: "revoke",
        resource: { type: "api_key", id: key.id, label: key.name },
        changes: { revoked_at: { old: null, new: revokedAt.toISOString() } },
      });
      return { key: { ...key, revokedAt }, revokedNow: true };
    });
    if (revoked.revokedNow) {
      // This process forgets the key at once; the others when the event reaches them, which it has
      // left for before the caller hears that the key is revoked.
      this.forget((owner) => owner.actor.credential.id === id);
      this.events.publish(Topic.AccessEnded, { kind: "api_key", apiKeyId: id, reason: "revoked" });
      await this.events.flush();
    }
    return revoked.key;
  }

  /**
   * Deletes keys revoked or expired more than `retentionDays` ago: a dead credential's hash has no use
   * left, and keeping less is safer.
   */
  pruneRetired(retentionDays = 90): Promise<number> {
    return this.repository.pruneRetired(retentionDays);
  }

  /**
   * Records `auth.api_key.expired` for every key past its expiry whose expiry is not recorded yet; how
   * many. Run by the maintenance worker every 5 minutes (with the session sweep), so an expiry is in the
   * log within minutes whether or not anyone presents the key again; a key presented after its expiry
   * records it at once (authenticate). Each event names the key's owner, in the transaction that marks it.
   */
  async sweepExpired(): Promise<number> {
    let recorded = 0;
    for (;;) {
      const keys = await this.repository.expiredUnrecorded(EXPIRY_SWEEP_BATCH);
      for (const key of keys) if (await this.recordExpiry(key)) recorded += 1;
      if (keys.length < EXPIRY_SWEEP_BATCH) return recorded;
    }
  }

  private recordExpiry(key: ExpiredKeyRow): Promise<boolean> {
    return this.sequelize.transaction(async (transaction) => {
      if (!(await this.repository.markExpiryRecorded(key.id, transaction))) return false;
      await this.audit.record(transaction, {
        type: "auth.api_key.expired",
        user: { id: key.userId, email: key.email },
        action: "expire",
        resource: { type: "api_key", id: key.id, label: key.name },
        changes: { expires_at: { old: null, new: new Date(key.expiresAt).toISOString() } },
      });
      return true;
    });
  }

  /**
   * Resolves a presented key to its actor, or throws 401: from memory when this process saw the key
   * within `cacheMs` and nothing evicted it since, else with one indexed read on the hash.
   */
  async authenticate(plaintext: string): Promise<Actor> {
    if (!plaintext.startsWith(KEY_PREFIX)) throw new UnauthenticatedError();
    const hash = hashApiKey(plaintext);
    const cacheKey = hash.toString("base64");
    const now = Date.now();
    let owner = this.owners.get(cacheKey);
    if (owner && (owner.until <= now || (owner.expiresAtMs !== null && owner.expiresAtMs <= now))) {
      this.owners.delete(cacheKey);
      owner = undefined;
    }
    if (!owner) owner = await this.readOwner(hash, cacheKey, now);
    if (now - owner.touchedAtMs > LAST_USED_RESOLUTION_MS) {
      owner.touchedAtMs = now;
      this.touch(owner.actor.credential.id);
    }
    return owner.actor;
  }

  private async readOwner(hash: Buffer, cacheKey: string, now: number): Promise<CachedOwner> {
    const evictionsBefore = this.evictions;
    const row = await this.repository.liveOwner(hash);
    if (!row) {
      // Presented after its expiry and before the sweep saw it: the expiry is recorded now (once).
      for (const key of await this.repository.expiredUnrecorded(1, hash)) await this.recordExpiry(key);
      throw new UnauthenticatedError();
    }
    if (row.status !== "active") throw new UnauthenticatedError("Your account has been deactivated");
    const expiresAt = row.expiresAt ? new Date(row.expiresAt) : null;
    const owner: CachedOwner = {
      actor: {
        userId: row.userId,
        familyId: row.familyId,
        email: row.email,
        role: row.role,
        scope: row.scope,
        aiEnabled: row.aiEnabled,
        credential: { kind: "api_key", id: row.keyId },
        expiresAt,
      },
      until: now + this.cacheMs,
      expiresAtMs: expiresAt ? expiresAt.getTime() : null,
      touchedAtMs: row.lastUsedAt ? new Date(row.lastUsedAt).getTime() : 0,
    };
    // Read before an eviction landed: used for this request (it began first), not remembered.
    if (this.cacheMs > 0 && this.evictions === evictionsBefore) {
      if (this.owners.size >= OWNER_CACHE_MAX) this.owners.delete(this.owners.keys().next().value!);
      this.owners.set(cacheKey, owner);
    }
    return owner;
  }

  private touch(keyId: string): void {
    // Off the request's critical path: a lost update of a usage timestamp harms nothing.
    this.repository.touch(keyId).catch(() => undefined);
  }
}
