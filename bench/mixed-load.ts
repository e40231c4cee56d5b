/**
 * The load generator of bench/load.bench.ts, forked as its own process so it never shares an event
 * loop with the services under test (it still shares the machine's cores: the bench reports its CPU).
 *
 * It plays `concurrency` closed-loop clients, each sending one request, waiting for the answer, then
 * sending the next, spread round-robin over the API processes it is given. Each request is one of a
 * fixed mix of operations (REST lists and creates, GraphQL queries, chat messages, audit searches),
 * and every answer is checked (status, and no GraphQL `errors`). One live subscriber over graphql-ws
 * watches one chat: it reports how many of the messages posted there it saw stored, and when each
 * reply (written by the worker) completed.
 */
import http from "node:http";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";

export type Operation = "rest_list" | "rest_create" | "graphql_query" | "chat_message" | "audit_search";

/** Weights per 100 requests: reads dominate, as in a household's or a small team's day. */
export const MIX: Record<Operation, number> = {
  rest_list: 30,
  graphql_query: 25,
  audit_search: 15,
  rest_create: 20,
  chat_message: 10,
};

export type Fixture = {
  /** API processes, http://127.0.0.1:port, used round-robin. */
  targets: string[];
  apiKey: string;
  accountId: string;
  /** Chats the chat operation posts to; the first is the watched one. */
  chatIds: string[];
};

export type StepJob = { id: number; kind: "step"; fixture: Fixture; concurrency: number; seconds: number; warmupSeconds: number };
export type SubscribeJob = { id: number; kind: "subscribe"; target: string; apiKey: string; chatId: string };
export type LoadJob = StepJob | SubscribeJob;

export type OperationFigures = { count: number; failed: number; p50: number; p99: number; max: number };
export type WatchFigures = { posted: number; seen: number; repliesCompleted: number; replyP50: number; replyP99: number };
export type StepResult = {
  seconds: number;
  requests: number;
  failed: number;
  /** Unexpected answers by operation and status ("error" for a transport failure), a few examples. */
  failures: Record<string, number>;
  operations: Record<Operation, OperationFigures>;
  watch: WatchFigures;
  /** CPU seconds this process used during the step. */
  cpuSeconds: number;
  /** Requests sent again after the server closed their idle keep-alive connection (see send). */
  keepAliveRetries: number;
};
export type LoadReply = { id: number; ok: true; result: StepResult | null } | { id: number; ok: false; error: string };

const WHEEL: Operation[] = Object.entries(MIX).flatMap(([operation, weight]) => Array<Operation>(weight).fill(operation as Operation));
const SEARCH_WORDS = ["okta", "firefox", "failed", "google", "logout", "keycloak", "curl", "iphone"];
const TRANSACTIONS_QUERY = `query Load($page: Int) { transactions(page: $page, perPage: 20) {
  items { id name date amount formattedAmount account { id name } category { id name } merchant { id name } }
  pagination { totalCount totalPages } } }`;
const AUDIT_QUERY = `query Audit($search: String) { auditEvents(first: 20, filter: { search: $search }) {
  nodes { id eventType severity timestamp user { email } } } }`;

type Answer = { status: number; body: string };

const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

/** Requests sent again because the server had closed the idle keep-alive connection they went out on. */
let keepAliveRetries = 0;

/**
 * One request. A reset of a reused keep-alive connection before any answer is the server closing it as
 * idle at the moment the request left (it never read the request): that one is sent again on a new
 * connection, as HTTP clients do, and counted apart.
 */
function send(url: string, method: "GET" | "POST", apiKey: string, body?: unknown, retried = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let answered = false;
    const request = http.request(
      url,
      {
        method,
        agent,
        timeout: 30_000,
        headers: {
          "x-api-key": apiKey,
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
        },
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", (error: NodeJS.ErrnoException) => {
      const idleClose =
        request.reusedSocket && !answered && !retried && (error.code === "ECONNRESET" || error.message === "socket hang up");
      if (!idleClose) return reject(error);
      keepAliveRetries += 1;
      send(url, method, apiKey, body, true).then(resolve, reject);
    });
    request.end(payload);
  });
}

