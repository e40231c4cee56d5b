import type { Page } from "playwright-core";
import { eventually } from "../helpers/eventually";
import { apiAs, failLogin, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

// Functions passed to page.evaluate run in the browser, where these exist.
declare const window: any;
declare const document: any;

/**
 * No cut text without a way to read it: on every page at a phone's, a tablet's and a desktop's width,
 * every box whose text is clipped (wider or taller than the box, which hides the rest or ends it in an
 * ellipsis) carries its whole text on hover (a title on it, inside it or around it), or sits in an
 * expandable part (<details>). Seeded with values that do not fit: long e-mails, names and addresses.
 */
jest.setTimeout(600_000);
let rig: ConsoleRig;
const WIDTHS = [390, 768, 1280];
const LONG_EMAIL = "someone.with.a.really.rather.long.address.indeed@subdomain.example.test";
const PAGES = [
  "/admin/audit-logs",
  "/admin/audit-logs?type=auth.login.failed&event=",
  "/admin/alerts",
  "/admin/streaming",
  "/admin/exports",
  "/admin/reports",
  "/admin/archives",
  "/admin/sso-providers",
  "/admin/users",
  "/admin/two-factor",
];

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0", OUTBOUND_ALLOWLIST: "127.0.0.1/32" });
  await rig.createUser("auditor", LONG_EMAIL);
  for (const ip of ["2001:db8:85a3:1234:5678:8a2e:370:7334", "192.0.2.10"]) await failLogin(rig.app.url, LONG_EMAIL, ip);
  const api = await apiAs(rig.app.url, rig.admin.email);
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
  const channel = await api(`mutation($input: AlertChannelInput!) { createAlertChannel(input: $input) { channel { id } } }`, {
    input: {
      kind: "webhook",
      name: "Security mailbox of the operations team, night shift",
      settings: [{ name: "url", value: "http://127.0.0.1:9/alerts/with/a/long/path/to/the/receiver" }],
    },
  });
  await api(`mutation($ids: [ID!]) { enableAlertPreset(preset: "brute_force", channelIds: $ids) { id } }`, {
    ids: [channel.createAlertChannel.channel.id],
  });
  // Requests in the lists of Exports and Reports (no worker: they wait, which the lists show too).
  await api(`mutation($input: AuditExportInput!) { createAuditExport(input: $input) { id } }`, {
    input: { format: "CSV", filter: { eventTypes: ["auth.login.failed"], userIds: [rig.admin.id] } },
  });
  await api(`mutation($input: AuditReportInput!) { createAuditReport(input: $input) { id } }`, {
    input: { template: "AUTHENTICATION", format: "PDF", from: "2026-10-01", to: "2026-10-31", userIds: [rig.admin.id] },
  });
  await rig.app.runtime.services.audit.chainCommitted();
}, 180_000);
afterAll(() => rig?.stop());

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

test(`every page at ${WIDTHS.join(", ")} px: every clipped text can be read whole`, async () => {
  for (const width of WIDTHS) {
    const { context, page, problems } = await rig.open({ viewport: { width, height: 844 } });
    try {
      await page.goto("/admin/sign-in");
      await signIn(page, rig.admin.email);
      await page.waitForURL(/\/admin\/audit-logs/, { timeout: 60_000 });
      for (const view of PAGES) {
        await page.goto(view);
        await page.locator(".topbar").waitFor();
        const drawer = view.includes("event=");
        if (drawer) {
          await eventually(async () => expect(await page.locator(".events-scroller [role=row]").count()).toBeGreaterThan(0));
          await page.locator(".events-scroller [role=row]").first().click();
          await page.getByRole("complementary").waitFor();
        }
        await page.waitForLoadState("networkidle");
        // Late answers (facets, chart, lists) may still change what fits: each page settles, then has no unreadable cut.
        await eventually(async () =>
          expect({ view, width, cut: await unreadableCuts(page, drawer ? "main, aside" : "main") }).toEqual({ view, width, cut: [] }),
        );
      }
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }
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
