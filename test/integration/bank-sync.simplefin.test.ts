import { Writable } from "node:stream";
import pino from "pino";
import { claimUrlOf, WINDOW_DAYS } from "../../src/finance/banking/simplefin.client";
import { loadConfig } from "../../src/platform/config/config";
import { OutboundGuard } from "../../src/platform/outbound/outbound.guard";
import { fakeDns } from "../helpers/fake-dns";

const UPSTREAM_OPTIONS = { timeoutMs: 1000, retryBaseMs: 10, attempts: 1, retryRateLimited: false, redact: (text: string) => text };
import { startOfTomorrowUtc } from "../../src/finance/banking/provider";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeSimplefinBridge, generateHistory } from "../fakes/simplefin-bridge";
import { sqlThroughApp } from "../helpers/sql";

const DAY = 86_400;
let app: TestApp;
let bridge: FakeSimplefinBridge;
let user: TestUser;
let connectionId: string;
let api: ReturnType<typeof apiKeyClient>;

const CONNECTION_QUERY = `query ($id: ID!) { bankConnection(id: $id) {
  id provider status lastError includePending
  accounts { externalId name institution currency balance holdingsTotalValue account { id name accountType currency balance }
    balances { date balance currency } holdings { quantity value costBasis currency security { ticker name } } }
  syncRuns(limit: 5) { id status createdCount updatedCount skippedCount errors } } }`;

const sql = sqlThroughApp(() => app.runtime.sequelize);

function transactionsOf(familyId: string) {
  return sql<{ id: string; external_id: string; amount: string; pending: boolean; name: string; updated_at: Date }>(
    "SELECT id, external_id, amount::text, pending, name, updated_at FROM transactions WHERE family_id = $1 ORDER BY external_id",
    [familyId],
  );
}

beforeAll(async () => {
  bridge = new FakeSimplefinBridge();
  await bridge.start();
  const today = startOfTomorrowUtc() - DAY;
  // Three institutions, two years of daily history each, and a brokerage account with holdings.
  bridge.accounts = [
    {
      id: "chk-1",
      name: "Everyday Checking",
      currency: "USD",
      balance: "1520.35",
      "available-balance": "1500.00",
      "balance-date": today,
      org: { name: "First Bank", "sfin-url": "https://first.example" },
      transactions: generateHistory({ accountId: "chk-1", days: 730, perDay: 1 }),
    },
    {
      id: "cc-2",
      name: "Rewards Visa Card",
      currency: "USD",
      balance: "-320.10",
      "balance-date": today,
      org: { name: "Second Credit Union", "sfin-url": "https://second.example" },
      transactions: generateHistory({ accountId: "cc-2", days: 730, perDay: 1, seed: 5000 }),
    },
    {
      id: "brk-3",
      name: "Brokerage",
      currency: "USD",
      balance: "15000.00",
      "balance-date": today,
      org: { name: "Third Brokerage", "sfin-url": "https://third.example" },
      transactions: generateHistory({ accountId: "brk-3", days: 730, perDay: 1, seed: 9000 }),
      holdings: [
        {
          id: "h1",
          created: String(today),
          currency: "USD",
          symbol: "VTI",
          description: "Vanguard Total Stock Market",
          shares: "40",
          market_value: "10000.00",
          cost_basis: "8000.00",
          purchase_price: "200",
        },
        {
          id: "h2",
          created: String(today),
          currency: "",
          symbol: "",
          description: "Money market fund",
          shares: "5000",
          market_value: "5000.00",
          purchase_price: "1",
        },
      ],
    },
  ];
  app = await startTestApp({ env: { ...BANK_TEST_ENV, SIMPLEFIN_DAILY_REQUEST_BUDGET: "200" }, roles: { api: true, workers: true } });
  user = await createUser(app.runtime.services);
  api = apiKeyClient(app.url, user.key);
});

afterAll(async () => {
  await app?.stop();
  await bridge?.stop();
});