/** What the watched chat's subscriber saw, keyed by message id. */
class Watch {
  posted = new Map<string, number>();
  seen = new Set<string>();
  replyMs = new Map<string, number>();
  postedCount = 0;
  seenCount = 0;
  private client: Client | null = null;

  recordPost(id: string, at: number): void {
    this.posted.set(id, at);
    this.postedCount += 1;
  }

  start(job: SubscribeJob): Promise<void> {
    this.client = createClient({
      url: `${job.target.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { "X-Api-Key": job.apiKey },
      retryAttempts: 5,
    });
    return new Promise((resolve, reject) => {
      let started = false;
      this.client!.on("connected", () => {
        // The subscription is acknowledged with the connection; a short pause lets the server register it.
        setTimeout(() => {
          started = true;
          resolve();
        }, 300);
      });
      this.client!.subscribe<{
        chatEvents: { kind: string; messageId: string; aiResponseStatus: string | null; message: { role: string } | null };
      }>(
        {
          query: `subscription W($chatId: ID!) { chatEvents(chatId: $chatId) { kind messageId aiResponseStatus message { role } } }`,
          variables: { chatId: job.chatId },
        },
        {
          next: ({ data }) => {
            const event = data?.chatEvents;
            if (!event) return;
            // The users' messages, as stored (the assistant's replies are MESSAGE events too).
            if (event.kind === "MESSAGE" && event.message?.role === "user" && !this.seen.has(event.messageId)) {
              this.seen.add(event.messageId);
              this.seenCount += 1;
            }
            if (event.kind === "STATUS" && event.aiResponseStatus === "complete") {
              const postedAt = this.posted.get(event.messageId);
              if (postedAt !== undefined && !this.replyMs.has(event.messageId)) this.replyMs.set(event.messageId, Date.now() - postedAt);
            }
          },
          error: (error) =>
            started ? console.error("subscriber error:", error) : reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => undefined,
        },
      );
    });
  }

  /** Figures since the last call: posts to the watched chat, their MESSAGE events seen, replies completed. */
  figures(): WatchFigures {
    const replies = [...this.replyMs.values()];
    const figures = {
      posted: this.postedCount,
      seen: this.seenCount,
      repliesCompleted: replies.length,
      replyP50: percentile(replies, 0.5),
      replyP99: percentile(replies, 0.99),
    };
    this.postedCount = 0;
    this.seenCount = 0;
    // Messages whose reply came are forgotten; those still waiting are carried over, so memory stays flat.
    for (const id of this.replyMs.keys()) {
      this.posted.delete(id);
      this.seen.delete(id);
    }
    this.replyMs.clear();
    return figures;
  }
}

function percentile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

const watch = new Watch();

async function runStep(job: StepJob): Promise<StepResult> {
  const { fixture } = job;
  for (const target of fixture.targets) {
    if (new URL(target).hostname !== "127.0.0.1") throw new Error(`refusing to load ${target}: the bench only targets 127.0.0.1`);
  }
  const latencies = Object.fromEntries(Object.keys(MIX).map((name) => [name, [] as number[]])) as Record<Operation, number[]>;
  const failed = Object.fromEntries(Object.keys(MIX).map((name) => [name, 0])) as Record<Operation, number>;
  const failures: Record<string, number> = {};
  let counter = 0;
  let measuring = job.warmupSeconds === 0;
  const started = Date.now();
  const measureFrom = started + job.warmupSeconds * 1000;
  const endAt = measureFrom + job.seconds * 1000;
  let cpuAtStart = process.cpuUsage();
  keepAliveRetries = 0;

  async function one(client: number, sequence: number): Promise<void> {
    const operation = WHEEL[(sequence * 37 + client * 11) % WHEEL.length];
    const target = fixture.targets[sequence % fixture.targets.length];
    const api = `${target}/api/v1`;
    const sentAt = Date.now();
    let ok = false;
    let outcome: string;
    let postedId: string | null = null;
    try {
      let answer: Answer;
      switch (operation) {
        case "rest_list":
          answer = await send(`${api}/transactions?per_page=25&page=${1 + (sequence % 4)}`, "GET", fixture.apiKey);
          ok = answer.status === 200;
          break;
        case "rest_create":
          answer = await send(`${api}/transactions`, "POST", fixture.apiKey, {
            transaction: { account_id: fixture.accountId, date: "2026-01-15", amount: (sequence % 500) + 0.25, name: `Load ${sequence}` },
          });
          ok = answer.status === 201;
          break;
        case "graphql_query":
          answer = await send(`${target}/graphql`, "POST", fixture.apiKey, {
            query: TRANSACTIONS_QUERY,
            variables: { page: 1 + (sequence % 3) },
          });
          ok = answer.status === 200 && !answer.body.includes('"errors"');
          break;
        case "audit_search":
          answer = await send(`${target}/graphql`, "POST", fixture.apiKey, {
            query: AUDIT_QUERY,
            variables: { search: SEARCH_WORDS[sequence % SEARCH_WORDS.length] },
          });
          ok = answer.status === 200 && !answer.body.includes('"errors"');
          break;
        case "chat_message": {
          const chatId = fixture.chatIds[sequence % fixture.chatIds.length];
          answer = await send(`${api}/chats/${chatId}/messages`, "POST", fixture.apiKey, {
            content: "What did I spend on groceries last month?",
          });
          ok = answer.status === 201;
          if (ok && chatId === fixture.chatIds[0]) postedId = (JSON.parse(answer.body) as { id: string }).id;
          break;
        }
      }
      outcome = String(answer.status);
    } catch (error) {
      outcome = `error:${error instanceof Error ? error.message : String(error)}`.slice(0, 60);
    }
    const doneAt = Date.now();
    if (postedId) watch.recordPost(postedId, sentAt);
    if (!measuring && doneAt >= measureFrom) {
      measuring = true;
      cpuAtStart = process.cpuUsage();
    }
    if (!measuring || sentAt < measureFrom) return;
    latencies[operation].push(doneAt - sentAt);
    if (!ok) {
      failed[operation] += 1;
      const key = `${operation} ${outcome}`;
      failures[key] = (failures[key] ?? 0) + 1;
    }
  }

  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, client) => {
      while (Date.now() < endAt) await one(client, counter++);
    }),
  );
  const cpu = process.cpuUsage(cpuAtStart);
  // Give the last events and replies of the step a moment to arrive before counting them.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const operations = Object.fromEntries(
    (Object.keys(MIX) as Operation[]).map((name) => {
      const values = latencies[name];
      return [
        name,
        {
          count: values.length,
          failed: failed[name],
          p50: percentile(values, 0.5),
          p99: percentile(values, 0.99),
          max: percentile(values, 1),
        },
      ];
    }),
  ) as Record<Operation, OperationFigures>;
  const requests = Object.values(operations).reduce((sum, op) => sum + op.count, 0);
  return {
    seconds: job.seconds,
    requests,
    failed: Object.values(failed).reduce((sum, n) => sum + n, 0),
    failures,
    operations,
    watch: watch.figures(),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    keepAliveRetries,
  };
}

if (require.main === module) {
  if (!process.send) {
    console.error("mixed-load.js is forked by load.bench.js; it does not run alone");
    process.exit(2);
  }
  process.on("message", (job: LoadJob) => {
    const work = job.kind === "subscribe" ? watch.start(job).then(() => null) : runStep(job);
    work.then(
      (result) => process.send!({ id: job.id, ok: true, result } satisfies LoadReply),
      (error: unknown) =>
        process.send!({ id: job.id, ok: false, error: error instanceof Error ? error.message : String(error) } satisfies LoadReply),
    );
  });
  process.on("disconnect", () => process.exit(0));
}
