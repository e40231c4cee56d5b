import { randomUUID } from "node:crypto";
import { QueryTypes } from "sequelize";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeLunchflowServer } from "../fakes/lunchflow-server";

/**
 * GET /usage (sure-cli whoami, MCP check_connection/get_usage), POST /sync (sure-cli sync, MCP
 * sync_accounts), GET /syncs, /syncs/latest, /syncs/{id} (sure-cli syncs) and GET /provider_connections
 * (sure-cli provider-connections), against a family whose bank connection is a Lunch Flow fake.
 */

let app: TestApp;
let lunchflow: FakeLunchflowServer;
let owner: TestUser;
let api: ReturnType<typeof apiKeyClient>;
let connectionId: string;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  const baseUrl = await lunchflow.start();
  lunchflow.accounts = [
    {
      id: 701,
      name: "Main Checking",
      institution_name: "Sparkasse",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 1000.5, currency: "EUR" },
      transactions: [],
      holdings: null,
    },
    {
      id: 702,
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
            security: { name: "iShares Core MSCI World", currency: "EUR", tickerSymbol: "EUNL", isin: "IE00B4L5Y983" },
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
  lunchflow.keys.set("lf_clients_key", "active");
  app = await startTestApp({ env: { ...BANK_TEST_ENV, RATE_LIMIT_REQUESTS: "50" }, roles: { api: true, workers: true } });
  owner = await createUser(app.runtime.services);
  api = apiKeyClient(`${app.url}/api/v1`, owner.key);
  connectionId = (await app.runtime.services.banking.connectLunchflow(owner.actor, "lf_clients_key", baseUrl)).id;
  await waitForSync(app.runtime.services, connectionId);
});
afterAll(async () => {
  await app?.stop();
  await lunchflow?.stop();
});

describe("GET /api/v1/usage", () => {
  test("an API key sees itself and its rate-limit window, this request counted", async () => {
    const first = await api.get("/usage", { accept: "application/json" });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      authentication_method: "api_key",
      api_key: {
        name: "API key",
        scopes: ["read_write"],
        last_used_at: expect.stringMatching(ISO_INSTANT),
        created_at: expect.stringMatching(ISO_INSTANT),
      },
      rate_limit: {
        tier: "standard",
        limit: 50,
        window_seconds: 3600,
        current_count: expect.any(Number),
        remaining: expect.any(Number),
        reset_in_seconds: expect.any(Number),
        reset_at: expect.stringMatching(ISO_INSTANT),
      },
    });
    const second = await api.get("/usage");
    expect(second.body.rate_limit.current_count).toBe(first.body.rate_limit.current_count + 1);
    expect(second.body.rate_limit.remaining).toBe(Number(second.headers.get("x-ratelimit-remaining")));
    const reader = await apiKeyClient(`${app.url}/api/v1`, owner.readKey).get("/usage");
    expect(reader.body.api_key.scopes).toEqual(["read"]);
  });

  test("a bearer access token is reported as such, without an API key", async () => {
    const password = "correct horse battery staple";
    const email = `usage-${randomUUID()}@example.test`;
    await app.runtime.services.users.create({ email, password });
    const login = await client(app.url).post("/auth/login", { email, password });
    const bearer = client(`${app.url}/api/v1`, { authorization: `Bearer ${login.body.access_token}` });
    const usage = await bearer.get("/usage");
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ authentication_method: "access_token", api_key: null });
  });

  test("no key is 401 (check_connection's failure), an unknown query key 400", async () => {
    expect((await client(`${app.url}/api/v1`).get("/usage")).status).toBe(401);
    expect((await api.get("/usage?verbose=1")).status).toBe(400);
  });
});

