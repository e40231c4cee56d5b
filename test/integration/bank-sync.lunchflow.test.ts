import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeLunchflowServer, type FakeLunchflowTransaction } from "../fakes/lunchflow-server";

let app: TestApp;
let lunchflow: FakeLunchflowServer;
let baseUrl: string;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;
let connectionId: string;

function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

function row(
  id: string,
  days: number,
  amount: number | string,
  merchant: string,
  extra: Partial<FakeLunchflowTransaction> = {},
): FakeLunchflowTransaction {
  return { id, amount, currency: "EUR", date: daysAgo(days), merchant, description: `${merchant} payment`, isPending: false, ...extra };
}

async function transactions() {
  const [rows] = await app.runtime.sequelize.query(
    "SELECT id, external_id, amount::text, pending, currency, name FROM transactions WHERE family_id = $1 ORDER BY date, external_id",
    { bind: [user.familyId] },
  );
  return rows as Array<{ id: string; external_id: string; amount: string; pending: boolean; currency: string; name: string }>;
}

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  baseUrl = await lunchflow.start();
  lunchflow.keys.set("lf_good_key_123", "active");
  lunchflow.accounts = [
    {
      id: 101,
      name: "Girokonto",
      institution_name: "Sparkasse",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 2450.75, currency: "EUR" },
      transactions: [
        row("tx-1", 400, -12.5, "Bäckerei"),
        row("tx-2", 30, 2500, "Employer GmbH"),
        row("tx-3", 3, "-80.10", "Supermarkt", { date: `${daysAgo(3)}T10:15:00.000Z` }),
        // Two identical pending purchases without ids, and one outside any requested range.
        row("", 1, -4.2, "Kaffee Bar", { isPending: true }),
        row("", 1, -4.2, "Kaffee Bar", { isPending: true }),
        row("tx-old", 2000, -1, "Ancient"),
      ],
      holdings: null,
    },
    {
      id: 202,
      name: "Depot",
      institution_name: "Broker AG",
      provider: "finapi",
      currency: "EUR",
      status: "ACTIVE",
      balance: { amount: 12000, currency: "EUR" },
      transactions: [],
      holdings: {
        holdings: [
          {
            security: {
              name: "iShares Core MSCI World",
              currency: "EUR",
              tickerSymbol: "EUNL",
              figi: "BBG000000001",
              isin: "IE00B4L5Y983",
            },
            quantity: 100,
            price: 90,
            value: 9000,
            costBasis: 7000,
            currency: "EUR",
          },
          {
            security: { name: "Apple Inc.", currency: "USD", tickerSymbol: "AAPL", isin: "US0378331005" },
            quantity: "15.5",
            price: "193.54",
            value: "3000.00",
            costBasis: null,
            currency: "EUR",
          },
        ],
        totalValue: 12000,
        currency: "EUR",
      },
    },
  ];
  app = await startTestApp({ env: { ...BANK_TEST_ENV, BANK_HISTORY_DAYS: "730" }, roles: { api: true, workers: true } });
  user = await createUser(app.runtime.services);
  api = apiKeyClient(app.url, user.key);
});

afterAll(async () => {
  await app?.stop();
  await lunchflow?.stop();
});

