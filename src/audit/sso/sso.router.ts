import express, { type NextFunction, type Request, type Response } from "express";
import { authenticate, readCookie } from "../../transports/http/authenticate";
import { DomainError, ErrorCode, ValidationError } from "../../platform/common/errors";
import { sendError } from "../../transports/http/respond";
import { mobileTokens, setSessionCookie, SureAuthError, tokenResponse } from "../../finance/auth";
import { API_PREFIX } from "../../../rest-adapter/routes";
import type { Services } from "../../app/services";
import { LOGIN_REQUEST_TTL_SECONDS } from "./sso-login-request.repository";
import { deepLink, type CallbackOutcome, type StartedLogin } from "./sso-login.service";

/** Binds an authorization request to the browser that started it; scoped to one provider's paths. */
const BROWSER_COOKIE = "fg_sso";

type Handler = (req: Request, res: Response) => Promise<void>;

/**
 * The browser side of SSO: `start` sends the browser to the IdP, `callback` completes the sign-in,
 * `link` connects another identity to the signed-in user. Answers are JSON, or a small page for
 * browsers that ask for HTML; failures never leak more than their reason.
 */
export function createSsoRouter(services: Services, rateLimit: express.RequestHandler[]): express.Router {
  const router = express.Router();
  const route = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.setHeader("Cache-Control", "no-store");
      await handler(req, res);
    } catch (error) {
      // A failed sign-in (SsoLoginError, with its reason) or any other refusal: the edge's status and body, or a page.
      if (!(error instanceof DomainError)) return next(error);
      sendError(req, res, error, { page: (message) => page("Sign-in failed", message) });
    }
  };

  router.get(
    "/auth/sso/providers",
    ...rateLimit,
    route(async (_req, res) => {
      const providers = (await services.ssoProviders.list()).filter((provider) => provider.enabled);
      res.json({ providers: providers.map((provider) => ({ slug: provider.slug, name: provider.name, login_url: provider.loginUrl })) });
    }),
  );

  router.get(
    "/auth/sso/logged-out",
    route(async (req, res) => answer(req, res, "Signed out", "You are signed out.", { message: "Signed out" })),
  );

  router.get(
    "/auth/sso/:slug/start",
    ...rateLimit,
    route(async (req, res) => {
      const slug = String(req.params.slug);
      const test = stringParam(req, "test");
      const started = test
        ? await services.ssoLogins.startTest(slug, test)
        : await services.ssoLogins.start(slug, { purpose: "login", returnTo: stringParam(req, "return_to") });
      redirectToIdp(req, res, slug, started);
    }),
  );

  router.post(
    "/auth/sso/:slug/link",
    ...rateLimit,
    authenticate(services, { required: true, cookie: true }),
    express.urlencoded({ extended: false, limit: "4kb" }),
    route(async (req, res) => {
      const slug = String(req.params.slug);
      const returnTo = typeof req.body?.return_to === "string" ? req.body.return_to : stringParam(req, "return_to");
      redirectToIdp(req, res, slug, await services.ssoLogins.start(slug, { purpose: "link", user: res.locals.actor, returnTo }));
    }),
  );

  // Upstream's mobile app opens this in a browser (AuthService.buildSsoUrl) and waits at its deep link.
  router.get(
    "/auth/mobile/:provider",
    ...rateLimit,
    route(async (req, res) => {
      const { redirectUris, providerAliases } = services.mobileSso;
      const asked = stringParam(req, "redirect_uri");
      if (asked !== undefined && !redirectUris.includes(asked)) {
        throw new ValidationError(["redirect_uri is not one of the app links this server allows (MOBILE_SSO_REDIRECT_URIS)"]);
      }
      const link = asked ?? redirectUris[0];
      const name = String(req.params.provider);
      const slug = Object.prototype.hasOwnProperty.call(providerAliases, name) ? providerAliases[name] : name;
      const provider = await services.ssoProviders.bySlug(slug);
      if (!provider || !provider.enabled) {
        return res.redirect(303, deepLink(link, { error: "invalid_provider", message: "SSO provider not configured" }));
      }
      const device = Object.fromEntries(
        ["device_id", "device_name", "device_type", "os_version", "app_version"].map((field) => [
          field,
          stringParam(req, field)?.slice(0, 200),
        ]),
      );
      if (!device.device_id || !device.device_name || !device.device_type) {
        return res.redirect(303, deepLink(link, { error: "missing_device_info", message: "Device information is required" }));
      }
      const started = await services.ssoLogins.start(slug, {
        purpose: "mobile",
        mobile: { device: Object.fromEntries(Object.entries(device).map(([key, value]) => [key, value ?? ""])), deepLink: link },
      });
      res.cookie(BROWSER_COOKIE, started.browserSecret, { ...browserCookieOptions(req, slug), maxAge: LOGIN_REQUEST_TTL_SECONDS * 1000 });
      res.redirect(303, started.authorizationUrl);
    }),
  );

  router.get(
    "/auth/sso/:slug/callback",
    ...rateLimit,
    route(async (req, res) => {
      const slug = String(req.params.slug);
      const browserSecret = readCookie(req, BROWSER_COOKIE);
      res.clearCookie(BROWSER_COOKIE, browserCookieOptions(req, slug));
      const query = new URLSearchParams(req.originalUrl.slice(req.originalUrl.indexOf("?") + 1 || req.originalUrl.length));
      respondToOutcome(req, res, await services.ssoLogins.callback(slug, query, browserSecret));
    }),
  );
  return router;
}

