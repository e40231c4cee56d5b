import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { Topic, type BankSyncEvent } from "../../src/platform/events/catalogue";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeLunchflowServer, type FakeLunchflowTransaction } from "../fakes/lunchflow-server";
import { eventually } from "../helpers/eventually";
import { sqlThroughApp } from "../helpers/sql";

/**
 * Issue 6, item 1 (provider accounts linked to existing accounts instead of created) and item 2
 * (the bankSyncEvents subscription over graphql-ws, scoped to the family).
 */
let app: TestApp;
let lunchflow: FakeLunchflowServer;
let baseUrl: string;

function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

function row(id: string, days: number, amount: number, merchant: string, currency = "EUR"): FakeLunchflowTransaction {
  return { id, amount, currency, date: daysAgo(days), merchant, description: `${merchant} payment`, isPending: false };
}

const sql = sqlThroughApp(() => app.runtime.sequelize);

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  baseUrl = await lunchflow.start();
  lunchflow.accounts = [
    {
      id: 301,
      name: "Main Checking",
      institution_name: "Sparkasse",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 1000.5, currency: "EUR" },
      // One row far back: only a walk of the whole history reaches it.
      transactions: [row("m-1", 600, -12.5, "Bäckerei"), row("m-2", 20, 2500, "Employer GmbH"), row("m-3", 2, -80.1, "Supermarkt")],
      holdings: null,
    },
    {
      id: 302,
      name: "Savings",
      institution_name: "Sparkasse",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 5000, currency: "EUR" },
      transactions: [row("s-1", 10, 100, "Transfer")],
      holdings: null,
    },
    {
      id: 303,
      name: "Dollar Account",
      institution_name: "Wise",
      provider: "wise",
      currency: "USD",
      status: "ACTIVE",
      balance: { amount: 300, currency: "USD" },
      transactions: [row("d-1", 5, -20, "Shop", "USD")],
      holdings: null,
    },
  ];
  app = await startTestApp({ env: { ...BANK_TEST_ENV, BANK_HISTORY_DAYS: "730" }, roles: { api: true, workers: true } });
});

afterAll(async () => {
  await app?.stop();
  await lunchflow?.stop();
});

const CONNECT = `mutation ($k: String!, $u: String, $auto: Boolean) {
  connectLunchflow(apiKey: $k, baseUrl: $u, autoCreateAccounts: $auto) { id autoCreateAccounts } }`;
const CONNECTION = `query ($id: ID!) { bankConnection(id: $id) { accounts { id externalId currency account { id name } } } }`;
const LINK = `mutation ($p: ID!, $a: ID!) { linkBankAccount(providerAccountId: $p, accountId: $a) { id externalId account { id name } } }`;

