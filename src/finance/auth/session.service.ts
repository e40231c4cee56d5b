import { createHash, randomBytes } from "node:crypto";
import type { Sequelize, Transaction } from "sequelize";
import { DomainError, ErrorCode, UnauthenticatedError } from "../../platform/common/errors";
import { newId } from "../../platform/common/ids";
import type { AuditService } from "../../audit/log";
import type { EventBus } from "../../platform/events/event-bus";
import type { Actor } from "../../platform/security/actor";
import { announceAccessEnded } from "./access-ended";
import type { SecretBox } from "../../platform/security/secret-box";
import type { AuthRepository, TokenOwnerRow } from "./auth.repository";

const ACCESS_PREFIX = "fga_";
const REFRESH_PREFIX = "fgr_";
const SESSION_PREFIX = "fgs_";
const SWEEP_BATCH = 500;

export type SessionSettings = { accessTokenTtlSeconds: number; sessionTtlSeconds: number; refreshReuseGraceSeconds: number };

/** What a mobile or CLI client says about itself when it signs in (upstream's `device` object). */
export type DeviceInfo = { device_id: string; device_name: string; device_type: string; os_version?: string; app_version?: string };

/** The pair a refresh token was exchanged for, sealed on it for the grace window. */
type Successor = { accessToken: string; refreshToken: string; accessExpiresAt: string };

/** The OAuth 2.0 token response pair (RFC 6749 §5.1). */
export type TokenPair = { accessToken: string; refreshToken: string; tokenType: "Bearer"; expiresIn: number };

export type OpenedSession = TokenPair & { sessionId: string; sessionSecret: string; sessionExpiresAt: Date };

/** RFC 6749 §5.2 invalid_grant: the refresh token is unknown, expired, revoked or was already used. */
export class InvalidGrantError extends DomainError {
  readonly code = ErrorCode.BadRequest;
  readonly restError = "invalid_grant";
  constructor(message = "The refresh token is invalid, expired or revoked") {
    super(message);
  }
}

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

function secret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/**
 * Sessions and the tokens that carry them, for every way of signing in: local passwords now, SSO
 * next. `open()` starts a session for a user whose identity the caller has established; refresh,
 * revocation, logout and expiry work the same whoever opened it. Only hashes of tokens are stored,
 * and every presented token is checked against the database, so revocation takes effect at once.
 */
