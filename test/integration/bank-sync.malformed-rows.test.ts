/**
 * The probe's case: one malformed row from a bank provider (a NUL byte, an impossible date) failed every
 * sync of its connection, forever. Now the row is skipped and named on the sync run, which the API
 * shows, and the rest of the answer is imported, on this sync and the next.
 */
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeLunchflowServer, type FakeLunchflowTransaction } from "../fakes/lunchflow-server";

let app: TestApp;
let lunchflow: FakeLunchflowServer;
let user: TestUser;

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
const row = (id: string, extra: Partial<FakeLunchflowTransaction> = {}): FakeLunchflowTransaction => ({
  id,
  amount: -10,
  currency: "EUR",
  date: daysAgo(5),
  merchant: "Shop",
  description: `Purchase ${id}`,
  isPending: false,
  ...extra,
});

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  lunchflow.keys.set("lf_key", "active");
  const impossibleDate = `${new Date().getUTCFullYear() - 1}-02-30`;
  lunchflow.accounts = [
    {
      id: 7,
      name: "Checking",
      institution_name: "Bank",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 100, currency: "EUR" },
      transactions: [
        row("good-1"),
        row("nul-name", { description: "Coffee\u0000shop" }),
        row("bad-date", { date: impossibleDate }),
        row("nul\u0000id"),
        row("huge", { amount: "-1e20" }),
        row("good-2", { date: daysAgo(6) }),
      ],
      holdings: null,
    },
  ];
  app = await startTestApp({ env: BANK_TEST_ENV, roles: { api: true, workers: true } });
  user = await createUser(app.runtime.services);
});

afterAll(async () => {
  await app?.stop();
  await lunchflow?.stop();
});

test("malformed rows are skipped and reported on the run; the rest is imported, every time", async () => {
  const api = apiKeyClient(app.url, user.key);
  const connected = await api.graphql(`mutation ($k: String!, $u: String) { connectLunchflow(apiKey: $k, baseUrl: $u) { id } }`, {
    k: "lf_key",
    u: await lunchflow.start(),
  });
  const connectionId = connected.body.data.connectLunchflow.id;
  expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 2 });

  const runs = await api.graphql(`{ bankConnections { status syncRuns { status createdCount skippedCount errors } } }`);
  const [connection] = runs.body.data.bankConnections;
  expect(connection.status).toBe("good");
  const [run] = connection.syncRuns;
  expect(run).toMatchObject({ status: "completed", createdCount: 2, skippedCount: 4 });
  expect([...run.errors].sort()).toEqual(
    [
      `Checking: skipped transaction "bad-date": unusable date "${new Date().getUTCFullYear() - 1}-02-30"`,
      'Checking: skipped transaction "huge": amount "100000000000000000000" is out of range',
      'Checking: skipped transaction "nul-name": NUL character in its name',
      'Checking: skipped transaction "nul\\0id": NUL character in its id',
    ].sort(),
  );
  const [rows] = await app.runtime.sequelize.query("SELECT external_id FROM transactions WHERE family_id = $1 ORDER BY external_id", {
    bind: [user.familyId],
  });
  expect(rows).toEqual([{ external_id: "good-1" }, { external_id: "good-2" }]);

  // The next sync is not stuck on the same rows.
  await app.runtime.services.banking.sync(user.actor, connectionId);
  const next = await waitForSync(app.runtime.services, connectionId);
  expect(next).toMatchObject({ status: "completed", createdCount: 0 });
});
