import { eventually } from "./eventually";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { Client } from "pg";
import { loadConfig } from "../../src/platform/config/config";
import { Topic } from "../../src/platform/events/catalogue";
import { startRuntime, type Runtime } from "../../src/app/runtime";
import { CLI, spawnUntilJson } from "./cli";
import { startOwnPostgres, startOwnRedis, type OwnPostgres, type OwnRedis } from "./own-servers";

/**
 * The deployed topology in a test: `finance-gateway api` and `finance-gateway worker` processes (the
 * built CLI) on one PostgreSQL and one Redis of the test's own, the API processes behind a round-robin
 * TCP proxy, as behind a load balancer. The test process holds a runtime of neither role on the same
 * database and Redis, for fixtures and for looking at what the processes wrote.
 */

export type ServiceProcess = {
  role: "api" | "worker";
  child: ChildProcess;
  /** http://127.0.0.1:port of an API process. */
  url?: string;
  port?: number;
  /** Everything it printed so far. */
  output(): string;
  /** Ends it with a signal and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
};

/**
 * A round-robin TCP proxy: each new connection goes to the next backend, bytes are passed through as
 * they come, so HTTP keep-alive, WebSocket upgrades and streamed responses work as they would behind
 * a load balancer. A backend that refuses the connection (a killed process) is skipped for the next.
 */
export class RoundRobinProxy {
  private readonly server = net.createServer((client) => this.forward(client));
  private readonly sockets = new Set<net.Socket>();
  private next = 0;
  /** The backend port each connection went to, in order of arrival. */
  readonly routed: number[] = [];
  url = "";

  constructor(public backends: number[]) {}

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  private forward(client: net.Socket, tried = 0): void {
    this.sockets.add(client);
    client.once("close", () => this.sockets.delete(client));
    if (tried >= this.backends.length) return void client.destroy();
    const port = this.backends[this.next++ % this.backends.length];
    const upstream = net.connect(port, "127.0.0.1");
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      this.routed.push(port);
      this.sockets.add(upstream);
      upstream.once("close", () => this.sockets.delete(upstream));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on("error", () => {
      if (!connected) return void this.forward(client, tried + 1);
      client.destroy();
    });
    client.on("error", () => upstream.destroy());
    upstream.once("close", () => connected && client.destroy());
    client.once("close", () => upstream.destroy());
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export type Cluster = {
  postgres: OwnPostgres;
  redis: OwnRedis;
  databaseUrl: string;
  redisPrefix: string;
  /** Settings every process of the cluster gets (as environment strings). */
  env: Record<string, string>;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  proxy: RoundRobinProxy;
  /** A runtime of neither role in the test process, on the same database and Redis. */
  control: Runtime;
  startApi(env?: Record<string, string>): Promise<ServiceProcess>;
  startWorker(env?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
};

/**
 * Starts PostgreSQL and Redis of the test's own, migrates, then the API and worker processes, the
 * proxy in front of the APIs. `env` is given to every process (and to the control runtime).
 */
export async function startCluster(
  options: { apis?: number; workers?: number; env?: Record<string, string>; persistentRedis?: boolean } = {},
): Promise<Cluster> {
  const [postgres, redis] = await Promise.all([startOwnPostgres(), startOwnRedis({ persistent: options.persistentRedis })]);
  const admin = new Client({ connectionString: postgres.adminUrl });
  await admin.connect();
  await admin.query("CREATE DATABASE finance");
  await admin.end();
  const databaseUrl = postgres.urlOf("finance");
  const redisPrefix = `fgcluster_${randomBytes(4).toString("hex")}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redisPrefix,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "warn",
    LOG_FORMAT: "json",
    DATABASE_POOL_MAX: "4",
    ...options.env,
  };
  // Migrates the database once, before any process starts (each would otherwise race to).
  const control = await startRuntime(loadConfig({ ...env, LOG_LEVEL: "silent" }), { api: false, workers: false });
  const proxy = new RoundRobinProxy([]);
  await proxy.start();
  const processes: ServiceProcess[] = [];
  const start = async (role: "api" | "worker", extra: Record<string, string> = {}) => {
    const started = await startProcess(role, { ...env, ...extra });
    processes.push(started);
    return started;
  };
  const cluster: Cluster = {
    postgres,
    redis,
    databaseUrl,
    redisPrefix,
    env,
    apis: [],
    workers: [],
    proxy,
    control,
    async startApi(extra) {
      const api = await start("api", extra);
      cluster.apis.push(api);
      proxy.backends.push(api.port!);
      return api;
    },
    async startWorker(extra) {
      const worker = await start("worker", extra);
      cluster.workers.push(worker);
      return worker;
    },
    async stop() {
      await Promise.all(processes.map((process) => process.kill("SIGKILL")));
      await proxy.stop();
      await control.stop().catch(() => undefined);
      await redis.remove();
      await postgres.remove();
    },
  };
  try {
    await Promise.all([
      ...Array.from({ length: options.apis ?? 2 }, () => cluster.startApi()),
      ...Array.from({ length: options.workers ?? 2 }, () => cluster.startWorker()),
    ]);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** `finance-gateway <role> --json`, resolved once its start banner is printed. */
export async function startProcess(role: "api" | "worker", env: Record<string, string>): Promise<ServiceProcess> {
  const { child, json, output } = await spawnUntilJson<{ rest?: string }>(
    [CLI, role, "--json"],
    { ...process.env, ...env },
    "roles",
    60_000,
  );
  // Past the banner, an exit is the test's business (a kill), not a failure to start.
  child.removeAllListeners("exit");
  const url = json.rest ? new URL(json.rest).origin : undefined;
  return {
    role,
    child,
    url,
    port: url ? Number(new URL(url).port) : undefined,
    output,
    async kill(signal = "SIGKILL") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await exited;
    },
  };
}

/** The message id of probe events: no message has it. */
export const PROBE_MESSAGE_ID = "00000000-0000-4000-8000-00000000beef";

/**
 * Resolves once a chatEvents subscription receives events again (it has no "subscribed" signal): the
 * control runtime, a process of its own on the same Redis, publishes probe status events on the chat
 * until one shows up in `events`, which is then emptied.
 */
export async function untilChatEventsArrive(
  cluster: Cluster,
  chatId: string,
  events: Array<{ messageId: string }>,
  timeoutMs = 20_000,
): Promise<void> {
  await eventually(
    () => {
      if (events.some((event) => event.messageId === PROBE_MESSAGE_ID)) return true;
      cluster.control.services.events.publish(Topic.ChatEvent, chatId, {
        kind: "status",
        chatId,
        messageId: PROBE_MESSAGE_ID,
        status: "pending",
        statusMessage: null,
        chatError: null,
      });
      return false;
    },
    { what: "chat events to arrive on the subscription", timeout: timeoutMs, interval: 200 },
  );
  events.length = 0;
}
