import helmet from "helmet";

type Directives = Record<string, Iterable<string>>;

/**
 * The policy of everything the service answers by default: JSON, YAML and the plain SSO pages, which
 * load nothing, so nothing may be loaded, framed or posted elsewhere.
 */
export const DEFAULT_CSP: Directives = {
  defaultSrc: ["'none'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
  formAction: ["'self'"],
};

/**
 * helmet's headers for every response (nosniff, no-referrer, frame and cross-origin policies, HSTS,
 * no X-Powered-By) with the default policy above. A route serving a page with its own needs mounts
 * `contentSecurityPolicy(directives)` in front of it, which replaces this header for its responses.
 */
export function securityHeaders() {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: DEFAULT_CSP },
    referrerPolicy: { policy: "no-referrer" },
  });
}

/** A route's own Content-Security-Policy, replacing the default one (e.g. `app.use("/admin", contentSecurityPolicy({...}))`). */
export function contentSecurityPolicy(directives: Directives) {
  return helmet.contentSecurityPolicy({ useDefaults: false, directives });
}
