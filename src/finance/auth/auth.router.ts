import express, { type NextFunction, type Request, type Response } from "express";
import { API_PREFIX } from "../../../rest-adapter/routes";
import { BadRequestError, DomainError, ErrorCode } from "../../platform/common/errors";
import { sendError } from "../../transports/http/respond";
import { authenticate, refuseCrossSiteSignIn, SESSION_COOKIE } from "../../transports/http/authenticate";
import type { Services } from "../../app/services";
import { setSessionCookie, tokenResponse } from "./session-answer";

const BODY_LIMIT = "16kb";

type Handler = (req: Request, res: Response) => Promise<void>;

/**
 * Local sign-in and the OAuth 2.0 token endpoints. Handlers are thin: they read the form or JSON
 * body, call the session services and shape the RFC 6749 answers.
 */
export function createAuthRouter(services: Services, rateLimit: express.RequestHandler[]): express.Router {
  const router = express.Router();
  const body = [express.json({ limit: BODY_LIMIT }), express.urlencoded({ extended: false, limit: BODY_LIMIT })];
  const route = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.setHeader("Cache-Control", "no-store");
      await handler(req, res);
    } catch (error) {
      if (!(error instanceof DomainError)) return next(error);
      sendError(req, res, error);
    }
  };

  router.post(
    "/auth/login",
    refuseCrossSiteSignIn,
    ...rateLimit,
    ...body,
    route(async (req, res) => {
      const email = field(req, "email");
      const password = field(req, "password");
      const session = await services.logins.login(email, password);
      setSessionCookie(req, res, session);
      res.json(tokenResponse(session));
    }),
  );

  // Upstream's mobile and CLI sign-in (sure-cli `login`, `refresh`): the same sign-in and refresh as
  // above, audited alike; the `device` object those clients send is accepted and not stored.
  router.post(
    `${API_PREFIX}/auth/login`,
    ...rateLimit,
    ...body,
    route(async (req, res) => {
      const session = await services.logins.login(field(req, "email"), field(req, "password"));
      const actor = await services.sessions.authenticateAccessToken(session.accessToken);
      res.json({
        ...tokenResponse(session),
        created_at: Math.floor(Date.now() / 1000),
        user: { id: actor.userId, email: actor.email, ai_enabled: actor.aiEnabled },
      });
    }),
  );

  router.post(
    `${API_PREFIX}/auth/refresh`,
    ...rateLimit,
    ...body,
    route(async (req, res) => {
      res.json({
        ...tokenResponse(await services.sessions.refresh(field(req, "refresh_token"))),
        created_at: Math.floor(Date.now() / 1000),
      });
    }),
  );

  router.post(
    "/auth/logout",
    ...rateLimit,
    ...body,
    authenticate(services, { required: true, cookie: true }),
    route(async (req, res) => {
      const actor = res.locals.actor!;
      // Asked before the session ends: the IdP's logout URL needs the session's ID token.
      const idp = actor.credential.kind === "api_key" ? null : await services.ssoLogins.endSessionUrl(actor.credential.sessionId);
      await services.sessions.logout(actor, idp);
      res.clearCookie(SESSION_COOKIE, { path: "/", httpOnly: true, sameSite: "lax", secure: req.secure });
      if (idp && req.accepts(["application/json", "text/html"]) === "text/html") return res.redirect(303, idp.url);
      res.json(idp ? { message: "Logged out", end_session_url: idp.url } : { message: "Logged out" });
    }),
  );

  router.post(
    "/oauth/token",
    ...rateLimit,
    ...body,
    route(async (req, res) => {
      const grantType = field(req, "grant_type");
      if (grantType !== "refresh_token") throw new UnsupportedGrantTypeError("Only grant_type=refresh_token is supported");
      res.json(tokenResponse(await services.sessions.refresh(field(req, "refresh_token"))));
    }),
  );

  router.post(
    "/oauth/revoke",
    ...rateLimit,
    ...body,
    route(async (req, res) => {
      await services.sessions.revoke(field(req, "token"));
      res.status(200).end();
    }),
  );
  return router;
}

function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== "string" || value === "") throw new BadRequestError(`param is missing or the value is empty: ${name}`);
  return value;
}

/** RFC 6749 §5.2 unsupported_grant_type. */
class UnsupportedGrantTypeError extends DomainError {
  readonly code = ErrorCode.BadRequest;
  readonly restError = "unsupported_grant_type";
}
