import fs from "node:fs";
import type { Page } from "playwright-core";
import type { Roles } from "../../src/runtime";
import { launchChromium, openContext, type HeadlessChromium } from "./chromium";
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