describe("linking provider accounts to existing accounts", () => {
  let owner: TestUser;
  let api: ReturnType<typeof apiKeyClient>;
  let connectionId: string;
  let providerAccounts: Array<{ id: string; externalId: string; currency: string; account: { id: string } | null }>;

  const accountCount = async () =>
    Number((await sql<{ n: string }>("SELECT count(*) AS n FROM accounts WHERE family_id = $1", [owner.familyId]))[0].n);
  const importedInto = (accountId: string) =>
    sql<{ external_id: string }>("SELECT external_id FROM transactions WHERE account_id = $1 ORDER BY external_id", [accountId]);
  const providerAccount = (externalId: string) => providerAccounts.find((account) => account.externalId === externalId)!;

  beforeAll(async () => {
    owner = await createUser(app.runtime.services);
    api = apiKeyClient(app.url, owner.key);
    lunchflow.keys.set("lf_link_key", "active");
  });

  test("with auto-creation off, the first sync creates no account and imports nothing, but lists the provider accounts", async () => {
    await createAccount(app.runtime.services, owner, { name: "My Checking", currency: "EUR" });
    const before = await accountCount();
    const connected = await api.graphql(CONNECT, { k: "lf_link_key", u: baseUrl, auto: false });
    expect(connected.body.errors).toBeUndefined();
    expect(connected.body.data.connectLunchflow.autoCreateAccounts).toBe(false);
    connectionId = connected.body.data.connectLunchflow.id;
    expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 0 });

    const listed = await api.graphql(CONNECTION, { id: connectionId });
    providerAccounts = listed.body.data.bankConnection.accounts;
    expect(providerAccounts.map((account) => [account.externalId, account.currency, account.account]).sort()).toEqual([
      ["301", "EUR", null],
      ["302", "EUR", null],
      ["303", "USD", null],
    ]);
    expect(await accountCount()).toBe(before);
    expect(await sql("SELECT id FROM transactions WHERE family_id = $1", [owner.familyId])).toEqual([]);
  });

  test("linking feeds the existing account: the sync it starts imports the whole history there and creates no duplicate", async () => {
    const checking = await createAccount(app.runtime.services, owner, { name: "Household", currency: "EUR" });
    const before = await accountCount();
    const linked = await api.graphql(LINK, { p: providerAccount("301").id, a: checking.id });
    expect(linked.body.errors).toBeUndefined();
    expect(linked.body.data.linkBankAccount).toMatchObject({ externalId: "301", account: { id: checking.id, name: "Household" } });

    const run = await waitForSync(app.runtime.services, connectionId);
    expect(run).toMatchObject({ status: "completed", createdCount: 3 });
    expect((await importedInto(checking.id)).map((row) => row.external_id)).toEqual(["m-1", "m-2", "m-3"]);
    expect(await accountCount()).toBe(before);
    // The balance arrives in the linked account too; the unlinked provider accounts still import nothing.
    const [account] = await sql<{ balance: string }>("SELECT balance::text FROM accounts WHERE id = $1", [checking.id]);
    expect(account.balance).toBe("1000.5000");
    expect(await sql("SELECT id FROM transactions WHERE family_id = $1 AND account_id <> $2", [owner.familyId, checking.id])).toEqual([]);

    // A re-sync leaves it as it is.
    await api.graphql(`mutation ($id: ID!) { syncBankConnection(id: $id) { id } }`, { id: connectionId });
    expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 0, updatedCount: 0 });
    expect(await importedInto(checking.id)).toHaveLength(3);
  });

  test("linking is refused (422) for another currency, an account fed already, or after transactions were imported", async () => {
    const euros = await createAccount(app.runtime.services, owner, { name: "Spare", currency: "EUR" });
    const wrongCurrency = await api.graphql(LINK, { p: providerAccount("303").id, a: euros.id });
    expect(wrongCurrency.body.errors[0]).toMatchObject({
      extensions: { code: "VALIDATION_FAILED" },
      message: expect.stringMatching(/currency EUR does not match .* USD/),
    });

    const checkingId = (await api.graphql(CONNECTION, { id: connectionId })).body.data.bankConnection.accounts.find(
      (account: { externalId: string }) => account.externalId === "301",
    ).account.id;
    const taken = await api.graphql(LINK, { p: providerAccount("302").id, a: checkingId });
    expect(taken.body.errors[0]).toMatchObject({
      extensions: { code: "VALIDATION_FAILED" },
      message: expect.stringMatching(/already linked to another bank account/),
    });

    const moved = await api.graphql(LINK, { p: providerAccount("301").id, a: euros.id });
    expect(moved.body.errors[0]).toMatchObject({
      extensions: { code: "VALIDATION_FAILED" },
      message: expect.stringMatching(/already imported transactions/),
    });
    // Nothing moved.
    expect(await importedInto(checkingId)).toHaveLength(3);
    expect(await importedInto(euros.id)).toEqual([]);
    const unchanged = (await api.graphql(CONNECTION, { id: connectionId })).body.data.bankConnection.accounts;
    expect(unchanged.find((account: { externalId: string }) => account.externalId === "301").account.id).toBe(checkingId);
    expect(unchanged.find((account: { externalId: string }) => account.externalId === "302").account).toBeNull();
  });

  test("another family's provider accounts and accounts behave as unknown ids", async () => {
    const stranger = await createUser(app.runtime.services);
    const theirs = await createAccount(app.runtime.services, stranger, { name: "Theirs", currency: "EUR" });
    const mine = await createAccount(app.runtime.services, owner, { name: "Mine", currency: "EUR" });
    const strangerApi = apiKeyClient(app.url, stranger.key);

    const foreignProviderAccount = await strangerApi.graphql(LINK, { p: providerAccount("302").id, a: theirs.id });
    expect(foreignProviderAccount.body.errors[0]).toMatchObject({ extensions: { code: "NOT_FOUND" } });
    const foreignAccount = await api.graphql(LINK, { p: providerAccount("302").id, a: theirs.id });
    expect(foreignAccount.body.errors[0]).toMatchObject({ extensions: { code: "NOT_FOUND" } });
    const unknown = await api.graphql(LINK, { p: "not-an-id", a: mine.id });
    expect(unknown.body.errors[0]).toMatchObject({ extensions: { code: "NOT_FOUND" } });
    // A read-only key cannot link.
    const readOnly = await apiKeyClient(app.url, owner.readKey).graphql(LINK, { p: providerAccount("302").id, a: mine.id });
    expect(readOnly.body.errors[0].extensions.code).toBe("FORBIDDEN");
    expect(
      (await api.graphql(CONNECTION, { id: connectionId })).body.data.bankConnection.accounts.find(
        (account: { externalId: string }) => account.externalId === "302",
      ).account,
    ).toBeNull();
  });

  test("auto-creation can be turned back on for provider accounts seen later; it is on by default", async () => {
    const updated = await api.graphql(
      `mutation ($id: ID!) { updateBankConnection(id: $id, settings: { autoCreateAccounts: true }) { autoCreateAccounts } }`,
      { id: connectionId },
    );
    expect(updated.body.data.updateBankConnection.autoCreateAccounts).toBe(true);
    const other = await createUser(app.runtime.services);
    const byDefault = await apiKeyClient(app.url, other.key).graphql(CONNECT, { k: "lf_link_key", u: baseUrl });
    expect(byDefault.body.data.connectLunchflow.autoCreateAccounts).toBe(true);
    await waitForSync(app.runtime.services, byDefault.body.data.connectLunchflow.id);
    const created = await sql<{ name: string }>("SELECT name FROM accounts WHERE family_id = $1 ORDER BY name", [other.familyId]);
    expect(created.map((account) => account.name)).toEqual(["Dollar Account (Wise)", "Main Checking (Sparkasse)", "Savings (Sparkasse)"]);
  });
});

