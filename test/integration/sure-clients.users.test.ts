import { seedDemo } from "../../src/app/cli/demo";
import { deletedEmailOf } from "../../src/finance/identity/user-admin.service";
import { apiKeyClient } from "../helpers/http";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlThroughApp } from "../helpers/sql";

/**
 * sure-cli's `users reset status`, `users reset --apply` and `users delete-me --apply` replayed as the
 * client sends them (cmd/sure-cli/root/users_cmd.go, internal/api/client.go): X-Api-Key and
 * Accept: application/json, DELETEs without a body. The figures are checked against SQL written here.
 */
jest.setTimeout(120_000);
let app: TestApp;
let demo: Awaited<ReturnType<typeof seedDemo>>;
let admin: ReturnType<typeof apiKeyClient>;
let elsewhere: TestUser;
const headers = { accept: "application/json" };

/** Upstream's reset status keys (sure's Family::FinancialDataReset, without syncs, with plaid_items). */
const UPSTREAM_COUNT_KEYS = [
  "account_statements",
  "family_exports",
  "imports",
  "import_sessions",
  "import_source_mappings",
  "import_rows",
  "import_mappings",
  "accounts",
  "account_shares",
  "account_providers",
  "entries",
  "transactions",
  "transfers",
  "rejected_transfers",
  "valuations",
  "trades",
  "holdings",
  "balances",
  "recurring_transactions",
  "rules",
  "rule_actions",
  "rule_conditions",
  "rule_runs",
  "budgets",
  "budget_categories",
  "categories",
  "tags",
  "taggings",
  "merchants",
  "family_merchant_associations",
  "provider_items",
  "active_storage_attachments",
  "plaid_items",
];

const sql = sqlThroughApp(() => app.runtime.sequelize);

/** The family's rows as the test counts them, table by table. */
async function familyCounts(familyId: string) {
  const [row] = await sql<Record<string, number>>(
    `SELECT (SELECT count(*) FROM accounts WHERE family_id = $1)::int AS accounts,
            (SELECT count(*) FROM transactions WHERE family_id = $1)::int AS transactions,
            (SELECT count(*) FROM valuations WHERE family_id = $1)::int AS valuations,
            (SELECT count(*) FROM trades WHERE family_id = $1)::int AS trades,
            (SELECT count(*) FROM categories WHERE family_id = $1)::int AS categories,
            (SELECT count(*) FROM merchants WHERE family_id = $1)::int AS merchants,
            (SELECT count(*) FROM tags WHERE family_id = $1)::int AS tags,
            (SELECT count(*) FROM budgets WHERE family_id = $1)::int AS budgets,
            (SELECT count(*) FROM rules WHERE family_id = $1)::int AS rules,
            (SELECT count(*) FROM recurring_transactions WHERE family_id = $1)::int AS recurring_transactions,
            (SELECT count(*) FROM ledger_days WHERE family_id = $1)::int AS ledger_days`,
    [familyId],
  );
  return row;
}

async function events(type: string) {
  return (await app.runtime.services.audit.list({ eventTypes: [type] }, { first: 100 })).events;
}

beforeAll(async () => {
  app = await startTestApp();
  demo = await seedDemo(app.runtime.sequelize, app.runtime.services);
  admin = apiKeyClient(`${app.url}/api/v1`, demo.api_key);
  elsewhere = await createUser(app.runtime.services);
  await createAccount(app.runtime.services, elsewhere);
  // The demo family is seeded first: seconds on an idle machine, more on a busy one.
}, 120_000);
afterAll(() => app.stop());

