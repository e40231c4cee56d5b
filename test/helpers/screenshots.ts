import path from "node:path";
import type { Page } from "playwright-core";

/** The console's screenshots, committed and shown in the README and the pages of docs/. */
export const SCREENSHOT_DIR = path.join(__dirname, "..", "..", "docs", "console");

/** Every page of the console as a phone (390 px) and a desktop (1280 px) show it, in docs/console.md. */
export const SCREEN_PAGES = [
  "sign-in",
  "audit-log",
  "event-detail",
  "alerts",
  "streaming",
  "exports",
  "reports",
  "archives",
  "sso-providers",
  "users",
  "two-factor",
] as const;
export const SCREEN_WIDTHS = [390, 1280] as const;
const SCREENS = SCREEN_PAGES.flatMap((page) => SCREEN_WIDTHS.map((width) => `${page}-${width}.png` as const));

/** Every screenshot the manual shows, by file name under docs/console/. */
export const CONSOLE_SCREENSHOTS = [
  ...SCREENS,
  "sign-in.png",
  "audit-log.png",
  "event-detail.png",
  "audit-log-dark-768.png",
  "sso-providers.png",
  "users.png",
  "explorer.png",
  "exports.png",
  "reports.png",
  "streaming.png",
] as const;

/**
 * Takes one of the manual's screenshots, only when asked: `npm run docs:screenshots` sets
 * CONSOLE_SCREENSHOTS=1. An ordinary test run leaves the committed images alone.
 */
export async function documentationScreenshot(
  page: Page,
  name: (typeof CONSOLE_SCREENSHOTS)[number],
  options: { fullPage?: boolean } = {},
): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== "1") return;
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: options.fullPage ?? false });
}
