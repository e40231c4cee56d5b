import fs from "node:fs";
import type { Locator, Page } from "playwright-core";
import type { Roles } from "../../src/app/runtime";
import { launchChromium, openContext, type HeadlessChromium } from "./chromium";
import { runInAuditContext } from "../../src/platform/common/audit-context";
import { startTestApp, type TestApp } from "./test-app";

export const PASSWORD = "console test password 1";

export type ConsoleRig = {
  app: TestApp;
  chromium: HeadlessChromium;
  admin: { id: string; email: string };
  /** A user with a password and a role, as `admin create` (or an administrator) would make one. */
  createUser(role: "admin" | "auditor" | "member", email?: string): Promise<{ id: string; email: string }>;
  open(options?: Parameters<typeof openContext>[2]): ReturnType<typeof openContext>;
  stop(): Promise<void>;
};

let sequence = 0;

/**
 * The service (its own database) and a headless Chromium, with one administrator who signs in with a
 * password. `roles`: also run the workers in the service's process (a page whose work they do).
 */
export async function startConsoleRig(env: Record<string, string> = {}, roles: Partial<Roles> = {}): Promise<ConsoleRig> {
  const app = await startTestApp({ env, roles });
  const chromium = await launchChromium();
  const createUser = async (role: "admin" | "auditor" | "member", email = `${role}${++sequence}-${Date.now()}@example.test`) => {
    const user = await app.runtime.services.users.create({ email, role, password: PASSWORD });
    return { id: user.id, email };
  };
  const admin = await createUser("admin", `root${Date.now()}@example.test`);
  return {
    app,
    chromium,
    admin,
    createUser,
    open: (options) => openContext(chromium.browser, app.url, options),
    async stop() {
      await chromium.close();
      await app.stop();
    },
  };
}

