import { eventually } from "../helpers/eventually";
import { QueryTypes } from "sequelize";
import { startOfTomorrowUtc } from "../../src/finance/banking/provider";
import { FakeSimplefinBridge, generateHistory } from "../fakes/simplefin-bridge";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { startCluster, type Cluster } from "../helpers/cluster";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { freshConnection, type FreshResponse } from "../helpers/fresh-connection";
import { apiKeyClient } from "../helpers/http";
import { streamAdmin } from "../helpers/streaming";
import { WebhookReceiver } from "../fakes/webhook-receiver";

/**
 * kill -9 of an API process and of a worker process while mixed load runs through the proxy: sign-ins
 * (audited), idempotent transaction creates retried by their clients, chat messages answered by the
 * workers, a bank sync in progress. What was committed stays, once; nothing is left half-done.
 */
jest.setTimeout(120_000);

const DAY = 86_400;
let cluster: Cluster;
let bridge: FakeSimplefinBridge;
let receiver: WebhookReceiver;
let user: TestUser;
let accountId: string;
const EMAIL = `load-${Date.now()}@example.test`;
const PASSWORD = "correct horse battery staple 15";

beforeAll(async () => {
  bridge = new FakeSimplefinBridge();
  await bridge.start();
  bridge.accounts = ["a", "b"].map((id, index) => ({
    id,
    name: `Account ${id}`,
    currency: "USD",
    balance: "100",
    "balance-date": startOfTomorrowUtc() - DAY,
    org: { name: `Bank ${index}`, "sfin-url": "https://bank.example" },
    transactions: generateHistory({ accountId: id, days: 365, perDay: 1, seed: index * 1000 }),
  }));
  receiver = new WebhookReceiver([]);
  await receiver.start();
  cluster = await startCluster({
    apis: 2,
    workers: 2,
    env: {
      ...BANK_TEST_ENV,
      BANK_UPSTREAM_TIMEOUT_MS: "5000",
      BANK_HISTORY_DAYS: "365",
      JOB_LOCK_MS: "1500",
      STREAM_POLL_MS: "100",
      STREAM_LEASE_MS: "2000",
    },
  });
  await cluster.control.services.users.create({ email: EMAIL, password: PASSWORD, aiEnabled: true });
  const record = (await cluster.control.services.users.findByEmail(EMAIL))!;
  const key = (await cluster.control.services.apiKeys.create(record.id, { scope: "read_write" })).plaintext;
  user = await createUser(cluster.control.services, { aiEnabled: true });
  user = { ...user, key, userId: record.id, familyId: record.familyId, actor: await cluster.control.services.apiKeys.authenticate(key) };
  accountId = (await createAccount(cluster.control.services, user)).id;
});
afterAll(async () => {
  await cluster?.stop();
  await bridge?.stop();
  await receiver?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends through the proxy until answered with something other than a 5xx, as a client that retries does. */
async function untilAnswered(path: string, options: Parameters<typeof freshConnection>[1]): Promise<FreshResponse> {
  for (let attempt = 0; ; attempt++) {
    const answer = await freshConnection(`${cluster.proxy.url}${path}`, { timeoutMs: 15_000, ...options }).catch(() => null);
    if (answer && answer.status < 500) return answer;
    if (attempt > 50) throw new Error(`${path} never answered: ${answer?.status} ${answer?.text}`);
    await sleep(100);
  }
}

test("promise: after kill -9 of an API and a worker under load, no committed audit event is lost, the chain verifies, a stream destination receives every one, no idempotent create is duplicated, no reply is doubled, no sync stays running", async () => {
  const headers = { "x-api-key": user.key };
  // A webhook destination streams the sign-ins' audit events; the workers deliver them, one of them dies mid-way.
  const admin = await createUser(cluster.control.services, { role: "admin" });
  const destination = await streamAdmin(cluster.apis[1].url!, admin.key).create({
    kind: "webhook",
    name: "Across a worker kill",
    url: receiver.url,
    eventTypes: ["auth.login.success"],
  });
  receiver.trust([destination.secret!]);
  const chat = (await apiKeyClient(`${cluster.apis[1].url}/api/v1`, user.key).post("/chats", { title: "Under load" })).body;
  // Each provider answer takes 1.2 s (under the 5 s upstream timeout above), so a sync of 2 accounts × 365 days
  // lasts well beyond the kills even on an idle machine: it is running when the worker dies.
  bridge.http.delayMs = 1200;
  const connect = async () =>
    (
      await apiKeyClient(cluster.apis[1].url!, user.key).graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, {
        t: bridge.newSetupToken(),
      })
    ).body.data.connectSimplefin.id as string;
  const connectionIds = [await connect(), await connect()];

  let loading = true;
  const signIns: string[] = []; // request ids of sign-ins answered 200: each committed its audit events
  const externalIds: string[] = [];
  const messages: string[] = [];
  const lanes = [
    async () => {
      for (let i = 0; loading; i++) {
        const requestId = `sign-in-${i}`;
        const answer = await freshConnection(`${cluster.proxy.url}/api/v1/auth/login`, {
          method: "POST",
          headers: { "x-request-id": requestId },
          body: { email: EMAIL, password: PASSWORD },
        }).catch(() => null);
        if (answer?.status === 200) signIns.push(requestId);
      }
    },
    ...[0, 1].map((lane) => async () => {
      for (let i = 0; loading; i++) {
        const externalId = `load-${lane}-${i}`;
        // Retried with the same external id until answered: a retry after a cut connection must not create twice.
        const answer = await untilAnswered("/api/v1/transactions", {
          method: "POST",
          headers,
          body: {
            transaction: {
              account_id: accountId,
              date: "2026-01-15",
              amount: 10 + i,
              name: "Load",
              external_id: externalId,
              source: "load",
            },
          },
        });
        expect([200, 201]).toContain(answer.status);
        externalIds.push(externalId);
      }
    }),
    async () => {
      for (let i = 0; loading; i++) {
        const answer = await freshConnection(`${cluster.proxy.url}/api/v1/chats/${chat.id}/messages`, {
          method: "POST",
          headers,
          body: { content: `How much did I spend? (${i})` },
        }).catch(() => null);
        if (answer?.status === 201) messages.push(answer.body.id);
        await sleep(50);
      }
    },
    async () => {
      while (loading) await freshConnection(`${cluster.proxy.url}/api/v1/accounts`, { headers }).catch(() => null);
    },
  ];
  let syncingAtKill: Array<string | undefined> | undefined;
  const running = lanes.map((lane) => lane());
  try {
    await sleep(1500);
    await cluster.apis[0].kill("SIGKILL");
    await sleep(1000);
    syncingAtKill = await Promise.all(connectionIds.map(async (id) => (await cluster.control.services.banking.runs(id, 1))[0]?.status));
    await cluster.workers[0].kill("SIGKILL");
    await sleep(1000);
    // Enough of each kind, however busy the machine: the survivors carry the load from here.
    await eventually(() => signIns.length > 0 && externalIds.length > 5 && messages.length > 3, {
      what: "some of each request kind",
      timeout: 30_000,
    });
  } finally {
    loading = false;
    await Promise.all(running);
  }
  expect(signIns.length).toBeGreaterThan(0); // a sign-in hashes a password (scrypt): few fit in the window
  expect(externalIds.length).toBeGreaterThan(5);
  expect(messages.length).toBeGreaterThan(3);

  const sql = <T extends object>(query: string, bind: unknown[] = []) =>
    cluster.control.sequelize.query<T>(query, { bind, type: QueryTypes.SELECT });
  // Audit: every sign-in answered 200 has its event, and the chain (linked by the survivors) verifies.
  const audited = await sql<{ request_id: string }>(
    "SELECT request_id FROM audit_events WHERE event_type = 'auth.login.success' AND request_id LIKE 'sign-in-%'",
  );
  expect(signIns.filter((id) => !audited.some((row) => row.request_id === id))).toEqual([]);
  const report = await cluster.control.services.audit.verify();
  expect(report).toMatchObject({ ok: true });

  // Idempotent creates: one row per external id, whatever the retries.
  const created = await sql<{ external_id: string; copies: number }>(
    "SELECT external_id, count(*)::int AS copies FROM transactions WHERE source = 'load' GROUP BY external_id",
  );
  expect(created.filter((row) => row.copies !== 1)).toEqual([]);
  expect(created.map((row) => row.external_id).sort()).toEqual(expect.arrayContaining(externalIds));

  // Replies: every message answered once, the killed worker's jobs taken over after their lock expired.
  await eventually(
    async () =>
      (await sql<{ pending: number }>("SELECT count(*)::int AS pending FROM chat_messages WHERE ai_response_status = 'pending'"))[0]
        .pending === 0,
    { what: "every reply to be written", timeout: 40_000, interval: 200 },
  );
  const replies = await sql<{ id: string; replies: number }>(
    `SELECT m.id, count(r.id)::int AS replies FROM chat_messages m LEFT JOIN chat_messages r ON r.reply_to_message_id = m.id
      WHERE m.chat_id = $1 AND m.role = 'user' GROUP BY m.id`,
    [chat.id],
  );
  expect(replies.filter((row) => row.replies !== 1)).toEqual([]);
  expect(replies.map((row) => row.id)).toEqual(expect.arrayContaining(messages));

  // Bank sync: the runs in progress at the kill finish (taken over where their worker died), none stays marked running.
  expect(syncingAtKill).toEqual(["syncing", "syncing"]);
  for (const id of connectionIds) expect((await waitForSync(cluster.control.services, id, 60_000)).status).toBe("completed");
  const [{ stuck }] = await sql<{ stuck: number }>(
    "SELECT count(*)::int AS stuck FROM bank_sync_runs WHERE status IN ('pending', 'syncing')",
  );
  expect(stuck).toBe(0);

  // Streaming: every sign-in event reached the destination, across the worker's death (at least once).
  const streamed = await sql<{ id: string }>(
    "SELECT id FROM audit_events WHERE event_type = 'auth.login.success' AND request_id LIKE 'sign-in-%'",
  );
  expect(streamed.length).toBeGreaterThanOrEqual(signIns.length);
  await eventually(() => streamed.every((row) => receiver.firstArrivals().includes(row.id)), {
    what: "every sign-in event at the destination",
    timeout: 30_000,
  });
  expect(receiver.rejected).toEqual([]);
});
