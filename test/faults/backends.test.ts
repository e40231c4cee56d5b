import { eventually } from "../helpers/eventually";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { startOfTomorrowUtc } from "../../src/finance/banking/provider";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server";
import { FakeSimplefinBridge, generateHistory } from "../fakes/simplefin-bridge";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { startCluster, untilChatEventsArrive, type Cluster } from "../helpers/cluster";
import { createUser, type TestUser } from "../helpers/fixtures";
import { freshConnection, type FreshResponse } from "../helpers/fresh-connection";
import { apiKeyClient } from "../helpers/http";

/**
 * The backends fail under a running API process and worker process: PostgreSQL restarts, Redis
 * restarts, a bank provider and a model server stop answering. Each test names the promise it checks.
 */
jest.setTimeout(120_000);

const UPSTREAM_TIMEOUT_MS = 800;
let cluster: Cluster;
let model: FakeOpenAI;
let bridge: FakeSimplefinBridge;
let user: TestUser;

beforeAll(async () => {
  model = await startFakeOpenAI();
  bridge = new FakeSimplefinBridge();
  await bridge.start();
  bridge.accounts = [
    {
      id: "a",
      name: "Account a",
      currency: "USD",
      balance: "100",
      "balance-date": startOfTomorrowUtc() - 86_400,
      org: { name: "Bank", "sfin-url": "https://bank.example" },
      transactions: generateHistory({ accountId: "a", days: 30, perDay: 1, seed: 1 }),
    },
  ];
  cluster = await startCluster({
    apis: 1,
    workers: 1,
    persistentRedis: true,
    env: {
      ...BANK_TEST_ENV,
      BANK_UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      BANK_HISTORY_DAYS: "30",
      OPENAI_BASE_URL: model.url,
      ASSISTANT_MODEL: "fake-small",
      ASSISTANT_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      ASSISTANT_MAX_ATTEMPTS: "2",
      ASSISTANT_RETRY_DELAY_MS: "50",
      JOB_LOCK_MS: "2000",
    },
  });
  user = await createUser(cluster.control.services, { aiEnabled: true });
});
afterAll(async () => {
  await cluster?.stop();
  await model?.close();
  await bridge?.stop();
});

const api = () => apiKeyClient(`${cluster.apis[0].url}/api/v1`, user.key);
/** Polls /readyz until it answers `status`; returns that answer. */
function readyzAnswers(status: number, what: string): Promise<FreshResponse> {
  return eventually(
    async () => {
      const answer = await freshConnection(`${cluster.apis[0].url}/readyz`, { timeoutMs: 10_000 });
      return answer.status === status ? answer : false;
    },
    { what, timeout: 30_000, interval: 200 },
  );
}

/** Posts a message and waits until its reply is no longer pending; returns the reply's status. */
async function replyStatus(chatId: string, content: string, timeoutMs = 30_000): Promise<string> {
  const posted = await api().post(`/chats/${chatId}/messages`, { content });
  expect(posted.status).toBe(201);
  return eventually(
    async () => {
      const chat = await api().get(`/chats/${chatId}?per_page=100`);
      const status = chat.body.messages?.find((message: { id: string }) => message.id === posted.body.id)?.ai_response_status;
      return status && status !== "pending" ? (status as string) : false;
    },
    { what: `the reply to "${content}"`, timeout: timeoutMs, interval: 100 },
  );
}

function expectAlive(): void {
  for (const process of [...cluster.apis, ...cluster.workers])
    expect({ role: process.role, exit: process.child.exitCode, signal: process.child.signalCode }).toEqual({
      role: process.role,
      exit: null,
      signal: null,
    });
}

describe("PostgreSQL restarted", () => {
  test("promise: requests in flight fail cleanly with 503 service_unavailable and the documented body, /readyz reflects it, and the service recovers by itself", async () => {
    const chat = (await api().post("/chats", { title: "Across a database restart" })).body;
    expect(await replyStatus(chat.id, "Before the restart")).toBe("complete");

    // Mixed reads and writes keep coming while the server stops and starts.
    const answers: Array<FreshResponse | Error> = [];
    let loading = true;
    const load = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = 0; loading; i++) {
        const write = (i + lane) % 2 === 0;
        answers.push(
          await freshConnection(`${cluster.apis[0].url}/api/v1/${write ? "chats" : "accounts"}`, {
            method: write ? "POST" : "GET",
            headers: { "x-api-key": user.key },
            body: write ? { title: `load ${lane}-${i}` } : undefined,
            timeoutMs: 15_000,
          }).catch((error: Error) => error),
        );
      }
    });
    let stopped = false;
    try {
      await eventually(() => answers.length >= 8, { what: "the load to be under way" });
      await cluster.postgres.stop("fast");
      stopped = true;

      const down = await readyzAnswers(503, "/readyz to say the database is down");
      expect(down.body).toEqual({ status: "unavailable", down: ["database"] });
      const refused = await freshConnection(`${cluster.apis[0].url}/api/v1/accounts`, { headers: { "x-api-key": user.key } });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ error: "service_unavailable", message: expect.stringMatching(/try again/) });
      const graphql = await freshConnection(`${cluster.apis[0].url}/graphql`, {
        method: "POST",
        headers: { "x-api-key": user.key },
        body: { query: "{ accounts { id } }" },
      });
      expect(graphql.body.errors[0].extensions.code).toBe("SERVICE_UNAVAILABLE");

      await cluster.postgres.start();
      stopped = false;
      await readyzAnswers(200, "/readyz to say ready again");
      await eventually(async () => (await api().get("/accounts")).status === 200, {
        what: "requests to succeed again",
        timeout: 30_000,
        interval: 200,
      });
    } finally {
      loading = false;
      await Promise.all(load);
      // A failed check above must not leave the database down for the promises after this one.
      if (stopped) await cluster.postgres.start();
    }

    const statuses = answers.map((answer) => (answer instanceof Error ? answer.message : answer.status));
    expect(statuses).toContain(503);
    for (const answer of answers) {
      // Every request was answered (none cut, none left hanging), each a success or the documented 503.
      expect(answer).not.toBeInstanceOf(Error);
      const { status, body } = answer as FreshResponse;
      if (status === 503) expect(body).toEqual({ error: "service_unavailable", message: expect.any(String) });
      else expect([200, 201]).toContain(status);
    }
    // The worker recovered too: a reply is written after the restart, without restarting any process.
    expect(await replyStatus(chat.id, "After the restart")).toBe("complete");
    expectAlive();
  });
});