test("a key Lunch Flow refuses is reported at once; a good one connects and syncs", async () => {
  const refused = await api.graphql(`mutation ($k: String!, $u: String) { connectLunchflow(apiKey: $k, baseUrl: $u) { id } }`, {
    k: "wrong",
    u: baseUrl,
  });
  expect(refused.body.errors[0]).toMatchObject({ message: expect.stringMatching(/refused this API key/) });
  const connected = await api.graphql(
    `mutation ($k: String!, $u: String) { connectLunchflow(apiKey: $k, baseUrl: $u) { id provider status } }`,
    {
      k: "lf_good_key_123",
      u: baseUrl,
    },
  );
  expect(connected.body.data.connectLunchflow).toMatchObject({ provider: "lunchflow", status: "good" });
  connectionId = connected.body.data.connectLunchflow.id;
  expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 5 });

  // The key is sent as x-api-key, both date-parameter spellings are sent, and the range is filtered here too.
  const request = lunchflow.http.requestsTo(/\/transactions$/)[0];
  expect(request.headers["x-api-key"]).toBe("lf_good_key_123");
  expect(request.query.get("start_date")).toBe(request.query.get("from"));
  expect(request.query.get("include_pending")).toBe("true");
  const rows = await transactions();
  expect(rows.map((r) => r.external_id)).not.toContain("tx-old");
  // Negative = money out upstream; positive = money out here. The balance endpoint's currency wins.
  expect(rows.find((r) => r.external_id === "tx-1")).toMatchObject({ amount: "12.5000", currency: "EUR" });
  expect(rows.find((r) => r.external_id === "tx-2")).toMatchObject({ amount: "-2500.0000" });
  expect(rows.filter((r) => r.pending)).toHaveLength(2);

  const listed = await api.get(`/api/v1/transactions?per_page=100`);
  const supermarket = listed.body.transactions.find((t: { name: string }) => t.name === "Supermarkt payment");
  expect(supermarket).toMatchObject({
    amount: "€80.10",
    currency: "EUR",
    date: daysAgo(3),
    pending: false,
    merchant: { name: "Supermarkt" },
  });
  expect(supermarket.account).toMatchObject({ name: "Girokonto (Sparkasse)", account_type: "depository" });
});

test("holdings and total value match Lunch Flow; a 501 is remembered and not asked again", async () => {
  const view = await api.graphql(
    `query ($id: ID!) { bankConnection(id: $id) { accounts { externalId currency balance holdingsSupported holdingsTotalValue holdingsCurrency
       account { accountType currency balance } holdings { quantity price value costBasis currency security { ticker name isin figi } } } } }`,
    { id: connectionId },
  );
  const [giro, depot] = view.body.data.bankConnection.accounts.sort((a: { externalId: string }, b: { externalId: string }) =>
    a.externalId.localeCompare(b.externalId),
  );
  expect(giro).toMatchObject({ holdingsSupported: false, holdings: [], account: { currency: "EUR", balance: "2450.75" } });
  expect(depot).toMatchObject({
    holdingsSupported: true,
    holdingsTotalValue: "12000",
    holdingsCurrency: "EUR",
    account: { accountType: "investment" },
  });
  expect(depot.holdings).toEqual([
    {
      quantity: "100",
      price: "90",
      value: "9000",
      costBasis: "7000",
      currency: "EUR",
      security: { ticker: "EUNL", name: "iShares Core MSCI World", isin: "IE00B4L5Y983", figi: "BBG000000001" },
    },
    {
      quantity: "15.5",
      price: "193.54",
      value: "3000",
      costBasis: null,
      currency: "EUR",
      security: { ticker: "AAPL", name: "Apple Inc.", isin: "US0378331005", figi: null },
    },
  ]);

  const before = lunchflow.http.requestsTo(/\/101\/holdings$/).length;
  expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
  expect(lunchflow.http.requestsTo(/\/101\/holdings$/).length).toBe(before);
  expect(lunchflow.http.requestsTo(/\/202\/holdings$/).length).toBe(2);
});

test("blank-id pending rows keep their content key across syncs and reconcile when they post", async () => {
  const rerun = await app.runtime.services.bankSync.run(connectionId, { fullHistory: true });
  expect(rerun).toMatchObject({ status: "completed", createdCount: 0, updatedCount: 0 });
  const pendingIds = (await transactions()).filter((r) => r.pending).map((r) => r.id);
  expect(pendingIds).toHaveLength(2);

  const giro = lunchflow.accounts[0];
  giro.transactions = giro.transactions.filter((t) => !t.isPending);
  giro.transactions.push(row("tx-cafe-1", 0, -4.2, "Kaffee Bar"), row("tx-cafe-2", 0, -4.2, "Kaffee Bar"));
  expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
  const cafe = (await transactions()).filter((r) => r.name === "Kaffee Bar payment");
  expect(cafe).toHaveLength(2);
  expect(cafe.every((r) => !r.pending)).toBe(true);
  expect(cafe.map((r) => r.id).sort()).toEqual(pendingIds.sort());
});