export class SessionService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: AuthRepository,
    private readonly audit: AuditService,
    private readonly settings: SessionSettings,
    private readonly events: EventBus,
    private readonly secrets: SecretBox,
  ) {}

  /** Opens a session with its first token pair, inside the caller's transaction (with its login event). */
  async open(
    transaction: Transaction,
    user: { id: string; email: string },
    options: { method: string; provider?: string | null; device?: DeviceInfo | null },
  ): Promise<OpenedSession> {
    const context = this.audit.origin();
    const sessionSecret = secret(SESSION_PREFIX);
    const sessionExpiresAt = new Date(Date.now() + this.settings.sessionTtlSeconds * 1000);
    const session = { id: newId() };
    await this.repository.insertSession(
      {
        id: session.id,
        userId: user.id,
        method: options.method,
        provider: options.provider ?? null,
        secretHash: digest(sessionSecret),
        ipAddress: context.ipAddress,
        userAgent: context.userAgent,
        expiresAt: sessionExpiresAt,
        device: options.device ?? null,
      },
      transaction,
    );
    await this.repository.recordSignIn(user.id, options.provider ? `${options.method}:${options.provider}` : options.method, transaction);
    const pair = await this.issuePair(session.id, sessionExpiresAt, transaction);
    await this.audit.record(transaction, {
      type: "auth.token.issued",
      user,
      provider: options.provider ?? null,
      action: "issue",
      sessionId: session.id,
      resource: { type: "session", id: session.id, label: options.method },
    });
    return { ...pair, sessionId: session.id, sessionSecret, sessionExpiresAt };
  }

  /**
   * Exchanges a refresh token for a new pair; the old pair stops working. Presented again within
   * REFRESH_REUSE_GRACE_SECONDS (a concurrent refresh by another screen of the same app), the old
   * token answers with the same new pair. Presented after that window, it leaked: the whole session
   * (the token family) and its tokens are revoked.
   */
  async refresh(refreshToken: string, device: DeviceInfo | null = null): Promise<TokenPair> {
    if (!refreshToken.startsWith(REFRESH_PREFIX)) throw new InvalidGrantError();
    const outcome = await this.sequelize.transaction(async (transaction): Promise<TokenPair | InvalidGrantError> => {
      const row = await this.repository.tokenByHash(digest(refreshToken), transaction, true);
      if (!row || row.kind !== "refresh") return new InvalidGrantError();
      const user = { id: row.userId, email: row.email };
      const changes = deviceChanges(device);
      const live = !row.sessionEndedAt && row.status === "active" && row.sessionExpiresAt > new Date();
      if (row.rotatedAt) {
        const graceEnds = row.rotatedAt.getTime() + this.settings.refreshReuseGraceSeconds * 1000;
        if (live && row.successorSealed && graceEnds > Date.now()) {
          const successor = JSON.parse(this.secrets.open(row.successorSealed)) as Successor;
          await this.audit.record(transaction, {
            type: "auth.token.refreshed",
            user,
            action: "refresh.grace",
            sessionId: row.sessionId,
            resource: { type: "session", id: row.sessionId },
            changes,
          });
          return pairOf(successor.accessToken, successor.refreshToken, new Date(successor.accessExpiresAt));
        }
        if (await this.repository.endSession(row.sessionId, "refresh_token_reuse", transaction)) {
          announceAccessEnded(this.events, transaction, { kind: "session", sessionId: row.sessionId, reason: "refresh_token_reuse" });
          await this.audit.record(transaction, {
            type: "auth.token.revoked",
            severity: "error",
            user,
            action: "revoke_session",
            sessionId: row.sessionId,
            resource: { type: "session", id: row.sessionId, label: "refresh_token_reuse" },
            error: "refresh token reuse detected after the grace window; the session and all its tokens were revoked",
            changes,
          });
        }
        return new InvalidGrantError();
      }
      if (row.revokedAt || row.sessionEndedAt || row.status !== "active") return new InvalidGrantError();
      if (row.sessionExpiresAt <= new Date() || row.tokenExpiresAt <= new Date()) {
        await this.expire(row, transaction);
        return new InvalidGrantError();
      }
      await this.repository.revokeAccessTokens(row.sessionId, transaction);
      const issued = await this.issueTokens(row.sessionId, row.sessionExpiresAt, transaction);
      const successor: Successor = {
        accessToken: issued.accessToken,
        refreshToken: issued.refreshToken,
        accessExpiresAt: issued.accessExpiresAt.toISOString(),
      };
      // The row is locked FOR UPDATE: nobody else can have rotated it since it was read.
      if (!(await this.repository.markRotated(row.tokenId, this.secrets.seal(JSON.stringify(successor)), transaction))) {
        throw new InvalidGrantError();
      }
      await this.audit.record(transaction, {
        type: "auth.token.refreshed",
        user,
        action: "refresh",
        sessionId: row.sessionId,
        resource: { type: "session", id: row.sessionId },
        changes,
      });
      return pairOf(issued.accessToken, issued.refreshToken, issued.accessExpiresAt);
    });
    if (outcome instanceof InvalidGrantError) throw outcome;
    return outcome;
  }

  /**
   * RFC 7009: revokes an access token, or a refresh token together with its whole session. Unknown
   * or already revoked tokens are not an error.
   */
  async revoke(token: string): Promise<void> {
    if (!token.startsWith(ACCESS_PREFIX) && !token.startsWith(REFRESH_PREFIX)) return;
    await this.sequelize.transaction(async (transaction) => {
      const row = await this.repository.tokenByHash(digest(token), transaction, true);
      if (!row) return;
      const revoked =
        row.kind === "refresh"
          ? await this.repository.endSession(row.sessionId, "revoked", transaction)
          : await this.repository.revokeToken(row.tokenId, transaction);
      if (!revoked) return;
      announceAccessEnded(
        this.events,
        transaction,
        row.kind === "refresh"
          ? { kind: "session", sessionId: row.sessionId, reason: "revoked" }
          : { kind: "access_token", tokenId: row.tokenId, reason: "revoked" },
      );
      await this.audit.record(transaction, {
        type: "auth.token.revoked",
        user: { id: row.userId, email: row.email },
        action: row.kind === "refresh" ? "revoke_session" : "revoke_access_token",
        sessionId: row.sessionId,
        resource: { type: row.kind === "refresh" ? "session" : "access_token", id: row.kind === "refresh" ? row.sessionId : row.tokenId },
      });
    });
  }

  /**
   * Ends the actor's session and every token of it. `idp` names the SSO provider whose end-session
   * endpoint the browser is sent to next (RP-initiated logout), for the record.
   */
  async logout(actor: Actor, idp: { providerId: string } | null = null): Promise<void> {
    if (actor.credential.kind === "api_key") throw new UnauthenticatedError("Only a signed-in session can log out");
    const sessionId = actor.credential.sessionId;
    await this.sequelize.transaction(async (transaction) => {
      if (!(await this.repository.endSession(sessionId, "logout", transaction))) return;
      announceAccessEnded(this.events, transaction, { kind: "session", sessionId, reason: "logout" });
      await this.audit.record(transaction, {
        type: "auth.logout",
        user: { id: actor.userId, email: actor.email },
        provider: idp?.providerId ?? null,
        action: idp ? "logout.rp_initiated" : "logout",
        sessionId,
        resource: { type: "session", id: sessionId },
      });
    });
  }

  /**
   * Ends every open session of a user and revokes their tokens, inside the caller's transaction (a
   * suspension or deletion), recording one `auth.token.revoked` per session ended. Returns their ids.
   * The caller announces the user-wide end of access; this announces nothing of its own.
   */
  async endAllForUser(transaction: Transaction, user: { id: string; email: string }, reason: string): Promise<string[]> {
    const sessionIds = await this.repository.endUserSessions(user.id, reason, transaction);
    for (const sessionId of sessionIds) {
      await this.audit.record(transaction, {
        type: "auth.token.revoked",
        user,
        action: "revoke_session",
        sessionId,
        resource: { type: "session", id: sessionId, label: reason },
      });
    }
    return sessionIds;
  }

  /** Resolves a bearer access token to its actor, or throws 401. */
  async authenticateAccessToken(token: string): Promise<Actor> {
    if (!token.startsWith(ACCESS_PREFIX)) throw new UnauthenticatedError();
    const row = await this.repository.tokenByHash(digest(token));
    if (!row || row.kind !== "access" || row.revokedAt || row.sessionEndedAt) throw new UnauthenticatedError();
    await this.checkLive(row);
    if (row.tokenExpiresAt <= new Date()) throw new UnauthenticatedError();
    const expiresAt = new Date(Math.min(row.tokenExpiresAt.getTime(), row.sessionExpiresAt.getTime()));
    return actorOf(row, { kind: "access_token", id: row.tokenId, sessionId: row.sessionId }, expiresAt);
  }

  /** Resolves a session cookie's value to its actor, or throws 401. */
  async authenticateSession(sessionSecret: string): Promise<Actor> {
    if (!sessionSecret.startsWith(SESSION_PREFIX)) throw new UnauthenticatedError();
    const row = await this.repository.sessionBySecretHash(digest(sessionSecret));
    if (!row || row.sessionEndedAt) throw new UnauthenticatedError();
    await this.checkLive(row);
    return actorOf(row, { kind: "session", id: row.sessionId, sessionId: row.sessionId }, row.sessionExpiresAt);
  }

  /** Ends sessions past their lifetime that nobody used since, recording each expiry once. */
  async sweepExpired(): Promise<number> {
    await this.repository.clearSuccessors(this.settings.refreshReuseGraceSeconds);
    let swept = 0;
    for (;;) {
      const sessions = await this.repository.expiredOpenSessions(SWEEP_BATCH);
      for (const session of sessions) {
        const ended = await this.sequelize.transaction((transaction) =>
          this.expire({ sessionId: session.id, userId: session.userId, email: session.email }, transaction),
        );
        if (ended) swept += 1;
      }
      if (sessions.length < SWEEP_BATCH) return swept;
    }
  }

  private async checkLive(row: Pick<TokenOwnerRow, "sessionId" | "sessionExpiresAt" | "userId" | "email" | "status">): Promise<void> {
    if (row.sessionExpiresAt <= new Date()) {
      await this.sequelize.transaction((transaction) => this.expire(row, transaction));
      throw new UnauthenticatedError();
    }
    if (row.status !== "active") throw new UnauthenticatedError("Your account has been deactivated");
  }

  private async expire(row: Pick<TokenOwnerRow, "sessionId" | "userId" | "email">, transaction: Transaction): Promise<boolean> {
    if (!(await this.repository.endSession(row.sessionId, "expired", transaction))) return false;
    announceAccessEnded(this.events, transaction, { kind: "session", sessionId: row.sessionId, reason: "expired" });
    await this.audit.record(transaction, {
      type: "auth.session.expired",
      user: { id: row.userId, email: row.email },
      action: "expire",
      sessionId: row.sessionId,
      resource: { type: "session", id: row.sessionId },
    });
    return true;
  }

  private async issuePair(sessionId: string, sessionExpiresAt: Date, transaction: Transaction): Promise<TokenPair> {
    const issued = await this.issueTokens(sessionId, sessionExpiresAt, transaction);
    return pairOf(issued.accessToken, issued.refreshToken, issued.accessExpiresAt);
  }

  private async issueTokens(
    sessionId: string,
    sessionExpiresAt: Date,
    transaction: Transaction,
  ): Promise<{ accessToken: string; refreshToken: string; accessExpiresAt: Date }> {
    const accessToken = secret(ACCESS_PREFIX);
    const refreshToken = secret(REFRESH_PREFIX);
    const accessExpiresAt = new Date(Math.min(Date.now() + this.settings.accessTokenTtlSeconds * 1000, sessionExpiresAt.getTime()));
    await this.repository.insertTokens(
      [
        { id: newId(), sessionId, kind: "access", tokenHash: digest(accessToken), expiresAt: accessExpiresAt },
        { id: newId(), sessionId, kind: "refresh", tokenHash: digest(refreshToken), expiresAt: sessionExpiresAt },
      ],
      transaction,
    );
    return { accessToken, refreshToken, accessExpiresAt };
  }
}

/**
 * The client's device as an audit event carries it: in `changes.device.new` (the event's JSON detail),
 * so the audit log says which phone or CLI signed in or refreshed.
 */
export function deviceChanges(device: DeviceInfo | null): { device: { old: null; new: DeviceInfo } } | null {
  return device ? { device: { old: null, new: device } } : null;
}

function pairOf(accessToken: string, refreshToken: string, accessExpiresAt: Date): TokenPair {
  return {
    accessToken,
    refreshToken,
    tokenType: "Bearer",
    expiresIn: Math.max(0, Math.round((accessExpiresAt.getTime() - Date.now()) / 1000)),
  };
}

function actorOf(
  row: Pick<TokenOwnerRow, "userId" | "familyId" | "email" | "role" | "aiEnabled">,
  credential: Extract<Actor["credential"], { sessionId: string }>,
  expiresAt: Date,
): Actor {
  return {
    userId: row.userId,
    familyId: row.familyId,
    email: row.email,
    role: row.role,
    scope: "read_write",
    aiEnabled: row.aiEnabled,
    credential,
    expiresAt,
  };
}