describe("Redis restarted", () => {
  test("promise: queues and the event bus recover without manual action, and what was queued is still done", async () => {
    const chat = (await api().post("/chats", { title: "Across a Redis restart" })).body;
    const events: Array<{ messageId: string; aiResponseStatus?: string }> = [];
    const socket = createClient({
      url: `${cluster.apis[0].url!.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { "X-Api-Key": user.key },
      retryAttempts: 0,
    });
    socket.subscribe<{ chatEvents: { messageId: string; aiResponseStatus?: string } }>(
      { query: `subscription ($id: ID!) { chatEvents(chatId: $id) { messageId aiResponseStatus } }`, variables: { id: chat.id } },
      { next: ({ data }) => data && events.push(data.chatEvents), error: () => {}, complete: () => {} },
    );
    try {
      const before = await api().post(`/chats/${chat.id}/messages`, { content: "Before" });
      await eventually(() => events.some((e) => e.messageId === before.body.id && e.aiResponseStatus === "complete"), {
        what: "the reply before",
      });

      // The worker is frozen (alive, taking nothing), so the next messages stay queued in Redis.
      const worker = cluster.workers[0];
      worker.child.kill("SIGSTOP");
      const queued: string[] = [];
      for (const content of ["Queued one", "Queued two", "Queued three"]) {
        queued.push((await api().post(`/chats/${chat.id}/messages`, { content })).body.id as string);
      }
      // An operator's restart: Redis writes its append-only file, exits, and starts again.
      await cluster.redis.stop("SIGTERM");
      const down = await readyzAnswers(503, "/readyz to say the queue is down");
      expect(down.body).toEqual({ status: "unavailable", down: ["queue"] });
      await cluster.redis.start();
      await readyzAnswers(200, "/readyz to say ready again");
      // The open subscription (never reconnected by the client) hears the bus again once the API process has
      // resubscribed: the bus is live-only, so events published in between are not replayed to it.
      await untilChatEventsArrive(cluster, chat.id, events);
      worker.child.kill("SIGCONT");
      const after = await api().post(`/chats/${chat.id}/messages`, { content: "After" });
      const done = (id: string) => events.some((e) => e.messageId === id && e.aiResponseStatus === "complete");
      // The worker reconnected by itself and did what was queued before the restart, then the new message.
      await eventually(() => [...queued, after.body.id].every(done), {
        what: "the queued replies and the new one, on the open subscription",
        timeout: 40_000,
      });
      const replies = (await api().get(`/chats/${chat.id}?per_page=100`)).body.messages.filter(
        (m: { role: string }) => m.role === "assistant",
      );
      expect(replies).toHaveLength(5);
      expectAlive();
    } finally {
      await socket.dispose();
    }
  });
});

describe("upstreams that hang", () => {
  test("promise: a hanging bank provider holds neither the request that claims a token nor a worker beyond the upstream timeout", async () => {
    const graphql = (query: string, variables: Record<string, unknown>) =>
      apiKeyClient(cluster.apis[0].url!, user.key).graphql(query, variables);
    const connect = `mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`;
    // The claim never answers: the request ends after the timeout and its retries, with the documented 503.
    bridge.http.inject({ kind: "timeout" }, { path: /^\/claim\//, times: 10 });
    // It answers at all (the claim never does), and with the error its upstream timeouts end in.
    const refused = await graphql(connect, { t: bridge.newSetupToken() });
    expect(refused.body.errors[0].extensions).toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    bridge.http.clearFaults();

    // Every /accounts request hangs: the sync fails after its timeouts, and the worker is free for the next one.
    bridge.http.inject({ kind: "timeout" }, { path: /\/accounts$/, times: 10 });
    const hung = (await graphql(connect, { t: bridge.newSetupToken() })).body.data.connectSimplefin.id;
    const failed = await waitForSync(cluster.control.services, hung, 30_000);
    expect(failed.status).toBe("failed");
    bridge.http.clearFaults();
    const next = (await graphql(connect, { t: bridge.newSetupToken() })).body.data.connectSimplefin.id;
    expect((await waitForSync(cluster.control.services, next, 30_000)).status).toBe("completed");
    const [{ running }] = (
      await cluster.control.sequelize.query("SELECT count(*)::int AS running FROM bank_sync_runs WHERE status IN ('pending', 'syncing')")
    )[0] as Array<{ running: number }>;
    expect(running).toBe(0);
  });

  test("promise: a hanging model server fails the reply after the assistant timeout, and the worker goes on replying", async () => {
    const chat = (await api().post("/chats", { title: "Hanging model" })).body;
    model.script({ kind: "delay", ms: 600_000 }, { kind: "delay", ms: 600_000 });
    // Failed, not pending: the model's answer would take ten minutes, so the assistant's timeout ended it.
    expect(await replyStatus(chat.id, "Will the model answer?")).toBe("failed");
    // While a model call hung, the API answered at once: it never waits on the model.
    expect(await replyStatus(chat.id, "And now?")).toBe("complete");
  });
});