function respondToOutcome(req: Request, res: Response, outcome: CallbackOutcome): void {
  switch (outcome.kind) {
    case "mobile":
      // Only to an allowlisted app link (checked when the sign-in started).
      return res.redirect(303, outcome.redirect);
    case "login":
      setSessionCookie(req, res, outcome.session);
      if (outcome.returnTo) return res.redirect(303, outcome.returnTo);
      res.json({ ...tokenResponse(outcome.session), user: outcome.user });
      return;
    case "link":
      if (outcome.returnTo) return res.redirect(303, outcome.returnTo);
      answer(req, res, "Account connected", `Your ${outcome.providerSlug} account ${outcome.email ?? ""} is now connected.`, {
        message: "Account connected",
        provider: outcome.providerSlug,
        email: outcome.email,
      });
      return;
    case "test":
      answer(
        req,
        res,
        "Test sign-in succeeded",
        `The provider signed in ${outcome.email} (role ${outcome.role}). Nobody was signed in here.`,
        {
          test: true,
          provider: outcome.providerSlug,
          subject: outcome.subject,
          email: outcome.email,
          name: outcome.name,
          groups: outcome.groups,
          role: outcome.role,
        },
      );
  }
}

function redirectToIdp(req: Request, res: Response, slug: string, started: StartedLogin): void {
  res.cookie(BROWSER_COOKIE, started.browserSecret, { ...browserCookieOptions(req, slug), maxAge: LOGIN_REQUEST_TTL_SECONDS * 1000 });
  if (wantsJson(req)) {
    res.json({ authorization_url: started.authorizationUrl });
    return;
  }
  res.redirect(303, started.authorizationUrl);
}

/** Lax, not strict: the IdP's redirect back is a cross-site top-level navigation that must carry it. */
function browserCookieOptions(req: Request, slug: string) {
  return { httpOnly: true, sameSite: "lax" as const, secure: req.secure, path: `/auth/sso/${slug}/` };
}

