import type { IncomingMessage, ServerResponse } from "node:http";
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

type HeaderStep = { set: [string, string] } | { remove: string };

/**
 * The header changes a helmet middleware makes, recorded once. Every policy here is fixed at boot (no
 * per-request nonce), so the answer is the same for every request: replaying the recorded steps is
 * helmet's output without its per-request work (a dozen calls building the same strings).
 */
function recordSteps(middleware: ReturnType<typeof helmet> | ReturnType<typeof helmet.contentSecurityPolicy>): HeaderStep[] {
  const steps: HeaderStep[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => steps.push({ set: [name, String(value)] }),
    removeHeader: (name: string) => steps.push({ remove: name }),
  };
  let finished = false;
  // helmet calls only setHeader and removeHeader on the response, and reads nothing of a request under fixed policies.
  middleware({ headers: {} } as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    finished = true;
  });
  if (!finished) throw new Error("helmet did not finish synchronously: its headers cannot be precomputed");
  return steps;
}

function replay(steps: HeaderStep[]) {
  return (_req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    for (const step of steps) {
      if ("set" in step) res.setHeader(step.set[0], step.set[1]);
      else res.removeHeader(step.remove);
    }
    next();
  };
}

/**
 * helmet's headers for every response (nosniff, no-referrer, frame and cross-origin policies, HSTS,
 * no X-Powered-By) with the default policy above, precomputed at boot. A route serving a page with its
 * own needs mounts `contentSecurityPolicy(directives)` in front of it, which replaces this header for
 * its responses.
 */
export function securityHeaders() {
  return replay(
    recordSteps(
      helmet({
        contentSecurityPolicy: { useDefaults: false, directives: DEFAULT_CSP },
        referrerPolicy: { policy: "no-referrer" },
      }),
    ),
  );
}

/** A route's own Content-Security-Policy, replacing the default one (e.g. `app.use("/admin", contentSecurityPolicy({...}))`). */
export function contentSecurityPolicy(directives: Directives) {
  return replay(recordSteps(helmet.contentSecurityPolicy({ useDefaults: false, directives })));
}