/** Signs in on the console's sign-in page, as a person would. */
export async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** A failed login from `ip` (the service trusts X-Forwarded-For from loopback), recorded as auth.login.failed. */
export async function failLogin(baseUrl: string, email: string, ip: string): Promise<void> {
  const response = await fetch(`${baseUrl}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ email, password: "not the password at all" }),
  });
  if (response.status !== 401) throw new Error(`expected a refused login, got ${response.status}`);
}

/**
 * Failed logins from `ips`, in that order, recorded straight through the audit service (setup only: a
 * real one goes through scrypt, which a loaded machine pays dearly for in bulk).
 */
export async function seedFailedLogins(app: TestApp, ips: string[]): Promise<void> {
  const { services, sequelize } = app.runtime;
  for (const ip of ips) {
    await runInAuditContext({ ipAddress: ip, userAgent: "seed", requestId: null, sessionId: null }, () =>
      sequelize.transaction((transaction) =>
        services.audit.record(transaction, { type: "auth.login.failed", error: "invalid_credentials", action: "login" }),
      ),
    );
  }
  await services.audit.chainCommitted();
}

/** Opens the events view of `query` in live mode, signing in on the way. */
export async function openLiveView(page: Page, email: string, query: string): Promise<void> {
  await page.goto(`/admin/audit-logs?${query}&live=1`);
  await signIn(page, email);
  await page.waitForURL(/\/admin\/audit-logs/);
}

/** The IP address column of the rows the reader can see in the table's scroller, top first. */
export async function rowIps(page: Page): Promise<string[]> {
  return page.getByTestId("events-scroller").evaluate((scroller) => {
    const box = scroller.getBoundingClientRect();
    return [...scroller.querySelectorAll("[role=row]")]
      .map((row) => ({ box: row.getBoundingClientRect(), ip: row.querySelectorAll("[role=gridcell]")[5]?.textContent ?? "" }))
      .filter((row) => row.box.bottom > box.top && row.box.top < box.bottom)
      .sort((a, b) => a.box.top - b.box.top)
      .map((row) => row.ip);
  });
}

/**
 * The page's GraphQL WebSockets pass through the test, which can drop them (as a network or a proxy
 * would) and refuse new ones until `allow()`: the console's own reconnection and gap fill are under test.
 */
export async function interruptibleSocket(page: Page) {
  const open = new Set<{ close(options?: { code?: number; reason?: string }): Promise<void> }>();
  let blocked = false;
  let refused = 0;
  let connections = 0;
  await page.routeWebSocket(/\/graphql$/, (socket) => {
    if (blocked) {
      refused += 1;
      return void socket.close({ code: 1012, reason: "blocked by the test" });
    }
    connections += 1;
    socket.connectToServer();
    open.add(socket);
    socket.onClose(() => open.delete(socket));
  });
  return {
    get connections() {
      return connections;
    },
    get refused() {
      return refused;
    },
    /** Closes every open socket (code 1012, "service restart") and refuses new ones. */
    async drop() {
      blocked = true;
      await Promise.all([...open].map((socket) => socket.close({ code: 1012, reason: "dropped by the test" })));
      open.clear();
    },
    allow() {
      blocked = false;
    },
  };
}

/** Holds the page's GraphQL POSTs whose body matches, from now until `release()` sends them on (and stops holding). */
export function holdRequests(page: Page, matches: (body: string) => boolean) {
  const held: Array<() => Promise<void>> = [];
  let holding = true;
  void page.route(/\/graphql$/, (route) => {
    const body = route.request().postData() ?? "";
    if (!holding || !matches(body)) return route.fallback();
    held.push(() => route.fallback());
  });
  return {
    get held() {
      return held.length;
    },
    async release() {
      holding = false;
      await Promise.all(held.splice(0).map((send) => send()));
    },
  };
}

/**
 * Clicks `button` and declines the confirmation it asks. Resolves once the page has handled the answer,
 * with the GraphQL POSTs it sent from the click on: a declined confirmation sends none, so nothing changed.
 */
export async function declineConfirmation(page: Page, button: Locator): Promise<string[]> {
  const sent: string[] = [];
  const record = (request: { url(): string; method(): string; postData(): string | null }) => {
    if (request.method() === "POST" && request.url().endsWith("/graphql")) sent.push(request.postData() ?? "");
  };
  page.on("request", record);
  try {
    const declined = new Promise<void>((resolve) => page.once("dialog", (dialog) => void dialog.dismiss().then(resolve)));
    await button.click();
    await declined;
    // A task after the click handler's: whatever the answer made it do has started by then.
    await page.evaluate(() => undefined);
    return sent;
  } finally {
    page.off("request", record);
  }
}

const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, which the page's CSP (rightly) does not let a script tag do.
  await page.evaluate(AXE);
  const results = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return results
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}

/** GraphQL as `email` (a bearer token from a password sign-in): setup a page then shows, or the API's own answer to compare with. */
export async function apiAs(baseUrl: string, email: string) {
  const login = await fetch(`${baseUrl}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const { access_token } = (await login.json()) as { access_token: string };
  return async <Data = Record<string, any>>(query: string, variables: Record<string, unknown> = {}): Promise<Data> => {
    const response = await fetch(`${baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: Data; errors?: Array<{ message: string }> };
    if (body.errors?.length) throw new Error(`GraphQL refused: ${body.errors.map((error) => error.message).join("; ")}`);
    return body.data!;
  };
}

/**
 * Counts the page's fetches in the page itself (install with `page.addInitScript(countFetches)` before
 * the first navigation): how many were started, how many are in flight, and how many were answered per
 * path. What `readsSettled` waits on, and what a test that counts the console's requests reads.
 */
export function countFetches(): void {
  const page = globalThis as any;
  const counts = { started: 0, inFlight: 0, answered: {} as Record<string, number> };
  page.__fetches = counts;
  const fetch = page.fetch.bind(page);
  page.fetch = async (input: any, init?: any) => {
    const path = new URL(typeof input === "string" ? input : input.url, page.location.href).pathname;
    counts.started += 1;
    counts.inFlight += 1;
    try {
      const response = await fetch(input, init);
      counts.answered[path] = (counts.answered[path] ?? 0) + 1;
      return response;
    } finally {
      counts.inFlight -= 1;
    }
  };
}

/**
 * Waits until the page has started its reads and every one is answered, and a frame later none has
 * started since (a read that follows another's answer). A condition, where Playwright's "networkidle"
 * waits out half a second of silence after every page. Needs `countFetches` installed.
 */
export async function readsSettled(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const browser = globalThis as any;
    // React runs a page's effects (its reads) after the frame that shows it.
    const nextFrame = () => new Promise((resolve) => browser.requestAnimationFrame(() => browser.setTimeout(resolve, 0)));
    for (;;) {
      await nextFrame();
      while (browser.__fetches.inFlight > 0) await new Promise((resolve) => browser.setTimeout(resolve, 5));
      const started = browser.__fetches.started;
      await nextFrame();
      if (browser.__fetches.inFlight === 0 && browser.__fetches.started === started) return;
    }
  });
}
