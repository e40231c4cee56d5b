import fs from "node:fs";
import path from "node:path";
import express, { type Request, type Response } from "express";
import { projectRoot } from "../../platform/config/project-root";
import { RouteNotFoundError, UpstreamUnavailableError } from "../../platform/common/errors";
import { sendError } from "./respond";

/** Where `npm run build` puts the console and the explorer (vite.config.mts in dashboard/). */
export const CONSOLE_BUILD_DIR = path.join(projectRoot, "dist", "admin");
export const CONSOLE_PATH = "/admin";

/**
 * Scripts, styles, fonts and data only from this origin, no inline script, no framing. The explorer's
 * editor (GraphiQL) inserts style elements and ships its fonts inside its stylesheet as data: URLs,
 * so its page allows inline styles and data: fonts (never inline scripts, never another origin).
 */
const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join("; ");
const EXPLORER_CSP = CONSOLE_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
  .replace("img-src 'self'", "img-src 'self' data:")
  .replace("font-src 'self'", "font-src 'self' data:");

/** A page of the build: read on first use, so a build made after the service started is served. */
function page(file: string) {
  let html: string | undefined;
  return () => {
    html ??= fs.existsSync(path.join(CONSOLE_BUILD_DIR, file)) ? fs.readFileSync(path.join(CONSOLE_BUILD_DIR, file), "utf8") : undefined;
    return html;
  };
}

function sendPage(req: Request, res: Response, html: string | undefined, csp: string): void {
  if (html === undefined) {
    sendError(req, res, new UpstreamUnavailableError("The admin console is not built: run npm run build"));
    return;
  }
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()");
  if (req.secure) res.setHeader("Strict-Transport-Security", "max-age=31536000");
  // The page names the hashed assets of the current build, so it is revalidated every time.
  res.setHeader("Cache-Control", "no-cache");
  res.type("html").send(html);
}

/**
 * The console at /admin/: hashed assets cached for a year, the single page for every client route
 * (the SPA routes its own paths; reloading /admin/audit-logs?… reopens the same view).
 */
export function createAdminConsoleRouter(): express.Router {
  const router = express.Router();
  const consolePage = page("index.html");
  router.use(
    `${CONSOLE_PATH}/assets`,
    express.static(path.join(CONSOLE_BUILD_DIR, "assets"), {
      index: false,
      immutable: true,
      maxAge: "365d",
      setHeaders: (res) => res.setHeader("Cross-Origin-Resource-Policy", "same-origin"),
    }),
    (req, res) => sendError(req, res, new RouteNotFoundError(`No asset ${req.originalUrl}`)),
  );
  // The console's icon, bundled by the build (dashboard/public/): browsers ask for /favicon.ico on any page.
  router.get(["/favicon.ico", `${CONSOLE_PATH}/favicon.ico`], (req, res) => {
    const icon = path.join(CONSOLE_BUILD_DIR, "favicon.ico");
    if (!fs.existsSync(icon)) return sendError(req, res, new RouteNotFoundError("No icon: run npm run build"));
    res.setHeader("Cache-Control", "public, max-age=86400");
    res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
    res.type("image/x-icon").sendFile(icon);
  });
  // Express matches /admin and /admin/ alike (non-strict routing): only the bare path is redirected.
  router.get([CONSOLE_PATH, `${CONSOLE_PATH}/{*route}`], (req, res) => {
    if (req.originalUrl.split("?")[0] === CONSOLE_PATH) return res.redirect(301, `${CONSOLE_PATH}/`);
    sendPage(req, res, consolePage(), CONSOLE_CSP);
  });
  return router;
}

/** The bundled GraphiQL explorer, for a browser opening /graphql (API clients get Apollo as before). */
export function explorerPage() {
  const explorer = page("explorer.html");
  return (req: Request, res: Response, next: express.NextFunction) => {
    const browserVisit = req.method === "GET" && req.query.query === undefined && (req.get("accept") ?? "").includes("text/html");
    if (!browserVisit) return next();
    sendPage(req, res, explorer(), EXPLORER_CSP);
  };
}
