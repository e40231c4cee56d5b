import type { Page } from "playwright-core";
import { eventually } from "../helpers/eventually";
import {
  apiAs,
  countFetches,
  failLogin,
  readsSettled,
  seriousViolations,
  signIn,
  startConsoleRig,
  type ConsoleRig,
} from "../helpers/console";
import { documentationScreenshot, SCREEN_PAGES, SCREEN_WIDTHS } from "../helpers/screenshots";

// Functions passed to page.evaluate run in the browser, where these exist.
declare const window: any;
declare const document: any;

/**
 * Every page of the console at a phone's, a tablet's and a desktop's width, in light and dark: nothing
 * wider than the window (no sideways scrolling of the page), every control reachable (in view, or
 * scrolled to inside its own box, and not covered by anything), axe finds nothing serious on it or on
 * the sign-in page, and (in light) no cut text without a way to read it: every box whose text is clipped
 * (wider or taller than the box, which hides the rest or ends it in an ellipsis) carries its whole text on
 * hover (a title on it, inside it or around it), or sits in an expandable part (<details>). Seeded with
 * values that do not fit: long e-mails, names and addresses.
 */
jest.setTimeout(600_000);
let rig: ConsoleRig;
/** The page's and its top bar's background and text colours, per colour scheme (the walk records them). */
const colours: Record<string, string[]> = {};
const WIDTHS = [390, 768, 1280];
const LONG_EMAIL = "someone.with.a.really.rather.long.address.indeed@subdomain.example.test";
/** Each page, and the name of its documentation screenshots. */
const PAGES: Array<[string, (typeof SCREEN_PAGES)[number]]> = [
  ["/admin/audit-logs", "audit-log"],
  ["/admin/audit-logs?type=auth.login.failed&event=", "event-detail"],
  ["/admin/alerts", "alerts"],
  ["/admin/streaming", "streaming"],
  ["/admin/exports", "exports"],
  ["/admin/reports", "reports"],
  ["/admin/archives", "archives"],
  ["/admin/sso-providers", "sso-providers"],
  ["/admin/users", "users"],
  ["/admin/two-factor", "two-factor"],
];
/** The documentation screenshots are the light theme at a phone's and a desktop's width. */
const screenshot = (page: Page, name: (typeof SCREEN_PAGES)[number], width: number, scheme: string) =>
  scheme === "light" && (SCREEN_WIDTHS as readonly number[]).includes(width)
    ? documentationScreenshot(page, `${name}-${width as (typeof SCREEN_WIDTHS)[number]}.png`)
    : Promise.resolve();

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0", OUTBOUND_ALLOWLIST: "127.0.0.1/32" });
  for (const ip of ["10.1.2.3", "192.0.2.10"]) await failLogin(rig.app.url, "someone.with.a.rather.long.address@example.test", ip);
  await rig.createUser("auditor", "auditor.with.a.long.name@example.test");
  const api = await apiAs(rig.app.url, rig.admin.email);
  // Values that do not fit anywhere (long e-mails, names and addresses): every cut they cause must be
  // readable. Seeded first, so the log's newest rows (the walk looks for one) are the rows below.
  await rig.createUser("auditor", LONG_EMAIL);
  for (const ip of ["2001:db8:85a3:1234:5678:8a2e:370:7334", "192.0.2.10"]) await failLogin(rig.app.url, LONG_EMAIL, ip);
  await api(
    `mutation { updateUser(id: "${rig.admin.id}", input: { name: "Administrator with a name far longer than any column" }) { id } }`,
  );
  await api(`mutation($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
    input: {
      name: "Acme Corporation single sign-on for the whole of the northern hemisphere",
      slug: "acme-corporation-northern-hemisphere",
      issuer: "https://127.0.0.1:9/realms/a-realm-with-a-long-name/and/a/path",
      clientId: "console-client-with-a-long-identifier",
      clientSecret: "s3cret",
    },
  });
  await api(`mutation($input: StreamDestinationInput!) { createStreamDestination(input: $input) { destination { id } } }`, {
    input: {
      kind: "webhook",
      name: "Security operations centre webhook for every authentication event",
      url: "http://127.0.0.1:9/hooks/audit-events/with/a/path/that/goes/on/and/on/for/a/while",
      eventTypes: ["auth.*", "user.*", "provider.*"],
      enabled: false,
    },
  });
  // Requests in the lists of Exports and Reports (no worker: they wait, which the lists show too).
  await api(`mutation($input: AuditExportInput!) { createAuditExport(input: $input) { id } }`, {
    input: { format: "CSV", filter: { eventTypes: ["auth.login.failed"], userIds: [rig.admin.id] } },
  });
  await api(`mutation($input: AuditReportInput!) { createAuditReport(input: $input) { id } }`, {
    input: { template: "AUTHENTICATION", format: "PDF", from: "2026-10-01", to: "2026-10-31", userIds: [rig.admin.id] },
  });
  // A row in every list, so each page shows its actions.
  await api(`mutation($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
    input: { name: "Acme identity", slug: "acme", issuer: "https://127.0.0.1:9/realms/main", clientId: "console", clientSecret: "s3cret" },
  });
  await api(`mutation($input: StreamDestinationInput!) { createStreamDestination(input: $input) { destination { id } } }`, {
    input: {
      kind: "webhook",
      name: "Security webhook",
      url: "http://127.0.0.1:9/hooks/audit-events",
      eventTypes: ["auth.*"],
      enabled: false,
    },
  });
  const channel = await api(`mutation($input: AlertChannelInput!) { createAlertChannel(input: $input) { channel { id } } }`, {
    input: { kind: "webhook", name: "Security mailbox", settings: [{ name: "url", value: "http://127.0.0.1:9/alerts" }] },
  });
  await api(`mutation($ids: [ID!]) { enableAlertPreset(preset: "brute_force", channelIds: $ids) { id } }`, {
    ids: [channel.createAlertChannel.channel.id],
  });
  await rig.app.runtime.services.audit.chainCommitted();
}, 180_000);
afterAll(() => rig?.stop());

