import { ForbiddenError } from "../common/errors";

/**
 * Who may do what: the caller of every transport and the roles and scopes it carries. Below every
 * feature, because every layer names it (transports authenticate it, features authorise on it).
 */
export const USER_ROLES = ["admin", "auditor", "member"] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** Roles by privilege: each includes the rights of those below it. */
export const ROLE_PRIVILEGE: Record<UserRole, number> = { member: 0, auditor: 1, admin: 2 };

export function isUserRole(value: string): value is UserRole {
  return (USER_ROLES as readonly string[]).includes(value);
}

/** Whether a user may sign in at all: authentication refuses suspended and deleted users. */
export type UserStatus = "active" | "suspended" | "deleted";

export const API_KEY_SCOPES = ["read", "read_write"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Who is making a request, resolved once per request from its credentials. */
export type Actor = Readonly<{
  userId: string;
  familyId: string;
  email: string;
  role: UserRole;
  scope: ApiKeyScope;
  aiEnabled: boolean;
  /**
   * What the request presented: an API key, or an access token or session cookie of a signed-in
   * session (whose id audit events carry).
   */
  credential: { kind: "api_key"; id: string } | { kind: "access_token" | "session"; id: string; sessionId: string };
  /** When the credential stops working by itself (a key's expiry, a token's or session's end of life); null: never. */
  expiresAt: Date | null;
}>;

/** Roles that may read the audit log. */
export function canReadAudit(actor: Actor): boolean {
  return actor.role === "admin" || actor.role === "auditor";
}

/** Instance administration: managing users and SSO providers. */
export function canAdminister(actor: Actor): boolean {
  return actor.role === "admin";
}

export function sessionIdOf(actor: Actor | null): string | null {
  return actor && actor.credential.kind !== "api_key" ? actor.credential.sessionId : null;
}

/** How audit events name an API key in their session field (a key has no session; its id says which credential asked). */
export const API_KEY_SESSION_PREFIX = "api_key:";

/**
 * What the audit events of an authenticated caller carry as `sessionId`: the session of a signed-in
 * caller (console cookie, access token), `api_key:<key id>` for an API key. Never null for a caller.
 */
export function auditSessionOf(actor: Actor | null): string | null {
  if (!actor) return null;
  return actor.credential.kind === "api_key" ? `${API_KEY_SESSION_PREFIX}${actor.credential.id}` : actor.credential.sessionId;
}

/**
 * Who asked, as an audit event names them: the user and the credential (auditSessionOf's value). The
 * part of an Actor that outlives its request: work finished later on the caller's behalf (a worker
 * writing a requested export) records its events with the requester it kept.
 */
export type Requester = Readonly<{ userId: string; email: string; session: string | null }>;

/** The requester an actor is; a requester is already one. */
export function requesterOf(actor: Actor | Requester): Requester {
  if (!("credential" in actor)) return actor;
  return { userId: actor.userId, email: actor.email, session: auditSessionOf(actor) };
}

export function canWrite(actor: Actor): boolean {
  return actor.scope === "read_write";
}

export function insufficientScope(): ForbiddenError {
  return new ForbiddenError("This action requires the 'write' scope", "insufficient_scope");
}
