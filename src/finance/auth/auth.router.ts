import express, { type NextFunction, type Request, type Response } from "express";
import { API_PREFIX } from "../../../rest-adapter/routes";
import { BadRequestError, DomainError, ErrorCode } from "../../platform/common/errors";
import { sendError } from "../../transports/http/respond";
import { authenticate, refuseCrossSiteSignIn, SESSION_COOKIE } from "../../transports/http/authenticate";
import type { Services } from "../../app/services";
import { CONSOLE_PATH } from "../../transports/http/admin-console";
import { checkDevice, mobileTokens, SureAuthError } from "./auth-answers";
import { INVALID_LOGIN } from "./login.service";
import { setSessionCookie, tokenResponse } from "./session-answer";
import { InvalidGrantError, type DeviceInfo } from "./session.service";

const BODY_LIMIT = "16kb";

type Handler = (req: Request, res: Response) => Promise<void>;

/**
 * Local sign-in and the OAuth 2.0 token endpoints. Handlers are thin: they read the form or JSON
 * body, call the session services and shape the RFC 6749 answers.
 */
export function createAuthRouter(services: Services, rateLimit: express.RequestHandler[]): express.Router {
  const router = express.Router();
  const body = [express.json({ limit: BODY_LIMIT }), express.urlencoded({ extended: false, limit: BODY_LIMIT })];
  const sureRoute = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.setHeader("Cache-Control", "no-store");
      await handler(req, res);
    } catch (error) {
      if (!(error instanceof DomainError)) return next(error);
      sendError(req, res, sureAnswer(error));
    }
  };
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
      const session = await services.logins.login(email, password, { otpCode: optionalField(req, "otp_code"), offerSetup: true });
      setSessionCookie(req, res, session);
      res.json({ ...tokenResponse(session), ...(session.recoveryCodes ? { recovery_codes: session.recoveryCodes } : {}) });
    }),
  );

  // Upstream's mobile app and sure-cli sign in here (Api::V1::AuthController): the same sign-in and
  // refresh as above, audited alike with the client's `device`, answering upstream's bodies.
  router.post(
    `${API_PREFIX}/auth/login`,
    ...rateLimit,
    ...body,
    sureRoute(async (req, res) => {
      const email = optionalField(req, "email");
      const password = optionalField(req, "password");
      if (!email || !password) throw new SureAuthError(ErrorCode.Unauthenticated, INVALID_LOGIN);
      const device = deviceOf(req);
      const session = await services.logins.login(email, password, { otpCode: optionalField(req, "otp_code"), device });
      const actor = await services.sessions.authenticateAccessToken(session.accessToken);
      res.json({ ...mobileTokens(session), user: await services.logins.mobileUser(actor.userId) });
    }),
  );

  router.post(
    `${API_PREFIX}/auth/refresh`,
    ...rateLimit,
    ...body,
    sureRoute(async (req, res) => {
      const refreshToken = optionalField(req, "refresh_token");
      if (!refreshToken) throw new SureAuthError(ErrorCode.BadRequest, "Refresh token is required");
      res.json(mobileTokens(await services.sessions.refresh(refreshToken, deviceOf(req))));
    }),
  );

  // The app's "Test connection" (GET /sessions/new, any 2xx/3xx is a Sure server): a page pointing to the console's sign-in.
  router.get("/sessions/new", (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.type("html").send(SIGN_IN_POINTER);
  });

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

/**
 * Upstream's `/api/v1/auth/*` answers: a refusal carries its human message in `error` (what the app
 * shows), a wrong refresh token is 401 "Invalid refresh token"; other errors keep their REST body.
 */
function sureAnswer(error: DomainError): DomainError {
  if (error instanceof SureAuthError) return error;
  if (error instanceof InvalidGrantError) return new SureAuthError(ErrorCode.Unauthenticated, "Invalid refresh token");
  if (error.code === ErrorCode.Unauthenticated || error.code === ErrorCode.BadRequest) return new SureAuthError(error.code, error.message);
  return error;
}

/**
 * The `device` object upstream's clients send. Absent is accepted (our own tools sign in without it);
 * present, it needs upstream's fields: `device_id`, `device_name`, `device_type`, `os_version`, `app_version`.
 */
function deviceOf(req: Request): DeviceInfo | null {
  const device = (req.body as Record<string, unknown> | undefined)?.device;
  if (device === undefined || device === null) return null;
  return checkDevice(device);
}

function optionalField(req: Request, name: string): string | null {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" && value !== "" ? value : null;
}

const SIGN_IN_POINTER = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body><main><h1>Sign in</h1><p>This server speaks Sure's API. Sign in on the <a href="${CONSOLE_PATH}/sign-in">console</a>.</p></main></body></html>`;

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