describe("`users reset status` and `users reset --apply`", () => {
  test("the status names what the family holds, under upstream's keys, counted as SQL counts it", async () => {
    const status = await admin.get("/users/reset/status", headers);
    expect(status.status).toBe(200);
    expect(Object.keys(status.body)).toEqual(["status", "family_id", "reset_complete", "counts"]);
    expect(status.body).toMatchObject({ status: "data_remaining", family_id: demo.family_id, reset_complete: false });
    expect(Object.keys(status.body.counts).sort()).toEqual([...UPSTREAM_COUNT_KEYS].sort());
    const counted = await familyCounts(demo.family_id);
    expect(counted.transactions).toBeGreaterThan(0);
    expect(status.body.counts).toMatchObject({
      accounts: counted.accounts,
      transactions: counted.transactions,
      valuations: counted.valuations,
      trades: counted.trades,
      entries: counted.transactions + counted.valuations + counted.trades,
      categories: counted.categories,
      merchants: counted.merchants,
      tags: counted.tags,
      budgets: counted.budgets,
      rules: counted.rules,
      recurring_transactions: counted.recurring_transactions,
      plaid_items: 0,
      imports: 0,
    });
    // A read key reads the status; a member (not an administrator) does not, as upstream's ensure_admin.
    expect((await apiKeyClient(`${app.url}/api/v1`, demo.read_api_key).get("/users/reset/status", headers)).status).toBe(200);
    const member = await createUser(app.runtime.services, { familyOf: elsewhere });
    const refused = await apiKeyClient(`${app.url}/api/v1`, member.key).get("/users/reset/status", headers);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("forbidden");
  });

  test("a read key and a member are refused the reset, and nothing is deleted", async () => {
    const before = await familyCounts(demo.family_id);
    const readOnly = await apiKeyClient(`${app.url}/api/v1`, demo.read_api_key).delete("/users/reset", headers);
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error).toBe("insufficient_scope");
    const member = await createUser(app.runtime.services, { familyOf: elsewhere });
    expect((await apiKeyClient(`${app.url}/api/v1`, member.key).delete("/users/reset", headers)).status).toBe(403);
    expect(await familyCounts(demo.family_id)).toEqual(before);
    expect(await events("family.reset")).toEqual([]);
  });

  test("the reset deletes the family's financial data in one go; users, keys, the audit log and other families stay", async () => {
    const auditBefore = (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events`))[0].n;
    const usersBefore = await sql(`SELECT id, email, status FROM users WHERE family_id = $1 ORDER BY id`, [demo.family_id]);
    const otherBefore = await familyCounts(elsewhere.familyId);
    const counted = await familyCounts(demo.family_id);

    const reset = await admin.delete("/users/reset", headers);
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({
      message: "Account reset has been completed",
      status: "complete",
      job_id: null,
      family_id: demo.family_id,
      status_url: "/api/v1/users/reset/status",
    });

    expect(Object.values(await familyCounts(demo.family_id)).every((count) => count === 0)).toBe(true);
    const status = await admin.get("/users/reset/status", headers);
    expect(status.body).toMatchObject({ status: "complete", reset_complete: true });
    expect(Object.values(status.body.counts).every((count) => count === 0)).toBe(true);
    expect(await sql(`SELECT id, email, status FROM users WHERE family_id = $1 ORDER BY id`, [demo.family_id])).toEqual(usersBefore);
    expect(await familyCounts(elsewhere.familyId)).toEqual(otherBefore);
    const auditAfter = (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events`))[0].n;
    expect(auditAfter).toBe(auditBefore + 1);

    const [event] = await events("family.reset");
    expect(event).toMatchObject({
      severity: "warning",
      user: { email: demo.email },
      action: "reset",
      resource: { type: "family", id: demo.family_id },
    });
    expect(event.changes).toMatchObject({
      transactions: { old: counted.transactions, new: 0 },
      accounts: { old: counted.accounts, new: 0 },
    });

    // The family goes on: the same key still works and the family can start again.
    const actor = await app.runtime.services.apiKeys.authenticate(demo.api_key);
    await app.runtime.services.accounts.create(actor, { name: "Fresh start", accountType: "depository", currency: "USD", balance: "10" });
    expect((await admin.get("/accounts", headers)).body.accounts).toHaveLength(1);
  });
});

describe("`users delete-me --apply`", () => {
  test("a member deletes their own account: the key stops working, the row is anonymised, the family's data stays", async () => {
    const member = await createUser(app.runtime.services, { familyOf: elsewhere });
    const memberApi = apiKeyClient(`${app.url}/api/v1`, member.key);
    expect((await apiKeyClient(`${app.url}/api/v1`, member.readKey).delete("/users/me", headers)).status).toBe(403);
    const before = await familyCounts(elsewhere.familyId);

    const deleted = await memberApi.delete("/users/me", headers);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: "Account has been deleted" });
    expect((await memberApi.get("/accounts", headers)).status).toBe(401);
    expect(await sql(`SELECT email, status, name FROM users WHERE id = $1`, [member.userId])).toEqual([
      { email: deletedEmailOf(member.userId), status: "deleted", name: null },
    ]);
    expect(await sql(`SELECT id FROM api_keys WHERE user_id = $1`, [member.userId])).toEqual([]);
    expect(await familyCounts(elsewhere.familyId)).toEqual(before);

    const [event] = (await events("user.deleted")).filter((e) => e.resource?.id === member.userId);
    expect(event).toMatchObject({
      user: { id: member.userId, email: member.email },
      action: "delete",
      resource: { type: "user", id: member.userId, label: member.email },
      changes: { status: { old: "active", new: "deleted" } },
    });
  });

  test("the instance's last active administrator is refused; with another administrator, deleting the family's last member removes its data", async () => {
    const [{ others }] = await sql<{ others: number }>(
      `SELECT count(*)::int AS others FROM users WHERE role = 'admin' AND status = 'active' AND lower(email) <> lower($1)`,
      [demo.email],
    );
    expect(others).toBe(0);
    const refused = await admin.delete("/users/me", headers);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: "conflict", details: { reason: "last_active_administrator" } });
    expect((await admin.get("/accounts", headers)).status).toBe(200);

    // The GraphQL form wants the confirmation said out loud.
    const unconfirmed = await apiKeyClient(app.url, demo.api_key).graphql(`mutation { deleteMyAccount(confirm: false) { user { id } } }`);
    expect(unconfirmed.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");

    await createUser(app.runtime.services, { role: "admin" });
    expect((await familyCounts(demo.family_id)).accounts).toBe(1);
    const deleted = await admin.delete("/users/me", headers);
    expect(deleted.body).toEqual({ message: "Account has been deleted" });
    expect(await familyCounts(demo.family_id)).toMatchObject({ accounts: 0, ledger_days: 0, valuations: 0 });
    const [event] = (await events("user.deleted")).filter((e) => e.user?.email === demo.email);
    expect(event.action).toBe("delete_with_family_data");
    expect((await admin.get("/accounts", headers)).status).toBe(401);
  });
});