test("a 429 wrapped in a 500 is waited out and retried, at most 3 attempts", async () => {
  const wrapped = {
    kind: "status" as const,
    status: 500,
    body: JSON.stringify({ error: "Internal Server Error", message: "Request failed with status code 429" }),
  };
  lunchflow.http.inject(wrapped, { times: 2, path: /\/accounts$/ });
  const seen = lunchflow.http.requestsTo(/\/accounts$/).length;
  expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
  expect(lunchflow.http.requestsTo(/\/accounts$/).length - seen).toBe(3);

  lunchflow.http.inject({ ...wrapped, status: 429, body: "{}", headers: { "retry-after": "0" } }, { times: 5, path: /\/accounts$/ });
  const again = lunchflow.http.requestsTo(/\/accounts$/).length;
  const failed = await app.runtime.services.bankSync.run(connectionId);
  lunchflow.http.clearFaults();
  expect(failed!.status).toBe("failed");
  expect(lunchflow.http.requestsTo(/\/accounts$/).length - again).toBe(3);
});

test("401/403 mark the connection requires_update; a new key resumes it with all data kept", async () => {
  const before = await transactions();
  lunchflow.keys.set("lf_good_key_123", "revoked");
  expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("failed");
  const status = await api.graphql(`query ($id: ID!) { bankConnection(id: $id) { status lastError } }`, { id: connectionId });
  expect(status.body.data.bankConnection).toMatchObject({
    status: "requires_update",
    lastError: expect.stringMatching(/new setup token or API key/),
  });
  expect(await transactions()).toEqual(before);

  lunchflow.keys.set("lf_new_key_456", "active");
  const replaced = await api.graphql(`mutation ($id: ID!, $k: String) { replaceBankCredentials(id: $id, apiKey: $k) { status } }`, {
    id: connectionId,
    k: "lf_new_key_456",
  });
  expect(replaced.body.data.replaceBankCredentials.status).toBe("good");
  expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 0 });
  expect(lunchflow.http.requests.at(-1)!.headers["x-api-key"]).toBe("lf_new_key_456");
  const listed = await api.graphql(`{ bankConnections { id status } }`);
  expect(JSON.stringify(listed.body)).not.toContain("lf_new_key_456");
});

test("user edits to imported transactions survive later syncs", async () => {
  const target = (await transactions()).find((r) => r.external_id === "tx-3")!;
  const category = await app.runtime.services.categories.create(user.actor, {
    name: "Groceries",
    classification: "expense",
    color: "#00aa00",
    icon: "shopping-cart",
  });
  const patched = await api.patch(`/api/v1/transactions/${target.id}`, {
    transaction: { name: "Weekly shop", notes: "March", category_id: category.id },
  });
  expect(patched.status).toBe(200);
  // The provider changes its description: the user's name still wins, the amount follows the provider.
  const giro = lunchflow.accounts[0];
  giro.transactions.find((t) => t.id === "tx-3")!.description = "SUPERMARKT FILIALE 12";
  giro.transactions.find((t) => t.id === "tx-3")!.amount = -85;
  expect((await app.runtime.services.bankSync.run(connectionId))!.status).toBe("completed");
  const after = await api.get(`/api/v1/transactions/${target.id}`);
  expect(after.body).toMatchObject({ name: "Weekly shop", notes: "March", category: { name: "Groceries" }, amount: "€85.00" });
});

test("deleting the connection keeps the imported accounts and transactions", async () => {
  const before = await transactions();
  const deleted = await api.graphql(`mutation ($id: ID!) { deleteBankConnection(id: $id) { id } }`, { id: connectionId });
  expect(deleted.body.data.deleteBankConnection.id).toBe(connectionId);
  expect((await api.graphql(`{ bankConnections { id } }`)).body.data.bankConnections).toEqual([]);
  expect(await transactions()).toEqual(before);
});
