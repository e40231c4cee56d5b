import type { Page } from "playwright-core";
import { eventually } from "../helpers/eventually";
import { apiAs, seriousViolations, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * An auditor names users by e-mail wherever the console asks for users (the audit log's filter, Exports,
 * Reports): they type the start of an address, pick from the members of their family, and the request
 * carries the user's id. Nobody pastes ids; a chip named by id alone (from a link) shows the e-mail.
 */
jest.setTimeout(180_000);
let rig: ConsoleRig;
let auditor: { id: string; email: string };
let colleague: { id: string; email: string };
let stranger: { id: string; email: string };
const stamp = Date.now();

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  auditor = await rig.createUser("auditor", `audrey.${stamp}@picker.example`);
  const users = rig.app.runtime.services.users;
  const inFamily = await users.create({ email: `carol.${stamp}@picker.example`, name: "Carol Colleague", familyOfEmail: auditor.email });
  colleague = { id: inFamily.id, email: inFamily.email };
  // Another family's member with a similar address: not the auditor's to find.
  const other = await users.create({ email: `carl.${stamp}@picker.example` });
  stranger = { id: other.id, email: other.email };
}, 120_000);
afterAll(() => rig?.stop());

/** Types the start of the colleague's address into the page's user picker and picks them. */
async function pickColleague(page: Page) {
  const picker = page.getByRole("combobox", { name: "Users" });
  await picker.fill("car");
  const matches = page.getByRole("listbox", { name: "Matching users" });
  await matches.getByRole("button", { name: `${colleague.email} (Carol Colleague)` }).waitFor();
  // Only the auditor's family: the other family's carl is not offered.
  expect(await matches.getByRole("button").allTextContents()).toEqual([`${colleague.email} (Carol Colleague)`]);
  await matches.getByRole("button", { name: colleague.email }).click();
  const chip = page.getByRole("list", { name: "Chosen users" }).getByRole("listitem");
  await eventually(async () => expect(await chip.allTextContents()).toEqual([`${colleague.email}✕`]));
  expect(await chip.getAttribute("title")).toBe(colleague.id);
}

test("an auditor picks a user by e-mail in the audit log's filter, Exports and Reports; the requests carry the id", async () => {
  const { context, page, problems } = await rig.open();
  const api = await apiAs(rig.app.url, auditor.email);
  try {
    await page.goto("/admin/audit-logs");
    await signIn(page, auditor.email);
    await page.waitForURL(/\/admin\/audit-logs/);

    // The audit log: the filter is the user's id in the URL.
    await pickColleague(page);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.getAll("user").length === 1);
    expect(new URL(page.url()).searchParams.getAll("user")).toEqual([colleague.id]);
    // Opened from the link alone, the chip still names the user by e-mail.
    await page.reload();
    const chip = page.getByRole("list", { name: "Chosen users" }).getByRole("listitem");
    await eventually(async () => expect(await chip.allTextContents()).toEqual([`${colleague.email}✕`]));
    expect({ auditLog: await seriousViolations(page) }).toEqual({ auditLog: [] });

    // Exports: the export's filter holds the id.
    await page.goto("/admin/exports");
    await page.getByRole("heading", { name: "Exports", level: 1 }).waitFor();
    await pickColleague(page);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("user") === colleague.id);
    await page.getByRole("button", { name: "Create export" }).click();
    await eventually(async () => {
      const { auditExports } = await api<{ auditExports: Array<{ params: any }> }>(`{ auditExports(kind: EVENTS) { params } }`);
      expect(auditExports.map((request) => request.params.filter?.userIds)).toEqual([[colleague.id]]);
    });

    // Reports: the report's users are the id.
    await page.goto("/admin/reports");
    await page.getByLabel("Template").waitFor();
    await pickColleague(page);
    expect({ reports: await seriousViolations(page) }).toEqual({ reports: [] });
    await page.getByRole("button", { name: "Create report" }).click();
    await eventually(async () => {
      const { auditExports } = await api<{ auditExports: Array<{ params: any }> }>(`{ auditExports(kind: REPORT) { params } }`);
      expect(auditExports.map((request) => request.params.report?.userIds)).toEqual([[colleague.id]]);
    });

    // An address nobody in the family has says so, rather than offering nothing silently.
    await page.getByRole("combobox", { name: "Users" }).fill(stranger.email);
    await page.getByText(`No user’s e-mail begins with “${stranger.email}”.`).waitFor();
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
});