describe("POST /api/v1/sync and GET /api/v1/syncs", () => {
  test("POST /sync with sure-cli's empty JSON body, and with the MCP server's no body, answers 202 with the queued runs", async () => {
    const queued = await api.post("/sync", {});
    expect(queued.status).toBe(202);
    expect(queued.body.message).toBe("Sync has been queued");
    expect(queued.body.syncs).toHaveLength(1);
    expect(queued.body.syncs[0]).toMatchObject({
      syncable: { type: "BankConnection", id: connectionId, name: expect.any(String) },
      trigger: "manual",
    });
    // A second request while the first is under way returns the same run, or a new one once it finished: never two open ones.
    const again = await api.post("/sync");
    expect(again.status).toBe(202);
    await waitForSync(app.runtime.services, connectionId);
    const [open] = (await app.runtime.sequelize.query(
      "SELECT count(*)::int AS n FROM bank_sync_runs WHERE connection_id = $1 AND status IN ('pending', 'syncing')",
      { bind: [connectionId], plain: false },
    )) as [Array<{ n: number }>, unknown];
    expect(open[0].n).toBeLessThanOrEqual(1);
  });

  test("a read-only key may not sync; a family without connections gets 202 and nothing to sync", async () => {
    const refused = await apiKeyClient(`${app.url}/api/v1`, owner.readKey).post("/sync", {});
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("insufficient_scope");
    const empty = await apiKeyClient(`${app.url}/api/v1`, (await createUser(app.runtime.services)).key).post("/sync", {});
    expect(empty.status).toBe(202);
    expect(empty.body).toEqual({ message: "No bank connection to sync", syncs: [] });
  });

  test("GET /syncs pages the family's runs newest first as {data, meta}; latest and show wrap one in {data}", async () => {
    await waitForSync(app.runtime.services, connectionId);
    const list = await api.get("/syncs?page=1&per_page=2");
    expect(list.status).toBe(200);
    expect(Object.keys(list.body).sort()).toEqual(["data", "meta"]);
    expect(list.body.meta).toMatchObject({ page: 1, per_page: 2 });
    expect(list.body.meta.total_count).toBeGreaterThanOrEqual(2);
    const [newest] = list.body.data;
    expect(newest).toMatchObject({
      id: expect.any(String),
      status: "completed",
      in_progress: false,
      terminal: true,
      syncable: { type: "BankConnection", id: connectionId },
      completed_at: expect.stringMatching(ISO_INSTANT),
      failed_at: null,
      error: null,
    });
    const latest = await api.get("/syncs/latest");
    expect(latest.body).toEqual({ data: newest });
    const one = await api.get(`/syncs/${newest.id}`);
    expect(one.body).toEqual({ data: newest });
  });

  test("another family sees none of it: {data: null}, 404, an empty list", async () => {
    const stranger = apiKeyClient(`${app.url}/api/v1`, (await createUser(app.runtime.services)).key);
    expect((await stranger.get("/syncs/latest")).body).toEqual({ data: null });
    const [newest] = (await api.get("/syncs")).body.data;
    for (const id of [newest.id, randomUUID(), "nope"]) expect((await stranger.get(`/syncs/${id}`)).status).toBe(404);
    expect((await stranger.get("/syncs")).body.data).toEqual([]);
    expect((await stranger.get("/provider_connections")).body).toEqual({ data: [] });
  });
});

describe("GET /api/v1/provider_connections", () => {
  test("lists the connection with its account counts and latest sync, never its credentials", async () => {
    const response = await api.get("/provider_connections");
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(1);
    const [connection] = response.body.data;
    expect(connection).toMatchObject({
      id: connectionId,
      provider: "lunchflow",
      status: "good",
      requires_update: false,
      accounts: { total_count: 2, linked_count: 2, unlinked_count: 0 },
      sync: { syncing: false, last_synced_at: expect.stringMatching(ISO_INSTANT), latest: { syncable: { id: connectionId } } },
    });
    expect(response.text).not.toContain("lf_clients_key");
  });
});