/**
 * Controls inside `scope` (the main area; the event drawer when it is open over the table) that a person
 * cannot reach: outside the window even after scrolling to them, or covered by something else. One
 * round trip for the whole page: in the browser, each control is scrolled to (every scrolling box around
 * it, as a person would) and hit-tested where it then stands.
 */
async function unreachable(page: Page, scope: string): Promise<string[]> {
  return page.evaluate(
    (selector: string) => {
      const out: string[] = [];
      for (const element of Array.from(document.querySelectorAll(selector)) as any[]) {
        // Playwright's :visible: rendered with a box, and not visibility:hidden.
        if (!element.checkVisibility({ visibilityProperty: true })) continue;
        // As Playwright scrolls to a control: only when it is out of view, then to the middle of every scrolling box.
        element.scrollIntoViewIfNeeded(true);
        const box = element.getBoundingClientRect();
        if (box.width === 0 || box.height === 0) continue;
        const name = `${element.tagName.toLowerCase()} “${(element.getAttribute("aria-label") ?? element.textContent ?? "").trim().slice(0, 40)}”`;
        if (box.right > window.innerWidth + 1 || box.left < -1) {
          out.push(`${name} is outside the window`);
          continue;
        }
        const x = Math.min(Math.max(box.left + box.width / 2, 0), window.innerWidth - 1);
        const y = Math.min(Math.max(box.top + box.height / 2, 0), window.innerHeight - 1);
        const hit = document.elementFromPoint(x, y);
        // A label wrapping a checkbox is the same control; anything else on top hides it.
        if (hit && (element.contains(hit) || hit.contains(element) || hit.closest("label")?.contains(element))) continue;
        out.push(`${name} is covered by ${hit ? `${hit.tagName.toLowerCase()}.${hit.className}` : "nothing"}`);
      }
      return out;
    },
    ["button", "a[href]", "input", "select", "summary"].map((control) => `${scope} ${control}`).join(", "),
  );
}

