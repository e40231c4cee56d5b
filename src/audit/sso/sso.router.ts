import express, { type NextFunction, type Request, type Response } from "express";
import { authenticate, readCookie } from "../../transports/http/authenticate";
import { DomainError } from "../../platform/common/errors";
import { sendError } from "../../transports/http/respond";
import { setSessionCookie, tokenResponse } from "../../finance/auth";
import type { Services } from "../../app/services";
import { LOGIN_REQUEST_TTL_SECONDS } from "./sso-login-request.repository";
import type { CallbackOutcome, StartedLogin } from "./sso-login.service";

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
