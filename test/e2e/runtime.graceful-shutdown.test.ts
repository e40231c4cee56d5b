import type { ChildProcess } from "node:child_process";
import http from "node:http";
import { Client } from "pg";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server";
import { waitForReply } from "../helpers/chats";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

/**
 * SIGTERM to real `finance-gateway api` and `finance-gateway worker` processes while they work: the
 * API answers every request it had accepted, refuses new connections, and exits 0; the worker finishes
 * the job it was running, takes no new one, and exits 0, and the job it left is done once by the next
 * worker. Users and keys are made through an in-process runtime on the same database.
 */
jest.setTimeout(60_000);

type Service = { child: ChildProcess; url?: string; output: () => string; exited: Promise<number | null> };

async function startService(role: "api" | "worker", env: Record<string, string>): Promise<Service> {
  const settings = { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", LOG_FORMAT: "json", ...env };
  const { child, json, output } = await spawnUntilJson<{ rest?: string }>([CLI, role, "--json"], settings, "roles");
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, url: json.rest?.replace(/\/api\/v1$/, ""), output, exited };
}

type Outcome = { status: number; body: string } | { error: string };

/** One request on a connection of its own (no keep-alive), so a refusal and a cut are told apart. */
function send(url: string, key: string, body?: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = http.request(
      url,
      {
        method: payload ? "POST" : "GET",
        agent: false,
        headers: { "x-api-key": key, ...(payload ? { "content-type": "application/json" } : {}) },
      },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode!, body: text }));
        response.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    request.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(payload);
  });
}

let fake: FakeOpenAI;
let app: TestApp;
let user: TestUser;
let accountId: string;
let env: Record<string, string>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const assistant = { OPENAI_BASE_URL: fake.url, ASSISTANT_MODEL: "fake-small", ASSISTANT_STREAM: "false", JOB_LOCK_MS: "30000" };
  app = await startTestApp({ roles: { api: false, workers: false }, env: assistant });
  user = await createUser(app.runtime.services, { aiEnabled: true });
  accountId = (await createAccount(app.runtime.services, user, { name: "Checking" })).id;
  const { config } = app.runtime;
  env = { DATABASE_URL: app.database.url, REDIS_URL: config.redisUrl!, REDIS_PREFIX: config.redisPrefix, ...assistant };
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await app.stop();
  await fake.close();
});

