/**
 * The retention API's edges: administrators change tiers (audited) and restore; auditors read and
 * search but cannot change or restore; members see nothing; hostile values are 400s naming the value.
 */
import { createUser } from "../helpers/fixtures";
import { useGraphqlApp } from "../helpers/graphql";

const { app, graphqlAs } = useGraphqlApp();

const RETENTION = `{ auditRetention { databaseDays defaultTier categoryTiers { pattern tier } changedAt tiers { name retentionDays } lastRun { startedAt } storage checkpointKey } }`;
const UPDATE = `mutation($input: RetentionSettingsInput!) { updateAuditRetention(input: $input) { databaseDays defaultTier categoryTiers { pattern tier } changedAt } }`;

test("Standard by default; administrators change tiers per category (audited); auditors read; members are refused", async () => {
  const services = app().runtime.services;
  const admin = graphqlAs((await createUser(services, { role: "admin" })).key);
  const auditor = graphqlAs((await createUser(services, { role: "auditor" })).readKey);
  const member = graphqlAs((await createUser(services)).key);

  const initial = (await auditor.ok(RETENTION)).auditRetention;
  expect(initial).toMatchObject({ databaseDays: 90, defaultTier: "standard", categoryTiers: [], changedAt: null, lastRun: null });
  expect(initial.tiers).toEqual([
    { name: "standard", retentionDays: 90 },
    { name: "extended", retentionDays: 365 },
    { name: "compliance", retentionDays: 2555 },
  ]);
  expect(initial.checkpointKey).toMatch(/^finance-gateway\/audit\+[0-9a-f]{8}\+/);

  const input = { databaseDays: 30, defaultTier: "extended", categoryTiers: [{ pattern: "auth.*", tier: "compliance" }] };
  expect((await admin.ok(UPDATE, { input })).updateAuditRetention).toMatchObject({ ...input, changedAt: expect.any(String) });
  const events = await services.audit.list({ eventTypes: ["audit.retention.updated"] }, {});
  expect(events.events[0].changes).toMatchObject({ databaseDays: { old: 90, new: 30 }, defaultTier: { old: "standard", new: "extended" } });

  expect((await auditor.fail(UPDATE, { input })).extensions.code).toBe("FORBIDDEN");
  expect((await auditor.fail(`mutation { restoreAuditArchive(month: "2024-01") { month } }`)).extensions.code).toBe("FORBIDDEN");
  expect((await member.fail(RETENTION)).extensions.code).toBe("FORBIDDEN");

  for (const [bad, message] of [
    [{ ...input, databaseDays: -1 }, /databaseDays/],
    [{ ...input, defaultTier: "forever" }, /defaultTier/],
    [{ ...input, categoryTiers: [{ pattern: "nope.*", tier: "compliance" }] }, /names no event type/],
    [{ ...input, categoryTiers: Array.from({ length: 51 }, () => ({ pattern: "auth.*", tier: "extended" })) }, /at most 50/],
  ] as const) {
    const error = await admin.fail(UPDATE, { input: bad });
    expect(error.extensions.code).toBe("BAD_REQUEST");
    expect(error.message).toMatch(message);
  }
  expect((await admin.fail(`mutation { restoreAuditArchive(month: "2024-13") { month } }`)).extensions.code).toBe("BAD_REQUEST");
  expect((await admin.fail(`mutation { restoreAuditArchive(month: "2024-01") { month } }`)).extensions.code).toBe("CONFLICT");
  const search = `query($ids: [ID!]!, $after: String) { auditArchiveSearch(archiveIds: $ids, after: $after) { nodes { id } } }`;
  expect((await auditor.fail(search, { ids: ["00000000-0000-4000-8000-000000000000"] })).extensions.code).toBe("NOT_FOUND");
  expect((await auditor.fail(search, { ids: [] })).extensions.code).toBe("BAD_REQUEST");
});