function stringParam(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A browser navigating names text/html in Accept; API clients name JSON or nothing. */
function asksForHtml(req: Request): boolean {
  return (req.get("accept") ?? "").includes("text/html");
}

/** Only a client that asks for JSON (and not HTML) gets the IdP's URL as JSON; a browser or a bare client is redirected. */
function wantsJson(req: Request): boolean {
  return (req.get("accept") ?? "").includes("application/json") && !asksForHtml(req);
}

function answer(req: Request, res: Response, title: string, message: string, body: object): void {
  if (asksForHtml(req)) {
    res.type("html").send(page(title, message));
    return;
  }
  res.json(body);
}

function page(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * Upstream's mobile SSO endpoints (Api::V1::AuthController): the app trades the code its deep link
 * received for tokens (`sso_exchange`), or, for an identity with no account here, links it to an
 * existing account with that account's password (`sso_link`) or creates one (`sso_create_account`).
 * Unauthenticated, mounted before /api/v1's authenticated routes; refusals answer upstream's bodies.
 */
export function createMobileSsoApiRouter(services: Services, rateLimit: express.RequestHandler[]): express.Router {
  const router = express.Router();
  const body = express.json({ limit: "16kb" });
  const route = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.setHeader("Cache-Control", "no-store");
      await handler(req, res);
    } catch (error) {
      if (!(error instanceof DomainError)) return next(error);
      sendError(req, res, sureAnswer(error));
    }
  };
  const text = (req: Request, name: string): string | null => {
    const value = (req.body as Record<string, unknown> | undefined)?.[name];
    return typeof value === "string" && value !== "" ? value : null;
  };
  const linkingCodeGone = () => new SureAuthError(ErrorCode.Unauthenticated, "Linking code is invalid or expired");

  router.post(
    `${API_PREFIX}/auth/sso_exchange`,
    ...rateLimit,
    body,
    route(async (req, res) => {
      const code = text(req, "code");
      const refuse = (message: string) => new SureAuthError(ErrorCode.Unauthenticated, "invalid_or_expired_code", { message });
      if (!code) throw refuse("Authorization code is required");
      const tokens = await services.ssoLogins.exchangeMobileCode(code);
      if (!tokens) throw refuse("Authorization code is invalid or expired");
      res.json({
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
        token_type: "Bearer",
        expires_in: tokens.expiresIn,
        created_at: tokens.createdAt,
        user: await services.logins.mobileUser(tokens.userId),
      });
    }),
  );

  router.post(
    `${API_PREFIX}/auth/sso_link`,
    ...rateLimit,
    body,
    route(async (req, res) => {
      const code = text(req, "linking_code");
      if (!code) throw new SureAuthError(ErrorCode.BadRequest, "Linking code is required");
      const device = await services.ssoLogins.mobileLinkDevice(code);
      if (!device) throw linkingCodeGone();
      const email = text(req, "email");
      const password = text(req, "password");
      if (!email || !password) throw new SureAuthError(ErrorCode.Unauthenticated, "Invalid email or password");
      const session = await services.logins.login(email, password, { device, refuseMfa: true });
      const actor = await services.sessions.authenticateAccessToken(session.accessToken);
      let linked = false;
      try {
        linked = await services.ssoLogins.linkMobileIdentity(code, { id: actor.userId, email: actor.email });
      } finally {
        // Not linked (the code was used meanwhile, or the identity belongs to someone else): no session either.
        if (!linked) await services.sessions.revoke(session.refreshToken);
      }
      if (!linked) throw linkingCodeGone();
      res.json({ ...mobileTokens(session), user: await services.logins.mobileUser(actor.userId) });
    }),
  );

  router.post(
    `${API_PREFIX}/auth/sso_create_account`,
    ...rateLimit,
    body,
    route(async (req, res) => {
      const code = text(req, "linking_code");
      if (!code) throw new SureAuthError(ErrorCode.BadRequest, "Linking code is required");
      const created = await services.ssoLogins.createMobileAccount(code, {
        firstName: text(req, "first_name"),
        lastName: text(req, "last_name"),
      });
      if (created === "disabled") {
        throw new SureAuthError(ErrorCode.Forbidden, "SSO account creation is disabled. Please contact an administrator.");
      }
      if (!created) throw linkingCodeGone();
      res.json({ ...mobileTokens(created.session), user: await services.logins.mobileUser(created.userId) });
    }),
  );
  return router;
}

/** Upstream's bodies: the message in `error`. */
function sureAnswer(error: DomainError): DomainError {
  if (error instanceof SureAuthError) return error;
  if (error.code === ErrorCode.Unauthenticated || error.code === ErrorCode.BadRequest || error.code === ErrorCode.Forbidden) {
    return new SureAuthError(error.code, error.message);
  }
  return error;
}
