import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createClient, type Client } from "graphql-ws";
import { QueryTypes } from "sequelize";
import WebSocket from "ws";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server";
import { waitForReply } from "../helpers/chats";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

/**
 * The API runs here; replies are written by `finance-gateway worker` processes spawned from the built
 * CLI. A GraphQL subscriber on this API sees what the other process does, and a worker killed in the
 * middle of a reply leaves the job to another worker, which writes the one and only reply.
 */
const CLI = path.join(__dirname, "..", "..", "bin", "finance-gateway.js");
jest.setTimeout(60_000);

const ASSISTANT_ENV = {
  ASSISTANT_MODEL: "fake-small",
  ASSISTANT_TIMEOUT_MS: "10000",
  ASSISTANT_RETRY_DELAY_MS: "50",
  JOB_LOCK_MS: "1500",
};

let fake: FakeOpenAI;
let app: TestApp;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;
const workers: ChildProcess[] = [];

function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, "worker", "--json"], {
    env: {
      ...process.env,
      DATABASE_URL: app.database.url,
      REDIS_URL: app.runtime.config.redisUrl,
      REDIS_PREFIX: app.runtime.config.redisPrefix,
      OPENAI_BASE_URL: fake.url,
      LOG_LEVEL: "warn",
      ...ASSISTANT_ENV,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  workers.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"roles"')) resolve(child);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}:\n${output}`)));
  });
}

function stopWorker(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  app = await startTestApp({ roles: { api: true, workers: false }, env: { OPENAI_BASE_URL: fake.url, ...ASSISTANT_ENV } });
  user = await createUser(app.runtime.services, { aiEnabled: true });
  api = apiKeyClient(`${app.url}/api/v1`, user.key);
});
afterAll(async () => {
  for (const child of workers) await stopWorker(child, "SIGKILL");
  await app.stop();
  await fake.close();
});

type Event = { kind: string; messageId: string; aiResponseStatus?: string; delta?: string; message?: { role: string; content: string } };

function subscribe(client: Client, chatId: string, onEvent: (event: Event) => void): () => void {
  return client.subscribe<{ chatEvents: Event }>(
    {
      query: `subscription ($chatId: ID!) { chatEvents(chatId: $chatId) { kind messageId aiResponseStatus delta message { role content } } }`,
      variables: { chatId },
    },
    {
      next: ({ data, errors }) => (data ? onEvent(data.chatEvents) : onEvent({ kind: "error", messageId: JSON.stringify(errors) })),
      error: (error) => onEvent({ kind: "error", messageId: JSON.stringify(error) }),
      complete: () => {},
    },
  );
}

test("a subscriber on the API sees pending, the streamed text and complete from a worker in another process", async () => {
  const worker = await startWorker();
  const chat = (await api.post("/chats", { title: "Live" })).body;
  const client = createClient({
    url: `${app.url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { "X-Api-Key": user.key },
  });
  const events: Event[] = [];
  const unsubscribe = subscribe(client, chat.id, (event) => events.push(event));
  try {
    // A first exchange proves the subscription is live before the message under test is sent.
    fake.script({ kind: "text", content: "Warming up." });
    const probe = await api.post(`/chats/${chat.id}/messages`, { content: "ping" });
    await eventually(() => events.some((e) => e.messageId === probe.body.id && e.aiResponseStatus === "complete"), {
      what: "the probe's reply",
      timeout: 20_000,
    });
    events.length = 0;

    fake.script({ kind: "text", content: "Your savings are growing nicely this month." });
    const posted = await api.post(`/chats/${chat.id}/messages`, { content: "How are my savings?" });
    await eventually(() => events.some((e) => e.aiResponseStatus === "complete"), { what: "complete", timeout: 20_000 });

    expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(["MESSAGE", "STATUS", "PARTIAL"]));
    const statuses = events.filter((e) => e.kind === "STATUS").map((e) => [e.messageId, e.aiResponseStatus]);
    expect(statuses).toEqual([
      [posted.body.id, "pending"],
      [posted.body.id, "complete"],
    ]);
    const messages = events.filter((e) => e.kind === "MESSAGE").map((e) => e.message);
    expect(messages).toEqual([
      { role: "user", content: "How are my savings?" },
      { role: "assistant", content: "Your savings are growing nicely this month." },
    ]);
    const streamed = events.filter((e) => e.kind === "PARTIAL").map((e) => e.delta);
    expect(streamed.join("")).toBe("Your savings are growing nicely this month.");
    // Order as a client sees it: the user message and pending first, the stored reply before complete.
    expect(events[0].kind).toBe("MESSAGE");
    expect(events.at(-1)).toMatchObject({ kind: "STATUS", aiResponseStatus: "complete" });
  } finally {
    unsubscribe();
    await client.dispose();
    await stopWorker(worker, "SIGTERM");
  }
});

test("a subscriber cannot listen to another user's chat", async () => {
  const chat = (await api.post("/chats", { title: "Private" })).body;
  const stranger = await createUser(app.runtime.services, { aiEnabled: true });
  const client = createClient({
    url: `${app.url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { "X-Api-Key": stranger.key },
  });
  const events: Event[] = [];
  subscribe(client, chat.id, (event) => events.push(event));
  await eventually(() => events.length > 0, { what: "an answer", timeout: 20_000 });
  expect(events[0].kind).toBe("error");
  expect(events[0].messageId).toContain("Chat not found");
  await client.dispose();
});

test("a worker killed in the middle of a reply: another worker takes the job over, and there is one reply", async () => {
  const first = await startWorker();
  fake.reset();
  fake.script(
    { kind: "delay", ms: 30_000, then: { kind: "text", content: "Too slow." } },
    { kind: "text", content: "Finished by the second worker." },
  );
  const chat = (await api.post("/chats", { title: "Crash" })).body;
  const posted = await api.post(`/chats/${chat.id}/messages`, { content: "Hello?" });
  await eventually(() => fake.requests.length === 1, { what: "the first worker to call the model", timeout: 20_000 });
  await stopWorker(first, "SIGKILL");

  const second = await startWorker();
  try {
    const detail = await waitForReply(api, chat.id, posted.body.id, 30_000);
    expect(detail.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "Hello?"],
      ["assistant", "Finished by the second worker."],
    ]);
    const replies = await app.runtime.sequelize.query("SELECT id FROM chat_messages WHERE reply_to_message_id = $1", {
      bind: [posted.body.id],
      type: QueryTypes.SELECT,
    });
    expect(replies).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  } finally {
    await stopWorker(second, "SIGTERM");
  }
});
