import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Debian's chromium (`.ci/run` installs it); playwright-core drives it, no browser download. */
export const CHROMIUM = "/usr/bin/chromium";

export type HeadlessChromium = { browser: Browser; close(): Promise<void> };

/**
 * Headless Chromium with a fresh profile (playwright makes a new one per launch and removes it). Background networking is off: the machine has no internet,
 * and the tests check that the console itself asks nothing of anyone but the service.
 */
export async function launchChromium(): Promise<HeadlessChromium> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}

/**
 * A new context (its own cookies and storage) for `baseUrl`. Every request that leaves the service's
 * origin is recorded in `foreign` (watched, not intercepted: routing a context's requests through the test
 * costs a round trip each and turns the browser's cache off, so every page load fetched the whole bundle
 * again), and every console error (CSP violations among them) is kept in `problems`, so a test can assert
 * the page stayed self-contained and clean.
 */
export async function openContext(
  browser: Browser,
  baseUrl: string,
  options: { viewport?: { width: number; height: number }; colorScheme?: "light" | "dark"; timezoneId?: string } = {},
): Promise<{ context: BrowserContext; page: Page; foreign: string[]; problems: string[] }> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: options.viewport ?? { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? "light",
    timezoneId: options.timezoneId ?? "UTC",
  });
  context.setDefaultTimeout(15_000);
  const origin = new URL(baseUrl).origin;
  const foreign: string[] = [];
  const problems: string[] = [];
  context.on("request", (request) => {
    const url = new URL(request.url());
    if (url.origin !== origin && url.protocol !== "data:" && url.protocol !== "blob:") foreign.push(url.href);
  });
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  return { context, page, foreign, problems };
}
