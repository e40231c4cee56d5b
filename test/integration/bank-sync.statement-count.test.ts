/**
 * The bank connections query, with every connection's accounts and runs and every bank account's
 * family account, balance history and holdings, costs a fixed number of SQL statements however many
 * connections and accounts the family has: one per kind of field (DataLoader batches, scoped to the
 * family), never one per connection or account.
 *
 * The data comes from the real sync against the Lunch Flow fake, run in this process (the worker's
 * own code, without a worker whose jobs would add statements to the count). Only what the fake cannot
 * give is written directly: balances of earlier days (a sync records today's) and an older holdings
 * snapshot, so that the limits and "latest snapshot" have something to cut.
 */
import { RequestContext } from "../../src/transports/graphql/context";
import { BANK_TEST_ENV } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeLunchflowServer, type FakeLunchflowAccount } from "../fakes/lunchflow-server";

const LAST_USED_TOUCH = /UPDATE api_keys SET last_used_at/;
const BALANCE_LIMIT = 30;
const RUN_LIMIT = 5;

const CONNECTIONS_QUERY = `{
  bankConnections {
    id
    accounts {
      id name
      account { id name }
      balances(limit: ${BALANCE_LIMIT}) { date balance }
      holdings { value security { ticker } }
    }
    syncRuns(limit: ${RUN_LIMIT}) { id status }
  }
}`;

/** One connection as the test built it: what the fake served, and what was added beside it. */
type SeededConnection = { id: string; accounts: FakeLunchflowAccount[]; historyDays: number[]; runs: number };
type Family = { user: TestUser; connections: SeededConnection[] };

let app: TestApp;
let lunchflow: FakeLunchflowServer;
let baseUrl: string;
let small: Family;
let large: Family;

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  baseUrl = await lunchflow.start();
  lunchflow.keys.set("lf_loaders_key", "active");
  app = await startTestApp({ env: BANK_TEST_ENV });
  small = await seedFamily("Small", 2, 3);
  large = await seedFamily("Large", 4, 5);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await lunchflow?.stop();
});

function fakeAccount(label: string, connection: number, index: number): FakeLunchflowAccount {
  const withHoldings = index % 2 === 0;
  return {
    id: index + 1,
    name: `${label} ${connection + 1}.${index + 1}`,
    institution_name: `${label} Bank ${connection + 1}`,
    provider: "gocardless",
    currency: "EUR",
    status: "ACTIVE",
    balance: { amount: 1000 + 100 * connection + index, currency: "EUR" },
    transactions: [],
    holdings: withHoldings
      ? {
          holdings: [
            {
              security: { name: "Small Cap", currency: "EUR", tickerSymbol: `S${connection}${index}` },
              quantity: 1,
              price: 10,
              value: 10 + index,
              currency: "EUR",
            },
            {
              security: { name: "Large Cap", currency: "EUR", tickerSymbol: `L${connection}${index}` },
              quantity: 2,
              price: 500,
              value: 1000 + index,
              currency: "EUR",
            },
          ],
          totalValue: 1010 + 2 * index,
          currency: "EUR",
        }
      : null,
  };
}

/**
 * `connections` Lunch Flow connections of `accounts` accounts each, all synced. Connection c has 1 + 3c
 * runs and account a has 15a earlier days of balances, so the run and balance limits cut some lists and
 * not others; the accounts with holdings also get an older snapshot that must not show.
 */
async function seedFamily(label: string, connections: number, accounts: number): Promise<Family> {
  const { services, sequelize } = app.runtime;
  const user = await createUser(services);
  const api = apiKeyClient(app.url, user.key);
  const seeded: SeededConnection[] = [];
  for (let c = 0; c < connections; c += 1) {
    lunchflow.accounts = Array.from({ length: accounts }, (_, a) => fakeAccount(label, c, a));
    const connected = await api.graphql(`mutation ($k: String!, $u: String) { connectLunchflow(apiKey: $k, baseUrl: $u) { id } }`, {
      k: "lf_loaders_key",
      u: baseUrl,
    });
    const id: string = connected.body.data.connectLunchflow.id;
    const runs = 1 + 3 * c;
    for (let run = 0; run < runs; run += 1) {
      if (run > 0) await services.banking.sync(user.actor, id);
      expect(await services.bankSync.run(id)).toMatchObject({ status: "completed" });
    }
    const historyDays = lunchflow.accounts.map((_, a) => 15 * a);
    const providerAccounts = await services.repositories.banking.accounts.providerAccounts(id);
    for (const [a, fake] of lunchflow.accounts.entries()) {
      const { accountId } = providerAccounts.find((row) => row.externalId === String(fake.id))!;
      await sequelize.query(
        `INSERT INTO account_balances (account_id, date, balance, currency)
         SELECT $1, latest.date - d, 500 + d, 'EUR' FROM generate_series(1, $2::int) d,
                (SELECT max(date) AS date FROM account_balances WHERE account_id = $1) latest`,
        { bind: [accountId, historyDays[a]] },
      );
      if (fake.holdings) {
        await services.repositories.banking.accounts.replaceHoldings(user.familyId, accountId!, "2001-01-02", [
          { ...oldHolding, securityKey: `ticker:OLD${c}${a}` },
        ]);
      }
    }
    seeded.push({ id, accounts: [...lunchflow.accounts], historyDays, runs });
  }
  return { user, connections: seeded };
}

