import { AsyncLocalStorage } from "node:async_hooks";
import { isIP } from "node:net";

/**
 * Where an audited action comes from: made once per transport entry (an HTTP request, a WebSocket
 * operation, a job, a CLI command) and made current for everything below it, at one place per
 * transport (docs/architecture.md lists them); read by `AuditService.record()`, so no emitter
 * assembles (or forgets, or forges) these fields itself. `sessionId` is filled in once the request's
 * credentials are known.
 */
export type AuditContext = {
  ipAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  sessionId: string | null;
};

const storage = new AsyncLocalStorage<AuditContext>();

const EMPTY: AuditContext = Object.freeze({ ipAddress: null, userAgent: null, requestId: null, sessionId: null });

export function runInAuditContext<T>(context: AuditContext, work: () => T): T {
  return storage.run(context, work);
}

export function currentAuditContext(): AuditContext {
  return storage.getStore() ?? EMPTY;
}

/** Authentication names the session of the current origin once the credential is known. */
export function setCurrentSessionId(sessionId: string | null): void {
  const current = storage.getStore();
  if (current) current.sessionId = sessionId;
}

const MAX_USER_AGENT = 512;

/**
 * The context of an HTTP request. `clientIp` is express' `req.ip`, which already honours the
 * configured trusted proxies; an IPv4 address seen through a dual-stack socket loses its `::ffff:`.
 */
export function auditContextFor(request: { clientIp?: string; userAgent?: string; requestId: string }): AuditContext {
  return {
    ipAddress: clientAddress(request.clientIp),
    userAgent: request.userAgent ? request.userAgent.slice(0, MAX_USER_AGENT) : null,
    requestId: request.requestId,
    sessionId: null,
  };
}

/**
 * A client address as PostgreSQL's inet stores it, or null. An IPv6 zone id (`fe80::1%eth0`) names an
 * interface of the sender's host, which means nothing here, and inet refuses it.
 */
export function clientAddress(raw: string | undefined): string | null {
  if (!raw) return null;
  const ip = raw.includes("%") ? raw.slice(0, raw.indexOf("%")) : raw;
  const unmapped = ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return isIP(unmapped) ? unmapped : null;
}