type SyncEvent = { connectionId: string; runId: string; runStatus: string; connectionStatus: string; message: string | null };

function subscribeEvents(key: string, events: SyncEvent[]): Client {
  const client = createClient({
    url: `${app.url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { "X-Api-Key": key },
  });
  client.subscribe<{ bankSyncEvents: SyncEvent }>(
    { query: `subscription { bankSyncEvents { connectionId runId runStatus connectionStatus message } }` },
    {
      next: ({ data, errors }) => {
        if (data) events.push(data.bankSyncEvents);
        else events.push({ connectionId: "error", runId: "", runStatus: JSON.stringify(errors), connectionStatus: "", message: null });
      },
      error: (error) => events.push({ connectionId: "error", runId: "", runStatus: String(error), connectionStatus: "", message: null }),
      complete: () => {},
    },
  );
  return client;
}

/** Publishes a marker to the family until its subscriber has it: the subscription is live, and (one ordered channel) everything published earlier has arrived. */
async function probe(familyId: string, events: SyncEvent[]): Promise<void> {
  const marker = `probe-${Math.random()}`;
  const event: BankSyncEvent = { connectionId: marker, runId: marker, runStatus: "probe", connectionStatus: "good", message: null };
  await eventually(
    () => {
      if (events.some((received) => received.connectionId === marker)) return true;
      app.runtime.services.events.publish(Topic.BankSyncEvent, familyId, event);
      return false;
    },
    { what: "the subscription to go live", timeout: 10_000 },
  );
}

describe("bankSyncEvents", () => {
  test("delivers a sync's status changes (syncing → completed, syncing → failed) to the family, and not to another family", async () => {
    const member = await createUser(app.runtime.services);
    const stranger = await createUser(app.runtime.services);
    lunchflow.keys.set("lf_events_key", "active");
    const memberEvents: SyncEvent[] = [];
    const strangerEvents: SyncEvent[] = [];
    const clients = [subscribeEvents(member.key, memberEvents), subscribeEvents(stranger.key, strangerEvents)];
    try {
      await probe(member.familyId, memberEvents);
      await probe(stranger.familyId, strangerEvents);
      const syncEvents = () => memberEvents.filter((event) => event.runStatus !== "probe");

      const api = apiKeyClient(app.url, member.key);
      const connected = await api.graphql(CONNECT, { k: "lf_events_key", u: baseUrl });
      const connectionId = connected.body.data.connectLunchflow.id;
      await eventually(() => syncEvents().some((event) => event.runStatus === "completed"), { what: "completed", timeout: 20_000 });
      const [first] = await app.runtime.services.banking.runs(connectionId, 1);
      expect(syncEvents()).toEqual([
        { connectionId, runId: first.id, runStatus: "syncing", connectionStatus: "good", message: null },
        { connectionId, runId: first.id, runStatus: "completed", connectionStatus: "good", message: null },
      ]);

      // The provider stops accepting the key: the next sync fails and says why.
      lunchflow.keys.set("lf_events_key", "revoked");
      const started = await api.graphql(`mutation ($id: ID!) { syncBankConnection(id: $id) { id } }`, { id: connectionId });
      const secondRunId = started.body.data.syncBankConnection.id;
      await eventually(() => syncEvents().some((event) => event.runStatus === "failed"), { what: "failed", timeout: 20_000 });
      expect(syncEvents().slice(2)).toEqual([
        { connectionId, runId: secondRunId, runStatus: "syncing", connectionStatus: "good", message: null },
        {
          connectionId,
          runId: secondRunId,
          runStatus: "failed",
          connectionStatus: "requires_update",
          message: expect.stringMatching(/refused the connection's credentials/),
        },
      ]);

      // Everything published before a last probe has reached the stranger: only probes did.
      await probe(stranger.familyId, strangerEvents);
      expect(strangerEvents.every((event) => event.runStatus === "probe")).toBe(true);
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  });
});
