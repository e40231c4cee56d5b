import { startOfTomorrowUtc } from "../../src/finance/banking/provider";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { allBalanceRows, expectMatchesOracle } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeSimplefinBridge, generateHistory } from "../fakes/simplefin-bridge";

/**
 * A bank-fed account: the provider's balance anchors today, history is derived backwards through the
 * imported transactions, a client's own edit moves the past (not the provider's today), and the next
 * sync anchors again. Each sync recomputes each account once, whatever the number of rows it imported.
 */
const DAY = 86_400;
let app: TestApp;
let bridge: FakeSimplefinBridge;
let user: TestUser;
let connectionId: string;
const api = () => apiKeyClient(`${app.url}/api/v1`, user.key);
const today = new Date((startOfTomorrowUtc() - DAY) * 1000).toISOString().slice(0, 10);

beforeAll(async () => {
  bridge = new FakeSimplefinBridge();
  await bridge.start();
  const balanceDate = startOfTomorrowUtc() - DAY;
  bridge.accounts = [
    {
      id: "chk-1",
      name: "Everyday Checking",
      currency: "USD",
      balance: "1520.35",
      "balance-date": balanceDate,
      org: { name: "First Bank", "sfin-url": "https://first.example" },
      transactions: generateHistory({ accountId: "chk-1", days: 40, perDay: 2 }),
    },
    {
      id: "cc-2",
      name: "Rewards Visa Card",
      currency: "USD",
      balance: "-320.10",
      "balance-date": balanceDate,
      org: { name: "First Bank", "sfin-url": "https://first.example" },
      transactions: generateHistory({ accountId: "cc-2", days: 40, perDay: 1, seed: 77 }),
    },
  ];
  app = await startTestApp({ env: { ...BANK_TEST_ENV, SIMPLEFIN_DAILY_REQUEST_BUDGET: "200" }, roles: { api: true, workers: true } });
  user = await createUser(app.runtime.services);
});
afterAll(async () => {
  await app?.stop();
  await bridge?.stop();
});

async function accountNamed(name: string): Promise<Record<string, any>> {
  const { body } = await api().get("/accounts");
  return body.accounts.find((account: Record<string, any>) => account.name.startsWith(name));
}

test("a sync anchors each account at the provider's balance and derives its history backwards, one recompute per account", async () => {
  app.statements.length = 0;
  const connected = await apiKeyClient(app.url, user.key).graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, {
    t: bridge.newSetupToken(),
  });
  connectionId = connected.body.data.connectSimplefin.id;
  expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 120 });
  // Per account: the one rebuild that opened it (its opening anchor) and the sync's one rebuild, for 120 imported
  // rows; never a per-day refresh (a sync rebuilds once, it does not write day by day).
  const rebuilds = app.statements.filter((sql) => sql.includes("INSERT INTO ledger_days") && sql.includes("date >= $2::date"));
  expect(rebuilds).toHaveLength(4);
  expect(app.statements.filter((sql) => sql.includes("INSERT INTO ledger_days") && sql.includes("IN ($2::date, $3::date)"))).toHaveLength(
    0,
  );

  const checking = await accountNamed("Everyday Checking");
  const card = await accountNamed("Rewards Visa Card");
  expect([checking.balance, card.balance]).toEqual(["$1,520.35", "$320.10"]);
  const [newest] = await allBalanceRows(app, user, `&account_id=${checking.id}`);
  expect(newest).toMatchObject({ date: today, end_balance: "$1,520.35" });
  const anchors = (await api().get(`/valuations?account_id=${checking.id}`)).body.valuations;
  expect(anchors.map((v: Record<string, any>) => [v.kind, v.date])).toEqual([
    ["current_anchor", today],
    ["opening_anchor", anchors[1].date],
  ]);
  await expectMatchesOracle(app, user);
});

test("a client's manual edit moves the derived past, not the provider's today; the next sync anchors again", async () => {
  const checking = await accountNamed("Everyday Checking");
  const tenDaysAgo = new Date(Date.parse(today) - 10 * DAY * 1000).toISOString().slice(0, 10);
  const elevenDaysAgo = new Date(Date.parse(today) - 11 * DAY * 1000).toISOString().slice(0, 10);
  const [before] = await allBalanceRows(app, user, `&account_id=${checking.id}&end_date=${elevenDaysAgo}`);
  const created = await api().post("/transactions", {
    transaction: { account_id: checking.id, date: tenDaysAgo, amount: "100", name: "Cash withdrawal", nature: "expense" },
  });
  expect(created.status).toBe(201);
  expect((await accountNamed("Everyday Checking")).balance).toBe("$1,520.35");
  // The day before the withdrawal held 100 more than the derived history said (it was spent since).
  const [dayBefore] = await allBalanceRows(app, user, `&account_id=${checking.id}&end_date=${elevenDaysAgo}`);
  expect(dayBefore.date).toBe(before.date);
  expect(dayBefore.end_balance_cents).toBe(before.end_balance_cents + 10000);
  await expectMatchesOracle(app, user);

  bridge.accounts[0].balance = "1400.00";
  const run = await app.runtime.services.bankSync.run(connectionId);
  expect(run!.status).toBe("completed");
  expect((await accountNamed("Everyday Checking")).balance).toBe("$1,400.00");
  const kinds = (await api().get(`/valuations?account_id=${checking.id}`)).body.valuations.map((v: Record<string, any>) => v.kind);
  expect(kinds).toEqual(["current_anchor", "opening_anchor"]);
  await expectMatchesOracle(app, user);
});
