/**
 * The request origin is made current once per transport entry: every audit event a request records
 * carries that request's own address, user agent, request id and session, including work done after
 * its JSON body was parsed, and concurrent requests never see each other's.
 */
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
let admin: TestUser;
beforeAll(async () => {
  app = await startTestApp({ env: { TRUST_PROXY: "loopback" } });
  admin = await createUser(app.runtime.services, { role: "admin" });
});
afterAll(() => app.stop());

const RENAME = `mutation($id: ID!, $name: String!) { updateUser(id: $id, input: { name: $name }) { id } }`;

async function eventFor(name: string) {
  const { events } = await app.runtime.services.audit.list({ eventTypes: ["user.updated"], search: name }, { first: 5 });
  expect(events).toHaveLength(1);
  return events[0];
}

test("concurrent GraphQL requests over HTTP each record their own origin, after body parsing", async () => {
  const targets = await Promise.all([1, 2, 3, 4, 5, 6].map(() => createUser(app.runtime.services)));
  const api = apiKeyClient(app.url, admin.key);
  const responses = await Promise.all(
    targets.map((target, index) =>
      api.graphql(
        RENAME,
        { id: target.userId, name: `origin-http-${index}` },
        { "x-request-id": `origin-${index}`, "user-agent": `origin-test/${index}`, "x-forwarded-for": `198.51.100.${index + 1}` },
      ),
    ),
  );
  for (const response of responses) expect(response.body.errors).toBeUndefined();
  for (const index of targets.keys()) {
    expect(await eventFor(`origin-http-${index}`)).toMatchObject({
      requestId: `origin-${index}`,
      userAgent: `origin-test/${index}`,
      ipAddress: `198.51.100.${index + 1}`,
      user: { id: admin.userId },
    });
  }
});

test("a body that arrives in many packets is parsed inside the request's origin too", async () => {
  const target = await createUser(app.runtime.services);
  const response = await apiKeyClient(app.url, admin.key).post(
    "/graphql",
    // An unused variable makes the body large enough to arrive after the request's headers, in pieces.
    { query: RENAME, variables: { id: target.userId, name: "origin-large", padding: "x".repeat(900_000) } },
    { "x-request-id": "origin-large", "user-agent": "origin-test/large" },
  );
  expect(response.body.errors).toBeUndefined();
  expect(await eventFor("origin-large")).toMatchObject({ requestId: "origin-large", userAgent: "origin-test/large" });
});

test("an operation over WebSocket records the socket's origin with a request id of its own", async () => {
  const target = await createUser(app.runtime.services);
  const ws = createClient({
    url: app.url.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { "user-agent": "origin-socket/1" } });
      }
    },
    connectionParams: { "X-Api-Key": admin.key },
    retryAttempts: 0,
  });
  try {
    const result = await new Promise<unknown>((resolve, reject) => {
      let value: unknown;
      ws.subscribe(
        { query: RENAME, variables: { id: target.userId, name: "origin-socket" } },
        { next: (data) => (value = data), error: reject, complete: () => resolve(value) },
      );
    });
    expect(result).toMatchObject({ data: { updateUser: { id: target.userId } } });
  } finally {
    await ws.dispose();
  }
  const event = await eventFor("origin-socket");
  expect(event).toMatchObject({ userAgent: "origin-socket/1", ipAddress: "127.0.0.1", user: { id: admin.userId } });
  expect(event.requestId).toMatch(/^[0-9a-f-]{36}$/);
});
