import type { NextFunction, Request, Response } from "express";
import { auditContextFor, runInAuditContext, setCurrentSessionId } from "../../platform/common/audit-context";
import { DomainError, ForbiddenError, UnauthenticatedError } from "../../platform/common/errors";
import { auditSessionOf, type Actor } from "../../platform/security/actor";
import { sendError } from "./respond";

declare module "express-serve-static-core" {
  interface Locals {
    actor: Actor | null;
    requestId: string;
  }
}

export const SESSION_COOKIE = "fg_session";

/**
 * The one place an HTTP request's origin (client address as express resolves it behind the trusted
 * proxies, user agent, request id) is made current, for everything the request does: mounted first,
 * so no route depends on where it sits among body parsers and authentication
 * (test/integration/audit.request-origin.test.ts).
 */
export function enterRequestOrigin(req: Request, res: Response, next: NextFunction): void {
  runInAuditContext(auditContextFor({ clientIp: req.ip, userAgent: req.get("user-agent"), requestId: res.locals.requestId }), next);
}

export function bearerToken(req: Request): string | undefined {
  const header = req.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get("cookie") ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF protection for cookie-authenticated state changes. Browsers send `Origin` (and
 * `Sec-Fetch-Site`) with every cross-site POST, and a page elsewhere cannot forge them; a request
 * without either comes from a non-browser client, which no other site can drive with our cookie.
 * (The cookie is also SameSite=Lax, which older browsers may not honour.)
 */
function isCrossSiteWrite(req: Request): boolean {
  if (SAFE_METHODS.has(req.method)) return false;
  const origin = req.get("origin");
  if (origin !== undefined) return origin !== `${req.protocol}://${req.get("host")}`;
  const site = req.get("sec-fetch-site");
  return site !== undefined && site !== "same-origin" && site !== "none";
}

/**
 * The credential checks authentication calls, by shape: the auth feature's sessions and the identity
 * feature's API keys provide them (the app hands its services in), so this transport names no feature.
 */
export type CredentialChecks = {
  sessions: { authenticateAccessToken(token: string): Promise<Actor>; authenticateSession(secret: string): Promise<Actor> };
  apiKeys: { authenticate(key: string): Promise<Actor> };
};

/**
 * Login CSRF: a page elsewhere posting a form to the sign-in route would sign the browser in to an
 * account of the attacker's choosing (the session cookie is set by the answer), so a cross-site
 * sign-in is refused like any cross-site write with the cookie.
 */
export function refuseCrossSiteSignIn(req: Request, res: Response, next: NextFunction): void {
  if (isCrossSiteWrite(req)) return sendError(req, res, new ForbiddenError("Cross-site sign-in refused: sign in from this site"));
  next();
}

/** Resolves a bearer token (tried first), an API key, then (where `cookie`) the session cookie. */
export async function resolveActor(
  services: CredentialChecks,
  credentials: { bearer?: string; apiKey?: string; session?: string },
): Promise<Actor> {
  if (credentials.bearer) {
    try {
      return await services.sessions.authenticateAccessToken(credentials.bearer);
    } catch (error) {
      if (!credentials.apiKey) throw error;
    }
  }
  if (credentials.apiKey) return services.apiKeys.authenticate(credentials.apiKey);
  if (credentials.session) return services.sessions.authenticateSession(credentials.session);
  throw new UnauthenticatedError();
}

/**
 * Resolves the request's actor from `Authorization: Bearer` (an access token of our OAuth
 * endpoints, tried first), then `X-Api-Key`, then, where `cookie` is set, the dashboard's session
 * cookie. `required` answers 401 when no credential is given; otherwise an anonymous request passes
 * with a null actor (GraphQL introspection) and the schema's @Authorized fields refuse it.
 * A credential that is present but wrong is always a 401, with one message for every cause.
 */
export function authenticate(services: CredentialChecks, { required, cookie = false }: { required: boolean; cookie?: boolean }) {
  return async (req: Request, res: Response, next: NextFunction) => {
    res.locals.actor = null;
    const credentials = {
      bearer: bearerToken(req),
      apiKey: req.get("x-api-key"),
      session: cookie ? readCookie(req, SESSION_COOKIE) : undefined,
    };
    if (!credentials.bearer && !credentials.apiKey && !credentials.session) {
      if (required) return sendError(req, res, new UnauthenticatedError());
      return next();
    }
    try {
      // In the request's origin: presenting an expired session records its expiry, from this request.
      res.locals.actor = await resolveActor(services, credentials);
      // The credential that asked, on every event this request records: its session, or `api_key:<id>`.
      setCurrentSessionId(auditSessionOf(res.locals.actor));
      if (res.locals.actor.credential.kind === "session" && isCrossSiteWrite(req)) {
        return sendError(req, res, new ForbiddenError("Cross-site request refused: the session cookie only works from this site"));
      }
      next();
    } catch (error) {
      if (error instanceof DomainError) return sendError(req, res, error);
      next(error);
    }
  };
}