describe("GET /api/v1/holdings (MCP get_holdings/get_holding)", () => {
  test("lists the reported holdings with upstream's keys (and with security.isin), filtered as the MCP server sends it", async () => {
    const response = await api.get("/holdings?per_page=50");
    expect(response.status).toBe(200);
    expect(response.body.pagination).toMatchObject({ page: 1, per_page: 50, total_count: 2 });
    const [world, apple] = response.body.holdings;
    expect(world).toEqual({
      id: expect.any(String),
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      qty: "100.0",
      price: "€90.00",
      amount: "€9,000.00",
      currency: "EUR",
      cost_basis_source: "provider",
      avg_cost: "€70.00",
      account: { id: expect.any(String), name: expect.stringContaining("Depot"), account_type: expect.any(String) },
      security: { id: expect.any(String), ticker: "EUNL", name: "iShares Core MSCI World", isin: "IE00B4L5Y983" },
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(apple).toMatchObject({ qty: "15.5", cost_basis_source: null, avg_cost: null, security: { ticker: "AAPL" } });

    const accountId = world.account.id;
    const q = `per_page=100&account_id=${accountId}&account_ids=${accountId}&security_id=${world.security.id}&date=${world.date}&start_date=${world.date}&end_date=${world.date}`;
    const filtered = await api.get(`/holdings?${q}`);
    expect(filtered.body.holdings.map((h: { id: string }) => h.id)).toEqual([world.id]);
    expect((await api.get(`/holdings?end_date=2000-01-01`)).body.holdings).toEqual([]);
    expect((await api.get(`/holdings/${world.id}`)).body).toEqual(world);
    expect((await api.get(`/holdings?account_ids=nope`)).status).toBe(422);
    // The price the provider reported with each holding is the security's price of that day.
    const prices = await api.get(`/security_prices?security_id=${world.security.id}`);
    expect(
      prices.body.security_prices.map((p: { date: string; price_amount: string; currency: string }) => [
        p.date,
        p.price_amount,
        p.currency,
      ]),
    ).toEqual([[world.date, "90.0000", "EUR"]]);
  });

  test("a trade on the provider's account: its holdings and balance stay the provider's, nothing is computed or counted twice", async () => {
    const sql = async <Row>(statement: string): Promise<Row[]> =>
      (await app.runtime.sequelize.query(statement, { bind: [owner.familyId], type: QueryTypes.SELECT })) as Row[];
    const state = () =>
      sql<{ balance: string; cash: string; holdings: string; positions: number; days: number }>(
        `SELECT a.balance::text AS balance, a.cash_balance::text AS cash,
                (SELECT string_agg(h.id::text || h.quantity::text || h.value::text, ',' ORDER BY h.id) FROM holdings h WHERE h.account_id = a.id) AS holdings,
                (SELECT count(*)::int FROM positions p WHERE p.account_id = a.id) AS positions,
                (SELECT count(*)::int FROM portfolio_days d WHERE d.account_id = a.id) AS days
           FROM accounts a WHERE a.family_id = $1 AND EXISTS (SELECT 1 FROM holdings h WHERE h.account_id = a.id)`,
      );
    const [before] = await state();
    const [held] = await sql<{ account_id: string; security_id: string }>(
      `SELECT account_id, security_id FROM holdings WHERE family_id = $1 ORDER BY value DESC LIMIT 1`,
    );
    const today = new Date().toISOString().slice(0, 10);
    const trade = await app.runtime.services.trades.create(owner.actor, {
      accountId: held.account_id,
      type: "buy",
      date: today,
      qty: "2",
      price: "90",
      securityId: held.security_id,
    });
    // The provider's balance of the day anchors the account: the trade is absorbed until the provider's
    // next report, its shares are not computed beside the provider's holdings nor valued a second time.
    const [after] = await state();
    expect(after).toEqual(before);
    expect([after.positions, after.days]).toEqual([0, 0]);
    const listed = (await api.get(`/holdings?account_id=${held.account_id}`)).body.holdings;
    expect(listed.map((row: { cost_basis_source: string | null }) => row.cost_basis_source)).not.toContain("calculated");
    expect(listed).toHaveLength(2);
    await app.runtime.services.trades.delete(owner.actor, trade.id);
    expect(await state()).toEqual([before]);
  });

  test("another family's holding is 404 and its list is empty", async () => {
    const [holding] = (await api.get("/holdings")).body.holdings;
    const stranger = apiKeyClient(`${app.url}/api/v1`, (await createUser(app.runtime.services)).key);
    expect((await stranger.get(`/holdings/${holding.id}`)).status).toBe(404);
    expect((await stranger.get("/holdings")).body.holdings).toEqual([]);
  });
});