/** Boxes in `scope` whose text is clipped and whose whole text cannot be read on hover or by expanding. */
async function unreadableCuts(page: Page, scope: string): Promise<string[]> {
  return page.evaluate((selector: string) => {
    const normal = (text: string) => text.replace(/\s+/g, " ").trim();
    const out: string[] = [];
    for (const root of document.querySelectorAll(selector)) {
      for (const box of [root, ...root.querySelectorAll("*")]) {
        const style = window.getComputedStyle(box);
        // Clipping boxes only: visible overflow spills (the page test catches that), auto and scroll let it be scrolled to.
        const clipsX = ["hidden", "clip"].includes(style.overflowX) && box.scrollWidth > box.clientWidth + 1;
        const clipsY = ["hidden", "clip"].includes(style.overflowY) && box.scrollHeight > box.clientHeight + 1;
        if (!clipsX && !clipsY) continue;
        // Not shown, or kept for screen readers only (clipped to nothing on purpose, as .sr-only and a phone's table heads).
        if (box.getClientRects().length === 0) continue;
        let forScreenReaders = false;
        for (let node = box; node && !forScreenReaders; node = node.parentElement) {
          forScreenReaders = window.getComputedStyle(node).clip === "rect(0px, 0px, 0px, 0px)";
        }
        if (forScreenReaders) continue;
        const text = normal(box.innerText ?? "");
        if (!text) continue;
        const titles = [box.closest("[title]"), ...box.querySelectorAll("[title]")]
          .filter(Boolean)
          .map((element: any) => normal(element.getAttribute("title")))
          .join(" | ");
        const expandable = box.closest("details") !== null;
        if (titles.includes(text) || expandable) continue;
        out.push(
          `${box.tagName.toLowerCase()}.${String(box.className).split(" ")[0]} “${text.slice(0, 60)}” (title: “${titles.slice(0, 60)}”)`,
        );
      }
    }
    return out;
  }, scope);
}

async function openEventDetail(page: Page) {
  await eventually(async () => expect(await page.locator(".events-scroller [role=row]").count()).toBeGreaterThan(0));
  await page.locator(".events-scroller [role=row]").first().click();
  await page.getByRole("complementary").waitFor();
}

