import { generateSync } from "otplib";
import type { Page } from "playwright-core";
import { eventually } from "../helpers/eventually";
import { signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * Two-factor sign-in in the console, as a person does it: enrol on the Two-factor sign-in page with a
 * code computed (as an authenticator app would) from the secret the page shows, keep the recovery
 * codes; sign out; sign in with password and code, with a recovery code; a wrong code says so.
 */
jest.setTimeout(120_000);
let rig: ConsoleRig;

beforeAll(async () => {
  rig = await startConsoleRig();
}, 60_000);
afterAll(() => rig?.stop());

/** The code of the step `offsetSteps` after the current one (a step's code is accepted once). */
const totp = (secret: string, offsetSteps = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });

const WRONG_CODE = /That code is not valid, or was used already/;

async function auditTypes(email: string): Promise<string[]> {
  await rig.app.runtime.services.audit.chainCommitted();
  const [rows] = await rig.app.runtime.sequelize.query(
    `SELECT event_type AS type FROM audit_events WHERE user_email = :email AND event_type LIKE 'auth.mfa.%' ORDER BY occurred_at`,
    { replacements: { email } },
  );
  return (rows as Array<{ type: string }>).map((row) => row.type);
}

/** Past the sign-in page: on the page the sign-in came from. */
const signedIn = (page: Page) => page.waitForURL((url) => url.pathname.startsWith("/admin/") && !url.pathname.startsWith("/admin/sign-in"));

/** Signs out from the console's top bar (behind the menu on a narrow screen). */
async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/admin\/sign-in/);
}

test("enrol on the page, then sign in with password and code, with a recovery code; a wrong code is refused with a clear error", async () => {
  const user = await rig.createUser("admin");
  const { context, page, foreign, problems } = await rig.open();
  try {
    await page.goto("/admin/two-factor");
    await signIn(page, user.email);
    await page.waitForURL(/\/admin\/two-factor$/);
    await expect(page.getByTestId("two-factor-state").textContent()).resolves.toBe("Off");
    await expect(page.locator(".who").getByRole("link", { name: "Two-factor sign-in" }).isVisible()).resolves.toBe(true);

    // Enrol: the QR code is drawn in the page (an SVG holding the otpauth URI's modules), the secret is shown as text.
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    const qr = page.getByRole("img", { name: "QR code for your authenticator app" });
    await qr.waitFor();
    expect(await qr.evaluate((svg) => svg.tagName.toLowerCase())).toBe("svg");
    const secret = (await page.getByTestId("totp-secret").getAttribute("data-secret"))!;
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect((await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "")).toBe(secret);

    // A wrong first code: refused, the factor stays off.
    await page.getByLabel("Code from the app").fill("000000" === totp(secret) ? "111111" : "000000");
    await page.getByRole("button", { name: "Turn on" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/not valid/);

    await page.getByLabel("Code from the app").fill(totp(secret));
    await page.getByRole("button", { name: "Turn on" }).click();
    const codes = await eventually(async () => {
      const listed = await page.getByTestId("recovery-codes").locator("code").allTextContents();
      expect(listed).toHaveLength(10);
      return listed;
    });
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const download = page.getByRole("link", { name: "Download codes" });
    expect(await download.getAttribute("download")).toBe("finance-gateway-recovery-codes.txt");
    expect(decodeURIComponent((await download.getAttribute("href"))!)).toContain(codes.join("\n"));
    await page.getByRole("button", { name: "I have saved them" }).click();
    await eventually(async () => expect(await page.getByTestId("two-factor-state").textContent()).toBe("On"));
    expect(await page.locator(".facts").textContent()).toContain("10 unused codes");
    await signOut(page);

    // Password alone: the page asks for the code (no error yet); a wrong code says so and signs nobody in.
    await signIn(page, user.email);
    const code = page.getByLabel("Authentication code");
    await code.waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    await code.fill("123456" === totp(secret, 1) ? "654321" : "123456");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await eventually(async () => expect(await page.getByRole("alert").textContent()).toMatch(WRONG_CODE));
    expect(page.url()).toMatch(/\/admin\/sign-in/);

    // The next step's code (the enrolment used this one): signed in.
    await code.fill(totp(secret, 1));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await signedIn(page);
    await signOut(page);

    // A recovery code instead of the app's code; the same recovery code a second time is refused.
    await signIn(page, user.email);
    await page.getByLabel("Authentication code").fill(codes[3].toUpperCase());
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await signedIn(page);
    await page.goto("/admin/two-factor");
    await eventually(async () => expect(await page.locator(".facts").textContent()).toContain("9 unused codes"));
    await signOut(page);
    await signIn(page, user.email);
    await page.getByLabel("Authentication code").fill(codes[3]);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await eventually(async () => expect(await page.getByRole("alert").textContent()).toMatch(WRONG_CODE));

    expect(await auditTypes(user.email)).toEqual(["auth.mfa.enrolled", "auth.mfa.verified", "auth.mfa.recovery_code_used"]);
    expect(foreign).toEqual([]);
    // The refused sign-ins answer 401 (the browser logs each as a failed resource); nothing else went wrong.
    expect(problems.filter((problem) => !problem.includes("401"))).toEqual([]);
  } catch (error) {
    await page.screenshot({ path: "/tmp/console-two-factor-fail.png" });
    console.log(page.url(), problems, foreign);
    throw error;
  } finally {
    await context.close();
  }
});