describe("SimpleFIN setup tokens", () => {
  test("a token that is not base64 of an https URL is refused with a clear message", async () => {
    const response = await api.graphql(`mutation { connectSimplefin(setupToken: "not a token!") { id } }`);
    expect(response.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");
    expect(response.body.errors[0].message).toMatch(/setup token is not valid/);
    // Plain http claim URLs pass only with ALLOW_INSECURE_UPSTREAMS, loopback ones only with an outbound exception.
    const loopback = Buffer.from("http://127.0.0.1:9/claim/x").toString("base64");
    const outbound = new OutboundGuard(loadConfig({}).outbound, fakeDns({ "bridge.simplefin.org": "104.18.1.1" }));
    const http = (httpsOnly: boolean, guard = outbound) => ({ ...UPSTREAM_OPTIONS, outbound: guard, httpsOnly });
    // Plain http refused by configuration names the settings that allow it (the local sandbox's case).
    await expect(claimUrlOf(loopback, http(true))).rejects.toThrow(/claim URL must be an https URL: .*ALLOW_INSECURE_UPSTREAMS=true/);
    await expect(claimUrlOf(loopback, http(false))).rejects.toThrow(/not valid/);
    await expect(claimUrlOf(Buffer.from("https://127.0.0.1/claim/x").toString("base64"), http(true))).rejects.toThrow(/not valid/);
    expect(await claimUrlOf(Buffer.from("https://bridge.simplefin.org/simplefin/claim/abc").toString("base64"), http(true))).toBe(
      "https://bridge.simplefin.org/simplefin/claim/abc",
    );
    expect(await claimUrlOf(loopback, http(false, app.runtime.services.outbound))).toBe("http://127.0.0.1:9/claim/x");
  });

  test("connecting claims the token once, imports two years from three institutions in ≤60-day windows with no gap or overlap", async () => {
    const token = bridge.newSetupToken();
    const connected = await api.graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id provider status } }`, { t: token });
    expect(connected.body.errors).toBeUndefined();
    connectionId = connected.body.data.connectSimplefin.id;
    const run = await waitForSync(app.runtime.services, connectionId);
    expect(run).toMatchObject({ status: "completed", createdCount: 3 * 730, updatedCount: 0 });

    // The token works once: a second claim is a 403, reported as used/expired/compromised.
    const again = await api.graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, { t: token });
    expect(again.body.errors[0].message).toMatch(/already used, has expired.*compromised/);

    const windows = bridge.accountWindows();
    const to = startOfTomorrowUtc();
    expect(windows[0].end).toBe(to);
    expect(windows.at(-1)!.start).toBe(to - 730 * DAY);
    for (let i = 0; i < windows.length; i++) {
      expect(windows[i].end - windows[i].start).toBeLessThanOrEqual(WINDOW_DAYS * DAY);
      expect(windows[i].end).toBeGreaterThan(windows[i].start);
      if (i > 0) expect(windows[i].end).toBe(windows[i - 1].start); // contiguous: no gap, no overlap
    }
    expect(windows).toHaveLength(Math.ceil(730 / WINDOW_DAYS));
    // Credentials travel as a Basic header, never in the URL; pending is asked for (the default).
    const request = bridge.http.requestsTo(/\/accounts$/)[0];
    expect(request.headers.authorization).toMatch(/^Basic /);
    expect(windows.every((window) => window.pending)).toBe(true);

    const rows = await transactionsOf(user.familyId);
    expect(rows).toHaveLength(3 * 730);
    expect(new Set(rows.map((row) => row.external_id)).size).toBe(3 * 730);
    // SimpleFIN's "-12.34" (money out) is stored as 12.34 (positive = money out).
    const sample = bridge.accounts[0].transactions[5];
    const stored = rows.find((row) => row.external_id === sample.id)!;
    expect(Number(stored.amount)).toBeCloseTo(-Number(sample.amount), 4);

    const view = (await api.graphql(CONNECTION_QUERY, { id: connectionId })).body.data.bankConnection;
    expect(view.status).toBe("good");
    const byId = Object.fromEntries(view.accounts.map((account: { externalId: string }) => [account.externalId, account]));
    expect(byId["chk-1"]).toMatchObject({
      institution: "First Bank",
      balance: "1520.35",
      account: { accountType: "depository", currency: "USD", balance: "1520.35" },
    });
    expect(byId["cc-2"].account).toMatchObject({ accountType: "credit_card", balance: "320.1" });
    expect(byId["chk-1"].balances[0]).toMatchObject({ balance: "1520.35", currency: "USD" });
    // Holdings and total value match the Bridge's numbers.
    expect(byId["brk-3"].account.accountType).toBe("investment");
    expect(byId["brk-3"].holdingsTotalValue).toBe("15000");
    expect(byId["brk-3"].holdings).toEqual([
      {
        quantity: "40",
        value: "10000",
        costBasis: "8000",
        currency: "USD",
        security: { ticker: "VTI", name: "Vanguard Total Stock Market" },
      },
      { quantity: "5000", value: "5000", costBasis: null, currency: "USD", security: { ticker: null, name: "Money market fund" } },
    ]);
  });
});

describe("SimpleFIN re-syncs", () => {
  test("a full re-sync of the same data changes nothing", async () => {
    const before = await transactionsOf(user.familyId);
    const run = await app.runtime.services.bankSync.run(connectionId, { fullHistory: true });
    expect(run).toMatchObject({ status: "completed", createdCount: 0, updatedCount: 0, skippedCount: 3 * 730 });
    expect(await transactionsOf(user.familyId)).toEqual(before);
  });

  test("later syncs are incremental: one window from shortly before the last sync", async () => {
    const seen = bridge.accountWindows().length;
    await app.runtime.services.bankSync.run(connectionId);
    const windows = bridge.accountWindows().slice(seen);
    expect(windows).toHaveLength(1);
    expect(windows[0].end).toBe(startOfTomorrowUtc());
    expect(windows[0].end - windows[0].start).toBe(10 * DAY);
  });

  test("a pending row that posts under a new id stays one transaction, keeping the user's edits", async () => {
    const now = Math.floor(Date.now() / 1000);
    const checking = bridge.accounts[0];
    checking.transactions.push({
      id: "pend-1",
      posted: 0,
      transacted_at: now - 2 * DAY,
      amount: "-42.50",
      description: "CORNER CAFE PENDING",
      payee: "Corner Cafe",
      pending: true,
    });
    expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
    const [pending] = (await transactionsOf(user.familyId)).filter((row) => row.external_id === "pend-1");
    expect(pending).toMatchObject({ pending: true, amount: "42.5000" });

    // Imported transactions are ordinary transactions: REST shows merchant, amount, currency, pending.
    const listed = await api.get(`/api/v1/transactions/${pending.id}`);
    expect(listed.body).toMatchObject({
      amount: "$42.50",
      currency: "USD",
      pending: true,
      merchant: { name: "Corner Cafe" },
      classification: "expense",
    });
    expect(
      (await api.patch(`/api/v1/transactions/${pending.id}`, { transaction: { name: "Coffee with Sam", notes: "work" } })).status,
    ).toBe(200);

    checking.transactions = checking.transactions.filter((row) => row.id !== "pend-1");
    checking.transactions.push({ id: "posted-77", posted: now - DAY, amount: "-42.50", description: "CORNER CAFE", payee: "Corner Cafe" });
    expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
    const rows = (await transactionsOf(user.familyId)).filter((row) => ["pend-1", "posted-77"].includes(row.external_id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: pending.id, external_id: "posted-77", pending: false, name: "Coffee with Sam" });
    expect((await api.get(`/api/v1/transactions/${pending.id}`)).body).toMatchObject({ notes: "work", pending: false });
  });

  test("rows re-issued under new ids are matched by content and not duplicated", async () => {
    const before = await transactionsOf(user.familyId);
    const card = bridge.accounts[1];
    const recent = card.transactions.slice(-3);
    for (const row of recent) row.id = `${row.id}-reissued`;
    const run = await app.runtime.services.bankSync.run(connectionId);
    expect(run).toMatchObject({ status: "completed", createdCount: 0 });
    const after = await transactionsOf(user.familyId);
    expect(after).toHaveLength(before.length);
    expect(after.filter((row) => row.external_id.endsWith("-reissued"))).toHaveLength(3);
  });

  test("pending rows that never post expire", async () => {
    const now = Math.floor(Date.now() / 1000);
    const checking = bridge.accounts[0];
    checking.transactions.push({
      id: "ghost",
      posted: 0,
      transacted_at: now - 8 * DAY,
      amount: "-9.99",
      description: "HOLD",
      pending: true,
    });
    await app.runtime.services.bankSync.run(connectionId);
    expect((await transactionsOf(user.familyId)).some((row) => row.external_id === "ghost")).toBe(true);
    checking.transactions = checking.transactions.filter((row) => row.id !== "ghost");
    await app.runtime.services.bankSync.run(connectionId);
    expect((await transactionsOf(user.familyId)).some((row) => row.external_id === "ghost")).toBe(false);
  });

  test("errors with accounts are a partial failure; errors without accounts fail the sync", async () => {
    bridge.errors = { errors: ["<b>Second Credit Union</b> needs attention"], partial: true };
    const partial = await app.runtime.services.bankSync.run(connectionId);
    expect(partial).toMatchObject({ status: "completed", errors: ["Second Credit Union needs attention"] });
    bridge.errors = { errors: ["Bridge maintenance"], errlist: [{ code: "gen.api", msg: "maintenance" }], partial: false };
    const fatal = await app.runtime.services.bankSync.run(connectionId);
    expect(fatal!.status).toBe("failed");
    expect(fatal!.errors.join(" ")).toMatch(/maintenance/);
    bridge.errors = null;
  });

  test("raw responses are logged only with debug logging on, with credentials redacted", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "info" }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    await app.runtime.services.bankSync.run(connectionId, { logger });
    expect(lines.some((line) => line.includes("bank provider response"))).toBe(false);

    await api.graphql(`mutation ($id: ID!) { updateBankConnection(id: $id, settings: { debugLogging: true }) { debugLogging } }`, {
      id: connectionId,
    });
    await app.runtime.services.bankSync.run(connectionId, { logger });
    const logged = lines.filter((line) => line.includes("bank provider response")).join("\n");
    expect(logged).toContain("Everyday Checking");
    const [{ credentials }] = await sql<{ credentials: string }>("SELECT credentials FROM bank_connections WHERE id = $1", [connectionId]);
    const accessUrl = app.runtime.services.banking["secrets"].open(credentials);
    const password = new URL(accessUrl).password;
    expect(credentials).toMatch(/^v1:/);
    expect(credentials).not.toContain(password);
    expect(logged).not.toContain(password);
    await api.graphql(`mutation ($id: ID!) { updateBankConnection(id: $id, settings: { debugLogging: false }) { debugLogging } }`, {
      id: connectionId,
    });
  });
});

describe("SimpleFIN failures", () => {
  test("429 is not retried and shows the sync as failed", async () => {
    const seen = bridge.http.requestsTo(/\/accounts$/).length;
    bridge.http.inject({ kind: "status", status: 429, body: '"Too many requests"' }, { times: 5, path: /\/accounts$/ });
    const run = await app.runtime.services.bankSync.run(connectionId);
    bridge.http.clearFaults();
    expect(bridge.http.requestsTo(/\/accounts$/).length - seen).toBe(1);
    expect(run!.status).toBe("failed");
    const view = (await api.graphql(CONNECTION_QUERY, { id: connectionId })).body.data.bankConnection;
    expect(view.status).toBe("failed");
    expect(view.lastError).toMatch(/rate limiting/);
  });

  test("network resets are retried, at most 3 attempts", async () => {
    const seen = bridge.http.requestsTo(/\/accounts$/).length;
    bridge.http.inject({ kind: "reset" }, { times: 10, path: /\/accounts$/ });
    const run = await app.runtime.services.bankSync.run(connectionId);
    bridge.http.clearFaults();
    expect(bridge.http.requestsTo(/\/accounts$/).length - seen).toBe(3);
    expect(run!.status).toBe("failed");

    // Two transient failures (a reset, an HTML 502 page) and the third attempt succeeds.
    bridge.http.inject({ kind: "reset" }, { times: 1, path: /\/accounts$/ });
    bridge.http.inject({ kind: "html", status: 502 }, { times: 1, path: /\/accounts$/ });
    expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
  });

  test("403 marks the connection requires_update, keeps every row, and new credentials resume it", async () => {
    const before = await transactionsOf(user.familyId);
    bridge.revokeAll();
    const run = await app.runtime.services.bankSync.run(connectionId);
    expect(run!.status).toBe("failed");
    let view = (await api.graphql(CONNECTION_QUERY, { id: connectionId })).body.data.bankConnection;
    expect(view.status).toBe("requires_update");
    expect(await transactionsOf(user.familyId)).toEqual(before);
    const refused = await api.graphql(`mutation ($id: ID!) { syncBankConnection(id: $id) { id } }`, { id: connectionId });
    expect(refused.body.errors[0].extensions.code).toBe("CONFLICT");

    const replaced = await api.graphql(
      `mutation ($id: ID!, $t: String) { replaceBankCredentials(id: $id, setupToken: $t) { id status } }`,
      {
        id: connectionId,
        t: bridge.newSetupToken(),
      },
    );
    expect(replaced.body.data.replaceBankCredentials).toEqual({ id: connectionId, status: "good" });
    expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 0 });
    view = (await api.graphql(CONNECTION_QUERY, { id: connectionId })).body.data.bankConnection;
    expect(view.status).toBe("good");
    expect((await transactionsOf(user.familyId)).length).toBe(before.length);
  });

  test("the refresh skips connections whose daily request budget is spent", async () => {
    const services = app.runtime.services;
    await sql(
      "UPDATE bank_connections SET last_sync_at = now() - interval '2 days', requests_day = current_date, requests_today = 200 WHERE id = $1",
      [connectionId],
    );
    expect(await services.banking.refreshDue()).toBe(0);
    // A spent budget is not a failure: the run completes having asked nothing, says why, and the
    // connection stays good with the time the budget renews.
    const run = await services.bankSync.run(connectionId);
    expect(run).toMatchObject({ status: "completed", requestCount: 0, createdCount: 0 });
    expect(run!.errors).toEqual([expect.stringMatching(/^Stopped at the provider's daily request budget \(200 requests per UTC day\)/)]);
    const spent = (
      await api.graphql(`query ($id: ID!) { bankConnection(id: $id) { status lastError dailyRequestBudget budgetResetsAt nextSyncAt } }`, {
        id: connectionId,
      })
    ).body.data.bankConnection;
    const tomorrow = new Date(startOfTomorrowUtc() * 1000).toISOString();
    expect(spent).toEqual({ status: "good", lastError: null, dailyRequestBudget: 200, budgetResetsAt: tomorrow, nextSyncAt: tomorrow });
    await sql("UPDATE bank_connections SET requests_today = 0, last_sync_at = now() - interval '2 days' WHERE id = $1", [connectionId]);
    expect(await services.banking.refreshDue()).toBe(1);
    expect(await waitForSync(services, connectionId)).toMatchObject({ status: "completed", trigger: "scheduled" });
    // The schedule the API shows: the next automatic sync is due BANK_SYNC_INTERVAL_HOURS after this one, not before.
    const { lastSyncAt, nextSyncAt } = (
      await api.graphql(`query ($id: ID!) { bankConnection(id: $id) { lastSyncAt nextSyncAt } }`, { id: connectionId })
    ).body.data.bankConnection;
    expect(Date.parse(nextSyncAt) - Date.parse(lastSyncAt)).toBe(app.runtime.config.bankSyncIntervalHours * 3_600_000);
    expect(await services.banking.refreshDue()).toBe(0);
  });

  test("a walk stopped at the budget keeps what it imported, stays good, and the refresh resumes it from its cursor once the budget renews", async () => {
    const services = app.runtime.services;
    const all = (await transactionsOf(user.familyId)).length;
    await sql("DELETE FROM transactions WHERE family_id = $1", [user.familyId]);
    // Two requests left today: a full walk (13 windows) stops after two windows.
    await sql("UPDATE bank_connections SET requests_day = current_date, requests_today = 198 WHERE id = $1", [connectionId]);
    const seen = bridge.accountWindows().length;
    const paused = await services.bankSync.run(connectionId, { fullHistory: true });
    expect(paused).toMatchObject({ status: "completed", requestCount: 2 });
    expect(paused!.createdCount).toBeGreaterThanOrEqual(3 * 2 * WINDOW_DAYS);
    expect(paused!.createdCount).toBeLessThan(all);
    expect(paused!.errors).toEqual([expect.stringMatching(/daily request budget/)]);
    const view = (
      await api.graphql(`query ($id: ID!) { bankConnection(id: $id) { status lastError requestsToday budgetResetsAt nextSyncAt } }`, {
        id: connectionId,
      })
    ).body.data.bankConnection;
    const tomorrow = new Date(startOfTomorrowUtc() * 1000).toISOString();
    expect(view).toEqual({ status: "good", lastError: null, requestsToday: 200, budgetResetsAt: tomorrow, nextSyncAt: tomorrow });
    expect(await services.banking.refreshDue()).toBe(0);

    // Midnight: the budget renews. The connection synced a moment ago, yet its unfinished walk is due.
    await sql("UPDATE bank_connections SET requests_today = 0 WHERE id = $1", [connectionId]);
    expect(await services.banking.refreshDue()).toBe(1);
    expect(await waitForSync(services, connectionId)).toMatchObject({ status: "completed", trigger: "scheduled", errors: [] });
    const windows = bridge.accountWindows().slice(seen);
    expect(windows).toHaveLength(Math.ceil(730 / WINDOW_DAYS));
    for (let i = 1; i < windows.length; i++) expect(windows[i].end).toBe(windows[i - 1].start); // resumed at the cursor: no window twice
    expect(await transactionsOf(user.familyId)).toHaveLength(all);
    expect(await services.banking.refreshDue()).toBe(0);
  });

  test("another family cannot see or sync the connection", async () => {
    const other = await createUser(app.runtime.services);
    const response = await apiKeyClient(app.url, other.key).graphql(`mutation ($id: ID!) { syncBankConnection(id: $id) { id } }`, {
      id: connectionId,
    });
    expect(response.body.errors[0].extensions.code).toBe("NOT_FOUND");
    const listed = await apiKeyClient(app.url, other.key).graphql(`{ bankConnections { id } }`);
    expect(listed.body.data.bankConnections).toEqual([]);
  });
});