for (const scheme of ["light", "dark"] as const) {
  test(`every page at ${WIDTHS.join(", ")} px in ${scheme}: no sideways page scroll, every control reachable, axe clean`, async () => {
    for (const width of WIDTHS) {
      const { context, page, problems } = await rig.open({ colorScheme: scheme, viewport: { width, height: 844 } });
      await page.addInitScript(countFetches);
      try {
        await page.goto("/admin/sign-in");
        await page.getByLabel("E-mail").waitFor();
        await screenshot(page, "sign-in", width, scheme);
        expect({ view: "/admin/sign-in", width, scheme, violations: await seriousViolations(page) }).toEqual({
          view: "/admin/sign-in",
          width,
          scheme,
          violations: [],
        });
        await signIn(page, rig.admin.email);
        await page.waitForURL(/\/admin\/audit-logs/);
        // The theme follows the system's preference (emulated per context): the page's own colours change.
        await page.locator(".topbar").waitFor();
        colours[scheme] = await page.evaluate(() =>
          [document.documentElement, document.querySelector(".topbar")].flatMap((element: any) => {
            const style = window.getComputedStyle(element);
            return [style.backgroundColor, style.color];
          }),
        );
        for (const [view, name] of PAGES) {
          await page.goto(view);
          await page.locator(".topbar").waitFor();
          if (view.includes("event=")) await openEventDetail(page);
          // The enrolment's QR code, secret and code field are the page's widest part: open it (sign-in is unchanged until confirmed).
          if (name === "two-factor") await page.getByRole("button", { name: /Set up two-factor sign-in|Start again/ }).click();
          if (name === "two-factor") await page.getByLabel("Code from the app").waitFor();
          await readsSettled(page);
          // The log's rows, not "Loading…", in its picture: on a busy machine the network can idle before they come.
          if (name === "audit-log")
            await eventually(async () => expect(await page.locator(".events-scroller [role=row]").count()).toBeGreaterThan(0));
          await screenshot(page, name, width, scheme);
          if (name === "event-detail" && width === 768 && scheme === "dark") await documentationScreenshot(page, "audit-log-dark-768.png");
          if (name === "audit-log" && width === 1280) {
            // Names, not ids: provider.created names the provider by id; the table shows its name, the whole name and the id on hover.
            const cell = page.locator(".events-scroller [role=gridcell]", { hasText: "Acme identity" }).first();
            await eventually(async () => expect(await cell.getAttribute("title")).toMatch(/^Acme identity \([0-9a-f-]{36}\)$/));
          }
          const where = { view, width, scheme };

          // The page and its scrolling main area: neither is wider than the window.
          const widths = await page.evaluate(() =>
            [document.documentElement, document.getElementById("main")].map((element: any) => [element.scrollWidth, element.clientWidth]),
          );
          expect({ ...where, widths, fits: widths.every(([scroll, client]: number[]) => scroll <= client) }).toEqual({
            ...where,
            widths,
            fits: true,
          });
          expect({ ...where, violations: await seriousViolations(page) }).toEqual({ ...where, violations: [] });
          // Late answers (the facets, the chart) may still move things: the page settles, then every control is reachable.
          await eventually(async () =>
            expect({ ...where, unreachable: await unreachable(page, view.includes("event=") ? "aside" : "main") }).toEqual({
              ...where,
              unreachable: [],
            }),
          );
          // No cut text without a way to read it (a title on hover, or an expandable part).
          if (scheme === "light")
            await eventually(async () =>
              expect({ ...where, cut: await unreadableCuts(page, view.includes("event=") ? "main, aside" : "main") }).toEqual({
                ...where,
                cut: [],
              }),
            );
        }
        // The navigation: on a narrow screen behind a menu button, every page one tap away.
        const menu = page.getByRole("button", { name: "Menu" });
        if (await menu.isVisible()) await menu.click();
        for (const link of [
          "Audit log",
          "Alerts",
          "Audit streaming",
          "Exports",
          "Reports",
          "Retention & archives",
          "SSO providers",
          "Users",
          "GraphQL explorer",
        ]) {
          const target = page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: link });
          expect({ link, width, visible: await target.isVisible() }).toEqual({ link, width, visible: true });
        }
        // The viewer's own two-factor page is linked beside their name, with Sign out.
        const account = page.locator(".who").getByRole("link", { name: "Two-factor sign-in" });
        expect({ width, account: await account.isVisible() }).toEqual({ width, account: true });
        const signOut = page.getByRole("button", { name: "Sign out" });
        expect({ width, signOut: await signOut.isVisible() }).toEqual({ width, signOut: true });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });
}

test("the theme follows the system's preference: every colour of the page and its bar differs between light and dark", () => {
  expect(colours.light).toHaveLength(4);
  colours.light.forEach((colour, index) => expect({ index, dark: colours.dark[index] }).not.toEqual({ index, dark: colour }));
});

test("the console's icon is bundled and served at /favicon.ico, and its pages name it", async () => {
  for (const path of ["/favicon.ico", "/admin/favicon.ico"]) {
    const response = await fetch(`${rig.app.url}${path}`);
    expect({ path, status: response.status, type: response.headers.get("content-type") }).toEqual({
      path,
      status: 200,
      type: "image/x-icon",
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    // An ICO header (reserved 0, type 1 = icon) holding one PNG image.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.subarray(22, 26).toString("latin1")]).toEqual([0, 1, "\x89PNG"]);
  }
  const page = await (await fetch(`${rig.app.url}/admin/`)).text();
  expect(page).toMatch(/<link rel="icon" href="[^"]*favicon\.ico"/);
});

test("the check sees a cut: a clipped cell without a title is reported, and with one it is not", async () => {
  const { context, page } = await rig.open({ viewport: { width: 390, height: 844 } });
  try {
    await page.setContent(
      `<main><table><tr><td id="cell" style="max-width:60px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap">${LONG_EMAIL}</td></tr></table></main>`,
    );
    expect(await unreadableCuts(page, "main")).toEqual([expect.stringContaining(`td. “${LONG_EMAIL.slice(0, 60)}”`)]);
    await page.locator("#cell").evaluate((cell: any, email: string) => cell.setAttribute("title", email), LONG_EMAIL);
    expect(await unreadableCuts(page, "main")).toEqual([]);
  } finally {
    await context.close();
  }
});