const oldHolding = {
  ticker: "OLD",
  name: "Sold long ago",
  isin: null,
  figi: null,
  cusip: null,
  quantity: "1",
  price: "1",
  value: "1",
  costBasis: null,
  currency: "EUR",
};

/** The statements the database saw while `request` ran, without the occasional last_used_at touch. */
async function statementsDuring(request: () => Promise<HttpResponse>): Promise<{ response: HttpResponse; statements: string[] }> {
  app.statements.length = 0;
  const response = await request();
  const statements = app.statements.filter((sql) => !LAST_USED_TOUCH.test(sql)).map((sql) => sql.replace(/^Executing \([^)]*\): /, ""));
  return { response, statements };
}

async function connectionsOf(family: Family) {
  const api = apiKeyClient(app.url, family.user.key);
  // Warm up: the key's first use schedules its last_used_at refresh; later requests skip it.
  await api.graphql(`{ bankConnections { id } }`);
  const { response, statements } = await statementsDuring(() => api.graphql(CONNECTIONS_QUERY));
  expect(response.body.errors).toBeUndefined();
  return { connections: response.body.data.bankConnections, statements };
}

/** Runs of a connection as the unbatched read gave them: newest first, LIMIT. */
async function newestRunIds(connectionId: string, limit: number): Promise<string[]> {
  const [rows] = await app.runtime.sequelize.query(
    `SELECT id FROM bank_sync_runs WHERE connection_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
    { bind: [connectionId] },
  );
  return (rows as Array<{ id: string }>).map((row) => row.id);
}

test("2 connections × 3 accounts and 4 × 5 cost the same statements: one per kind of field", async () => {
  const smallRead = await connectionsOf(small);
  const largeRead = await connectionsOf(large);

  expect(smallRead.connections).toHaveLength(2);
  expect(largeRead.connections).toHaveLength(4);
  expect(largeRead.connections.flatMap((c: { accounts: unknown[] }) => c.accounts)).toHaveLength(20);
  // The key's lookup apart: an API process remembers a key used in the last few seconds (docs/security.md),
  // so a request makes it once or not at all, whatever it reads.
  const ofTheRead = (statements: string[]) => statements.filter((sql) => !/FROM api_keys/.test(sql));
  expect(ofTheRead(smallRead.statements).length).toBe(ofTheRead(largeRead.statements).length);

  const listing = ofTheRead(largeRead.statements)
    .map((sql, i) => `${i + 1}. ${sql.replace(/\s+/g, " ")}`)
    .join("\n");
  const reading = (pattern: RegExp) => largeRead.statements.filter((sql) => pattern.test(sql)).length;
  // The connections, then one batch each: provider accounts, runs, accounts, balances, holdings.
  expect({ total: ofTheRead(largeRead.statements).length, listing }).toEqual({ total: 6, listing });
  expect(reading(/FROM api_keys/)).toBeLessThanOrEqual(1);
  expect(reading(/FROM bank_connections/)).toBe(1);
  expect(reading(/FROM bank_provider_accounts/)).toBe(1);
  expect(reading(/FROM bank_sync_runs/)).toBe(1);
  expect(reading(/FROM accounts WHERE/)).toBe(1);
  expect(reading(/FROM account_balances/)).toBe(1);
  expect(reading(/FROM holdings/)).toBe(1);
});

test("the batched answers are what the sync stored: each connection's and account's own, ordered and limited as before", async () => {
  for (const family of [small, large]) {
    const { connections } = await connectionsOf(family);
    expect(connections.map((c: { id: string }) => c.id)).toEqual(family.connections.map((c) => c.id));

    for (const [c, seeded] of family.connections.entries()) {
      const connection = connections[c];
      // Each connection gets its own newest N runs, newest first, as a LIMIT per connection would.
      expect(connection.syncRuns.map((run: { id: string }) => run.id)).toEqual(await newestRunIds(seeded.id, RUN_LIMIT));
      expect(connection.syncRuns).toHaveLength(Math.min(seeded.runs, RUN_LIMIT));
      expect(connection.syncRuns.every((run: { status: string }) => run.status === "completed")).toBe(true);

      // By institution, then name: here the fake's order.
      expect(connection.accounts.map((account: { name: string }) => account.name)).toEqual(seeded.accounts.map((fake) => fake.name));
      for (const [a, fake] of seeded.accounts.entries()) {
        const bankAccount = connection.accounts[a];
        expect(bankAccount.account.name).toBe(`${fake.name} (${fake.institution_name})`);

        const balances: Array<{ date: string; balance: string }> = bankAccount.balances;
        expect(balances).toHaveLength(Math.min(1 + seeded.historyDays[a], BALANCE_LIMIT));
        expect(Number(balances[0].balance)).toBe(fake.balance.amount);
        // Newest first, one per day, the earlier days' as the test wrote them.
        balances.slice(1).forEach((day, i) => {
          expect(Number(day.balance)).toBe(500 + i + 1);
          expect(Date.parse(day.date)).toBe(Date.parse(balances[0].date) - (i + 1) * 86_400_000);
        });

        // The latest snapshot only (not the older one), largest value first.
        const expectedHoldings = fake.holdings
          ? [...fake.holdings.holdings]
              .map((holding: any) => ({ value: holding.value, ticker: holding.security.tickerSymbol }))
              .sort((x, y) => y.value - x.value)
          : [];
        expect(bankAccount.holdings.map((holding: any) => ({ value: Number(holding.value), ticker: holding.security.ticker }))).toEqual(
          expectedHoldings,
        );
      }
    }
  }
});

test("a batch per distinct limit: two limits on one field cost two statements, each list cut at its own limit", async () => {
  const api = apiKeyClient(app.url, large.user.key);
  const { response, statements } = await statementsDuring(() =>
    api.graphql(`{
      bankConnections {
        newest: syncRuns(limit: 1) { id }
        syncRuns(limit: ${RUN_LIMIT}) { id }
        accounts { latest: balances(limit: 1) { date balance } balances(limit: ${BALANCE_LIMIT}) { date balance } }
      }
    }`),
  );
  expect(response.body.errors).toBeUndefined();
  expect(statements.filter((sql) => /FROM bank_sync_runs/.test(sql))).toHaveLength(2);
  expect(statements.filter((sql) => /FROM account_balances/.test(sql))).toHaveLength(2);
  for (const connection of response.body.data.bankConnections) {
    expect(connection.newest).toEqual(connection.syncRuns.slice(0, 1));
    for (const account of connection.accounts) expect(account.latest).toEqual(account.balances.slice(0, 1));
  }
});

test("another family's connection and account ids read as nothing, even inside a batch with the family's own", async () => {
  const { services, logger } = app.runtime;
  const smallContext = new RequestContext(services, small.user.actor, "loaders-isolation", logger);
  const loaders = smallContext.bankingLoaders;
  const own = small.connections[0].id;
  const foreign = large.connections[0].id;
  const [ownAccount] = await services.repositories.banking.accounts.providerAccounts(own);
  const [foreignAccount] = await services.repositories.banking.accounts.providerAccounts(foreign);

  // Asked for in the same tick, so each pair lands in one batch.
  const [
    ownAccounts,
    foreignAccounts,
    ownRuns,
    foreignRuns,
    ownRow,
    foreignRow,
    ownBalances,
    foreignBalances,
    ownHoldings,
    foreignHoldings,
  ] = await Promise.all([
    loaders.providerAccounts(own),
    loaders.providerAccounts(foreign),
    loaders.runs(own, RUN_LIMIT),
    loaders.runs(foreign, RUN_LIMIT),
    loaders.account(ownAccount.accountId),
    loaders.account(foreignAccount.accountId),
    loaders.balances(ownAccount.accountId, BALANCE_LIMIT),
    loaders.balances(foreignAccount.accountId, BALANCE_LIMIT),
    loaders.holdings(ownAccount.accountId),
    loaders.holdings(foreignAccount.accountId),
  ]);
  expect(ownAccounts).toHaveLength(3);
  expect(ownRuns).toHaveLength(1);
  expect(ownRow?.id).toBe(ownAccount.accountId);
  expect(ownBalances.length).toBeGreaterThan(0);
  expect(ownHoldings.length).toBeGreaterThan(0);
  expect([foreignAccounts, foreignRuns, foreignRow, foreignBalances, foreignHoldings]).toEqual([[], [], null, [], []]);

  // Over GraphQL, a family sees its own connections only.
  const { connections } = await connectionsOf(small);
  expect(connections.map((c: { id: string }) => c.id)).not.toContain(foreign);
});