test("SIGTERM to an API process under load: requests it accepted are answered, new connections are refused, it exits 0", async () => {
  const api = await startService("api", env);
  children.push(api.child);
  const blocker = new Client({ connectionString: app.database.url });
  await blocker.connect();
  let loading = true;
  try {
    // Requests provably in flight: the chats list waits for a lock this client holds.
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE chats IN ACCESS EXCLUSIVE MODE");
    const held = Array.from({ length: 4 }, () => send(`${api.url}/api/v1/chats`, user.key));
    // And a steady load of creates, each on a new connection, before, during and after SIGTERM.
    const creates: Array<{ name: string; outcome: Outcome }> = [];
    let sequence = 0;
    const clients = Array.from({ length: 3 }, async () => {
      while (loading) {
        const name = `Shutdown load ${(sequence += 1)}`;
        const outcome = await send(`${api.url}/api/v1/transactions`, user.key, {
          transaction: { account_id: accountId, date: "2026-01-15", amount: 1, name },
        });
        creates.push({ name, outcome });
        // Refused: the listener is closed for good, so this client's part of the load is over.
        if ("error" in outcome) return;
      }
    });
    await eventually(() => creates.length >= 10, { what: "load before SIGTERM", timeout: 15_000 });
    const waiting = "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'chats'::regclass";
    await eventually(async () => (await blocker.query(waiting)).rows[0].n >= 4, {
      what: "the chats requests to wait on the lock",
      timeout: 15_000,
    });

    api.child.kill("SIGTERM");
    // Draining: the listening socket is closed at once, while the held requests wait.
    await eventually(async () => "error" in (await send(`${api.url}/healthz`, user.key)), {
      what: "new connections to be refused",
      timeout: 5000,
    });
    expect(await send(`${api.url}/api/v1/accounts`, user.key)).toEqual({ error: "ECONNREFUSED" });
    expect(api.child.exitCode).toBeNull();
    await blocker.query("COMMIT");

    for (const answer of await Promise.all(held)) {
      expect(answer).toMatchObject({ status: 200 });
      expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ chats: expect.any(Array) });
    }
    expect(await api.exited).toBe(0);
    expect(api.output()).toContain("finance-gateway stopped (SIGTERM)");
    loading = false;
    await Promise.all(clients);

    // No create was cut: each one the service stored was answered 201, and every one not answered was
    // refused before it reached the service (ECONNREFUSED, or a reset of a connection the kernel had
    // queued as the listener closed: at most one per client, and none of them stored).
    const stored = new Set(
      (await blocker.query("SELECT name FROM transactions WHERE name LIKE 'Shutdown load %'")).rows.map((row) => row.name as string),
    );
    const answered = creates.filter(({ outcome }) => "status" in outcome && outcome.status === 201).map(({ name }) => name);
    expect(answered.length).toBeGreaterThanOrEqual(10);
    expect([...stored].sort()).toEqual([...answered].sort());
    const unanswered = creates.filter(({ outcome }) => !("status" in outcome && outcome.status === 201));
    expect(unanswered.filter(({ outcome }) => !("error" in outcome) || !["ECONNREFUSED", "ECONNRESET"].includes(outcome.error))).toEqual(
      [],
    );
    expect(unanswered.filter(({ outcome }) => "error" in outcome && outcome.error === "ECONNRESET").length).toBeLessThanOrEqual(3);
  } finally {
    loading = false;
    await blocker.end();
  }
});

test("SIGTERM to a worker with a reply in flight: the job completes, no new job is taken, the next worker does the rest once", async () => {
  const apiProcess = await startService("api", env);
  children.push(apiProcess.child);
  const api = apiKeyClient(`${apiProcess.url}/api/v1`, user.key);
  // At info level the worker says when it stops taking jobs.
  const worker = await startService("worker", { ...env, LOG_LEVEL: "info" });
  children.push(worker.child);
  const chat = (await api.post("/chats", { title: "Shutdown" })).body;
  fake.reset();
  // The model answers the first question after 2 s: long enough to stop the worker in the middle.
  fake.script({ kind: "delay", ms: 2000, then: { kind: "text", content: "First answer." } }, { kind: "text", content: "Second answer." });
  const first = (await api.post(`/chats/${chat.id}/messages`, { content: "first question" })).body;
  await eventually(() => fake.requests.length === 1, { what: "the worker to ask the model", timeout: 15_000 });

  worker.child.kill("SIGTERM");
  await eventually(() => worker.output().includes("taking no new jobs"), { what: "the worker to stop taking jobs" });
  // Posted while the worker drains: it must stay queued, not be started by a process on its way out.
  const second = (await api.post(`/chats/${chat.id}/messages`, { content: "second question" })).body;
  expect(await worker.exited).toBe(0);
  expect(fake.requests).toHaveLength(1);

  const afterFirst = await waitForReply(api, chat.id, first.id, 1000);
  expect(
    afterFirst.messages.filter((m: { role: string; content: string }) => m.role === "assistant").map((m: { content: string }) => m.content),
  ).toEqual(["First answer."]);
  const pending = (await api.get(`/chats/${chat.id}?per_page=100`)).body.messages.find((m: { id: string }) => m.id === second.id);
  expect(pending.ai_response_status).toBe("pending");

  const next = await startService("worker", env);
  children.push(next.child);
  const done = await waitForReply(api, chat.id, second.id);
  const replies = done.messages.filter((m: { role: string }) => m.role === "assistant").map((m: { content: string }) => m.content);
  expect(replies).toEqual(["First answer.", "Second answer."]);
  expect(fake.requests).toHaveLength(2);
  next.child.kill("SIGTERM");
  expect(await next.exited).toBe(0);
});
