/**
 * The live audit stream: a graphql-ws subscriber on the API sees each committed event within a second,
 * including events recorded by another process (the CLI creating an admin), and never an event whose
 * transaction rolled back. Only administrators and auditors may subscribe.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { redisUrl } from "../helpers/database-urls";
import { client as httpClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

const CLI = path.join(__dirname, "..", "..", "bin", "finance-gateway.js");
const PASSWORD = "stream password 123";

type Received = {
  id: string;
  seq: string | null;
  hash: string | null;
  eventType: string;
  timestamp: string;
  resource: { label: string | null } | null;
};

let app: TestApp;
let ws: Client;
let adminToken: string;
let memberKey: string;
beforeAll(async () => {
  app = await startTestApp();
  const { services } = app.runtime;
  const admin = await services.users.create({ email: `stream-admin-${Date.now()}@example.test`, role: "admin", password: PASSWORD });
  adminToken = (await httpClient(app.url).post("/auth/login", { email: admin.email, password: PASSWORD })).body.access_token;
  const member = await services.users.create({ email: `stream-member-${Date.now()}@example.test` });
  memberKey = (await services.apiKeys.create(member.id, { scope: "read" })).plaintext;
  ws = createClient({
    url: `${app.url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${adminToken}` },
    lazy: true,
  });
});
afterAll(async () => {
  await ws.dispose();
  await app.stop();
});

const SUBSCRIPTION = `subscription($filter: AuditEventFilter) {
  auditEventRecorded(filter: $filter) { id seq hash eventType timestamp resource { label } }
}`;

function subscribe(filter: Record<string, unknown>, on: Client = ws) {
  const received: Received[] = [];
  const errors: unknown[] = [];
  const stop = on.subscribe<{ auditEventRecorded: Received }>(
    { query: SUBSCRIPTION, variables: { filter } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) received.push(result.data.auditEventRecorded);
      },
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  return { received, errors, stop };
}

/** Records a committed probe event until the subscription shows it is live (subscribing has no acknowledgement). */
async function untilLive(stream: ReturnType<typeof subscribe>): Promise<void> {
  const { services, sequelize } = app.runtime;
  await eventually(
    async () => {
      if (stream.received.length > 0) return true;
      await sequelize.transaction((transaction) =>
        services.audit.record(transaction, { type: "user.updated", resource: { type: "user", id: "probe", label: "probe" } }),
      );
      return false;
    },
    { what: "the subscription to go live", timeout: 5000, interval: 100 },
  );
}

test("committed events from another process arrive; rolled-back ones never", async () => {
  const stream = subscribe({ eventTypes: ["user.*"] });
  const quiet = subscribe({ search: "no-event-mentions-this" });
  await untilLive(stream);

  const { services, sequelize } = app.runtime;
  await expect(
    sequelize.transaction(async (transaction) => {
      await services.audit.record(transaction, { type: "user.suspended", resource: { type: "user", id: "x", label: "rolled-back" } });
      throw new Error("change failed");
    }),
  ).rejects.toThrow("change failed");

  const email = `cli-admin-${Date.now()}@example.test`;
  const env = {
    ...process.env,
    DATABASE_URL: app.database.url,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: app.runtime.config.redisPrefix,
    LOG_LEVEL: "silent",
  };
  const cli = spawn(process.execPath, [CLI, "admin", "create", "--email", email, "--json"], { env });
  let output = "";
  cli.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => cli.on("exit", resolve));
  expect(exitCode).toBe(0);
  const printed = JSON.parse(output.trim());
  expect(printed).toMatchObject({ email, role: "admin", password: expect.any(String) });

  const created = await eventually(() => stream.received.find((event) => event.resource?.label === email) ?? false, {
    what: "the CLI's user.created event",
  });
  expect(created.eventType).toBe("user.created");
  // Published once linked into the hash chain, by the process that linked it.
  expect(created.seq).toMatch(/^\d+$/);
  expect(created.hash).toMatch(/^[0-9a-f]{64}$/);
  // Events leave in commit order on one channel: had the rolled-back one been sent, it would be here already.
  expect(stream.received.some((event) => event.resource?.label === "rolled-back")).toBe(false);
  expect(stream.received.every((event) => event.eventType.startsWith("user."))).toBe(true);
  expect(quiet.received).toEqual([]);
  expect(stream.errors).toEqual([]);

  // The generated password works for signing in.
  expect((await httpClient(app.url).post("/auth/login", { email, password: printed.password })).status).toBe(200);
  stream.stop();
  quiet.stop();
});

test("members cannot subscribe", async () => {
  const memberWs = createClient({
    url: `${app.url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { "X-Api-Key": memberKey },
  });
  try {
    const stream = subscribe({}, memberWs);
    await eventually(() => stream.errors.length > 0, { what: "the refusal" });
    expect(JSON.stringify(stream.errors)).toContain("FORBIDDEN");
  } finally {
    await memberWs.dispose();
  }
});
