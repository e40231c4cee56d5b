/**
 * graphql-ws on /graphql against hostile clients: messages as large as an HTTP body at most, a prompt
 * handshake, bounded operations per connection and connections per credential, the HTTP cost rules,
 * client errors for client mistakes, and a socket that closes (4401) the moment its credential expires.
 */
import WebSocket from "ws";
import { SOCKET_LIMITS } from "../../src/transports/http/graphql-socket";
import { createUser, type TestUser } from "../helpers/fixtures";
import { client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services);
});
afterAll(() => app.stop());

/** A raw graphql-transport-ws socket: every message it receives, and how it closed. */
class RawSocket {
  readonly messages: any[] = [];
  closed: { code: number; reason: string } | null = null;
  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => this.messages.push(JSON.parse(String(data))));
    ws.on("close", (code, reason) => (this.closed = { code, reason: String(reason) }));
    ws.on("error", () => undefined);
  }

  static async open(): Promise<RawSocket> {
    const ws = new WebSocket(`${app.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    const socket = new RawSocket(ws);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    return socket;
  }

  /** Opens and sends connection_init; resolves once acknowledged or closed. */
  static async connect(payload?: Record<string, unknown>): Promise<RawSocket> {
    const socket = await RawSocket.open();
    socket.send({ type: "connection_init", payload });
    await socket.until(() => socket.messages.some((m) => m.type === "connection_ack"));
    return socket;
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  /** Until `done` or the socket closed. */
  async until(done: () => boolean, timeoutMs = 8000): Promise<void> {
    await eventually(() => done() || this.closed !== null, { what: "an answer on the socket", timeout: timeoutMs, interval: 10 });
  }

  /** Until the server closes the socket; then `closed` says how. */
  async untilClosed(timeoutMs = 8000): Promise<void> {
    await eventually(() => this.closed !== null, { what: "the socket to close", timeout: timeoutMs, interval: 10 });
  }

  /** Runs one operation and resolves with its first `next` payload or its `error` payload. */
  async run(id: string, query: string, variables?: Record<string, unknown>): Promise<{ type: string; payload: any }> {
    this.send({ id, type: "subscribe", payload: { query, variables } });
    const answer = () => this.messages.find((m) => m.id === id && (m.type === "next" || m.type === "error"));
    await this.until(() => answer() !== undefined);
    return answer() ?? { type: "closed", payload: this.closed };
  }

  close(): void {
    this.ws.close();
  }
}

test("a message larger than an HTTP body (1 MB) closes the socket with 1009 before it is read", async () => {
  const socket = await RawSocket.open();
  socket.send({ type: "connection_init", payload: { padding: "x".repeat(1024 * 1024 + 1) } });
  await socket.untilClosed(5000);
  expect(socket.closed?.code).toBe(1009);
});

test("a socket that never sends connection_init is closed with 4408 after 5 seconds", async () => {
  expect(SOCKET_LIMITS.connectionInitTimeoutMs).toBe(5000);
  const socket = await RawSocket.open();
  // Not at once: a whole handshake and query on another socket, opened after it, finish while it waits.
  const later = await RawSocket.connect({ "X-Api-Key": user.key });
  expect((await later.run("1", "{ me { id } }")).payload.data.me.id).toBe(user.userId);
  later.close();
  expect(socket.closed).toBeNull();
  await socket.untilClosed(8000);
  expect(socket.closed?.code).toBe(4408);
}, 15_000);

test("a GraphQL syntax error is an error message with a client code; the socket stays open", async () => {
  const socket = await RawSocket.connect({ "X-Api-Key": user.key });
  const answer = await socket.run("1", "{ me { id ");
  expect(answer.type).toBe("error");
  expect(answer.payload[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
  const invalid = await socket.run("2", "{ nothingHere }");
  expect(invalid.payload[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
  expect((await socket.run("3", "{ me { id } }")).payload.data.me.id).toBe(user.userId);
  expect(socket.closed).toBeNull();
  socket.close();
});

test("a message that is not JSON closes with 4400 Bad Request, not an internal error", async () => {
  const socket = await RawSocket.connect({ "X-Api-Key": user.key });
  socket.ws.send("{not json");
  await socket.untilClosed(3000);
  expect(socket.closed?.code).toBe(4400);
});

test("the HTTP cost rules apply on the socket, for anonymous and authenticated clients alike", async () => {
  const anonymous = await RawSocket.connect();
  const walks = Array.from({ length: 6 }, (_, i) => `w${i}: __schema { types { name } }`).join(" ");
  const refused = await anonymous.run("1", `{ ${walks} }`);
  expect(refused).toEqual({
    id: "1",
    type: "error",
    payload: [{ message: "Query uses 6 aliases; at most 5 are allowed", extensions: { code: "TOO_MANY_ALIASES" } }],
  });
  expect((await anonymous.run("2", "{ __schema { queryType { name } } }")).payload.data.__schema.queryType.name).toBe("Query");
  anonymous.close();

  const keyed = await RawSocket.connect({ "X-Api-Key": user.readKey });
  const pages = Array.from(
    { length: 30 },
    (_, i) => `p${i}: transactions(perPage: 100) { items { id name amount date notes category { name } tags { name } } }`,
  ).join(" ");
  expect((await keyed.run("1", `{ ${pages} }`)).payload[0].extensions.code).toBe("QUERY_TOO_COSTLY");
  keyed.close();
});

test("at most 25 operations run at once on one connection", async () => {
  const chatter = await createUser(app.runtime.services, { aiEnabled: true });
  const { id: chatId } = await app.runtime.services.chats.create(chatter.actor, { title: "Sockets" });
  const socket = await RawSocket.connect({ "X-Api-Key": chatter.key });
  for (let i = 0; i < 25; i++)
    socket.send({
      id: `s${i}`,
      type: "subscribe",
      payload: { query: `subscription ($c: ID!) { chatEvents(chatId: $c) { kind } }`, variables: { c: chatId } },
    });
  const refused = await socket.run("one-too-many", `subscription ($c: ID!) { chatEvents(chatId: $c) { kind } }`, { c: chatId });
  expect(refused.type).toBe("error");
  expect(refused.payload[0].extensions.code).toBe("TOO_MANY_SUBSCRIPTIONS");
  socket.send({ id: "s0", type: "complete" });
  // The completed subscription's slot is freed as the server handles the message: then another fits.
  let attempt = 0;
  await eventually(async () => expect((await socket.run(`after-one-ended-${++attempt}`, "{ me { id } }")).type).toBe("next"));
  socket.close();
});

test("a credential holds at most 20 connections at once; the 21st closes with 4429", async () => {
  const other = await createUser(app.runtime.services);
  const sockets = [];
  for (let i = 0; i < 20; i++) sockets.push(await RawSocket.connect({ "X-Api-Key": other.key }));
  const extra = await RawSocket.open();
  extra.send({ type: "connection_init", payload: { "X-Api-Key": other.key } });
  await extra.untilClosed(3000);
  expect(extra.closed?.code).toBe(4429);
  sockets.pop()!.close();
  // Once the server has seen that close, a replacement is accepted.
  const replacement = await eventually(async () => {
    const socket = await RawSocket.connect({ "X-Api-Key": other.key });
    expect(socket.messages.some((m) => m.type === "connection_ack")).toBe(true);
    return socket;
  });
  for (const socket of [...sockets, replacement]) socket.close();
});

test("the probe's case: a key past its expiresAt stops working on a socket opened before, at that moment (4401)", async () => {
  const { plaintext } = await app.runtime.services.apiKeys.create(user.userId, {
    scope: "read_write",
    expiresAt: new Date(Date.now() + 1500),
  });
  const socket = await RawSocket.connect({ "X-Api-Key": plaintext });
  expect((await socket.run("1", "{ me { id } }")).payload.data.me.id).toBe(user.userId);
  await socket.untilClosed(4000);
  expect(socket.closed).toEqual({ code: 4401, reason: "Credentials expired" });
});

test("the probe's case: an access token past its lifetime stops working on its socket at that moment (4401)", async () => {
  const password = "a long enough password 1";
  const person = await app.runtime.services.users.create({ email: `ws-expiry-${Date.now()}@example.test`, password });
  const login = await client(app.url).post("/auth/login", { email: person.email, password });
  expect(login.status).toBe(200);
  // The token's lifetime is at least 30 s by configuration; shorten this one's where it is stored.
  await app.runtime.sequelize.query(
    `UPDATE auth_tokens SET expires_at = now() + interval '1500 milliseconds'
      WHERE kind = 'access' AND session_id IN (SELECT id FROM auth_sessions WHERE user_id = $1)`,
    { bind: [person.id] },
  );
  const socket = await RawSocket.connect({ Authorization: `Bearer ${login.body.access_token}` });
  expect((await socket.run("1", "{ me { id } }")).payload.data.me.id).toBe(person.id);
  await socket.untilClosed(4000);
  expect(socket.closed?.code).toBe(4401);
});
