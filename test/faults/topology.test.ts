import { eventually } from "../helpers/eventually";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { JOBS, QueueName, SCHEDULES } from "../../workers/queues";
import { startCluster, untilChatEventsArrive, type Cluster } from "../helpers/cluster";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { freshConnection } from "../helpers/fresh-connection";

/**
 * The deployed topology: two `finance-gateway api` and two `finance-gateway worker` processes on one
 * PostgreSQL and one Redis, the APIs behind a round-robin proxy. Each test names the promise it checks.
 */
jest.setTimeout(120_000);

const RATE_LIMIT = 12;
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ apis: 2, workers: 2, env: { RATE_LIMIT_REQUESTS: String(RATE_LIMIT), RATE_LIMIT_WINDOW_SECONDS: "600" } });
});
afterAll(() => cluster?.stop());

type ChatEvent = { kind: string; messageId: string; aiResponseStatus?: string; message?: { role: string; content: string } };

function subscribeToChat(url: string, key: string, chatId: string, events: ChatEvent[], closes: number[] = []): Client {
  const socket = createClient({
    url: `${url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { "X-Api-Key": key },
    retryAttempts: 0,
    on: { closed: (event) => closes.push((event as { code: number }).code) },
  });
  socket.subscribe<{ chatEvents: ChatEvent }>(
    {
      query: `subscription ($id: ID!) { chatEvents(chatId: $id) { kind messageId aiResponseStatus message { role content } } }`,
      variables: { id: chatId },
    },
    { next: ({ data }) => data && events.push(data.chatEvents), error: () => {}, complete: () => {} },
  );
  return socket;
}

test("promise: a subscription through the proxy, on either API process, receives events produced by the other API and by the workers", async () => {
  const user = await createUser(cluster.control.services, { aiEnabled: true });
  const [first, second] = cluster.apis;
  const chat = (await apiKeyClient(`${first.url}/api/v1`, user.key).post("/chats", { title: "Across processes" })).body;
  const routedBefore = cluster.proxy.routed.length;
  const onEach: ChatEvent[][] = [[], []];
  const sockets = onEach.map((events) => subscribeToChat(cluster.proxy.url, user.key, chat.id, events));
  try {
    // Round robin: the two WebSocket connections went to different API processes.
    await eventually(() => cluster.proxy.routed.length >= routedBefore + 2, { what: "both WebSocket connections" });
    expect(new Set(cluster.proxy.routed.slice(routedBefore, routedBefore + 2))).toEqual(new Set([first.port, second.port]));
    for (const events of onEach) await untilChatEventsArrive(cluster, chat.id, events);

    // Posted on the first API; the reply is written by whichever worker takes the job.
    const posted = (
      await apiKeyClient(`${first.url}/api/v1`, user.key).post(`/chats/${chat.id}/messages`, { content: "What did I spend?" })
    ).body;
    for (const events of onEach) {
      await eventually(() => events.some((event) => event.messageId === posted.id && event.aiResponseStatus === "complete"), {
        what: "the worker's reply on every subscriber",
        timeout: 30_000,
      });
      expect(events.filter((event) => event.kind === "MESSAGE").map((event) => event.message!.role)).toEqual(["user", "assistant"]);
    }
  } finally {
    await Promise.all(sockets.map((socket) => socket.dispose()));
  }
});

test("promise: the recurring schedules registered by both workers exist once, and a scheduled job fires once per period", async () => {
  const queues = cluster.control.queues;
  for (const queue of new Set(SCHEDULES.map((schedule) => schedule.queue))) {
    const schedulers = await queues.queue(queue).getJobSchedulers();
    expect(schedulers.map((scheduler) => scheduler.key).sort()).toEqual(
      SCHEDULES.filter((schedule) => schedule.queue === queue)
        .map((schedule) => schedule.id)
        .sort(),
    );
  }
  // Both workers register every schedule at start (an upsert by id), as each would on a restart: a
  // fast one registered the same way shows how often its job runs with two workers listening.
  const maintenance = queues.queue(QueueName.Maintenance);
  const period = 400;
  const registerFromBoth = () =>
    maintenance.upsertJobScheduler("topology-probe", { every: period }, { name: JOBS[QueueName.Maintenance].chainAuditEvents });
  await Promise.all([registerFromBoth(), registerFromBoth()]);
  const probes = async () =>
    (await maintenance.getJobs(["completed", "failed", "active", "waiting"])).filter((job) => job.repeatJobKey === "topology-probe");
  const finished = async () => (await probes()).filter((job) => job.finishedOn);
  // It does fire: some periods' runs finish (however slowly a loaded machine gets to them).
  await eventually(async () => (await finished()).length >= 5, { what: "five periods' runs", timeout: 60_000, interval: period });
  await maintenance.removeJobScheduler("topology-probe");
  // Removing the scheduler leaves no next run; the ones already taken finish.
  await eventually(async () => (await probes()).every((job) => job.finishedOn), { what: "the last runs to finish", timeout: 30_000 });
  const runs = await probes();
  // A scheduled run's id ends with its period's slot time, as the scheduler reckons it (not this test's clock).
  const slots = runs.map((job) => Number(job.id!.split(":").pop()));
  expect(new Set(slots).size).toBe(slots.length); // no period ran twice
  expect(runs.every((job) => job.attemptsStarted <= 1 && job.finishedOn)).toBe(true); // each ran once, to the end
  // At most one run per period over the slots they cover (the registration's own first run may be one more).
  expect(runs.length).toBeLessThanOrEqual(Math.ceil((Math.max(...slots) - Math.min(...slots)) / period) + 2);
  const processedBy = new Set(runs.map((job) => job.processedBy));
  expect(processedBy.size).toBeGreaterThanOrEqual(1);
});

test("promise: rate limits are shared: the requests of one key, spread over both API processes, spend one budget", async () => {
  const user = await createUser(cluster.control.services);
  const routedBefore = cluster.proxy.routed.length;
  const statuses: number[] = [];
  for (let i = 0; i < RATE_LIMIT + 4; i++) {
    statuses.push((await freshConnection(`${cluster.proxy.url}/api/v1/accounts`, { headers: { "x-api-key": user.key } })).status);
  }
  const routed = cluster.proxy.routed.slice(routedBefore);
  expect(new Set(routed)).toEqual(new Set(cluster.apis.map((api) => api.port)));
  expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT);
  expect(statuses.slice(RATE_LIMIT)).toEqual([429, 429, 429, 429]);
});

test("promise: a key revoked through one API process is refused on the next request by every API process, though each remembers it", async () => {
  const user = await createUser(cluster.control.services);
  const { apiKey, plaintext } = await cluster.control.services.apiKeys.create(user.userId, { scope: "read" });
  const [first, second] = cluster.apis;
  const status = async (url: string) => (await freshConnection(`${url}/api/v1/accounts`, { headers: { "x-api-key": plaintext } })).status;
  // Each process has just authenticated the key, so each holds it in its short-lived key cache.
  for (const api of cluster.apis) expect([await status(api.url!), await status(api.url!)]).toEqual([200, 200]);

  const revoked = await apiKeyClient(first.url!, user.key).graphql(`mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`, {
    id: apiKey.id,
  });
  expect(revoked.body.data.revokeApiKey.revokedAt).toEqual(expect.any(String));

  // At once, with no wait: the other process first, then the one that revoked it.
  expect(await status(second.url!)).toBe(401);
  expect(await status(first.url!)).toBe(401);
});

test("promise: a user suspended through one API process is cut off on the other at once: session, API key and open WebSocket", async () => {
  const admin = await createUser(cluster.control.services, { role: "admin" });
  const password = "correct horse battery staple 15";
  const email = `suspended-${Date.now()}@example.test`;
  await cluster.control.services.users.create({ email, password, familyOfEmail: admin.email, aiEnabled: true });
  const target: TestUser = await (async () => {
    const record = (await cluster.control.services.users.findByEmail(email))!;
    const key = (await cluster.control.services.apiKeys.create(record.id, { scope: "read_write" })).plaintext;
    return {
      userId: record.id,
      familyId: record.familyId,
      email,
      key,
      readKey: key,
      actor: await cluster.control.services.apiKeys.authenticate(key),
    };
  })();
  const [first, second] = cluster.apis;
  const login = await client(second.url!).post("/api/v1/auth/login", { email, password });
  expect(login.status).toBe(200);
  const bearer = { authorization: `Bearer ${login.body.access_token}` };
  const onSecond = client(`${second.url}/api/v1`);
  expect((await onSecond.get("/accounts", bearer)).status).toBe(200);
  expect((await onSecond.get("/accounts", { "x-api-key": target.key })).status).toBe(200);
  const chat = (await apiKeyClient(`${second.url}/api/v1`, target.key).post("/chats", { title: "Open socket" })).body;
  const events: ChatEvent[] = [];
  const closes: number[] = [];
  const socket = subscribeToChat(second.url!, target.key, chat.id, events, closes);
  try {
    await untilChatEventsArrive(cluster, chat.id, events);

    const suspended = await apiKeyClient(first.url!, admin.key).graphql(`mutation ($id: ID!) { suspendUser(id: $id) { status } }`, {
      id: target.userId,
    });
    expect(suspended.body.data.suspendUser.status).toBe("suspended");
    // The next request on the other process is refused: nothing there remembered the credentials.
    expect((await onSecond.get("/accounts", bearer)).status).toBe(401);
    expect((await onSecond.get("/accounts", { "x-api-key": target.key })).status).toBe(401);
    await eventually(() => closes.includes(4401), { what: "the WebSocket on the other API process to close with 4401", timeout: 10_000 });
  } finally {
    await socket.dispose();
  }
});
