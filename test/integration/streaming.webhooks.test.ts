import { eventually } from "../helpers/eventually";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { recordAuditEvents, streamAdmin } from "../helpers/streaming";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { WebhookReceiver } from "../fakes/webhook-receiver";

/**
 * Webhooks as consumers of the committed audit stream, against a Standard Webhooks receiver that
 * verifies every message with the `standardwebhooks` package. Short retry waits keep it fast.
 */
let app: TestApp;
let admin: TestUser;
const receivers: WebhookReceiver[] = [];

let admin$: ReturnType<typeof streamAdmin>;
const gql = (query: string, variables?: Record<string, unknown>) => admin$.gql(query, variables);
const destination = (id: string) => admin$.destination(id);

async function createWebhook(url: string, eventTypes: string[] = [], name = "SIEM bridge"): Promise<{ id: string; secret: string }> {
  const created = await admin$.create({ kind: "webhook", name, url, eventTypes });
  expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  return { id: created.id, secret: created.secret! };
}

async function receiverFor(eventTypes: string[] = [], name?: string) {
  const receiver = new WebhookReceiver([]);
  receivers.push(receiver);
  await receiver.start();
  const webhook = await createWebhook(receiver.url, eventTypes, name);
  receiver.trust([webhook.secret]);
  return { receiver, ...webhook };
}

beforeAll(async () => {
  app = await startTestApp({
    roles: { workers: true },
    env: {
      OUTBOUND_ALLOWLIST: "127.0.0.1/32",
      STREAM_POLL_MS: "100",
      STREAM_LEASE_MS: "5000",
      // Short first waits, then 5 s ones: about 3 minutes in all, so a receiver down while 5,000 events are
      // recorded on a loaded machine is not given up on.
      STREAM_RETRY_SCHEDULE: `50ms,100ms,200ms,500ms,1s,2s,${Array(40).fill("5s").join(",")}`,
    },
  });
  admin = await createUser(app.runtime.services, { role: "admin" });
  admin$ = streamAdmin(app.url, admin.key);
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
  await app?.stop();
});

test("events reach a webhook in chain order, signed, with the Standard Webhooks headers and body; its filter holds", async () => {
  const auth = await receiverFor(["auth.*"]);
  const users = await receiverFor(["user.created"]);
  const ids = await recordAuditEvents(app.runtime, 30, "auth.login.failed", (i) => ({
    email: `who${i}@example.test`,
    error: i % 2 ? "bad password" : null,
  }));
  await eventually(() => auth.receiver.received.length >= 30, { what: "30 webhooks" });
  expect(auth.receiver.firstArrivals()).toEqual(ids);
  expect(auth.receiver.rejected).toEqual([]);
  const first = auth.receiver.received[0];
  expect(first.type).toBe("auth.login.failed");
  expect(first.id).toBe(ids[0]);
  expect(JSON.parse(first.raw)).toEqual({
    type: "auth.login.failed",
    timestamp: expect.any(String),
    data: expect.objectContaining({ id: ids[0] }),
  });
  expect(first.data).toMatchObject({ eventType: "auth.login.failed", severity: "warning", user: { id: null, email: "who0@example.test" } });
  expect(first.data.seq).toMatch(/^\d+$/);
  expect(Math.abs(first.timestamp - Date.now() / 1000)).toBeLessThan(60);
  // The user.created webhook saw none of them (only its own configuration events could match, and they are stream.*).
  expect(users.receiver.received).toEqual([]);
  await eventually(async () => (await destination(users.id)).health.lag === "0", {
    what: "the filtered destination to move past what it skips",
  });
  const health = (await destination(auth.id)).health;
  expect(health).toMatchObject({ lag: "0", paused: false, failing: false, failures: 0 });
  expect(health.lastSuccessAt).not.toBeNull();
  // Moving past what its filter skips is no delivery: the filtered destination has never succeeded.
  expect((await destination(users.id)).health).toMatchObject({ lag: "0", lastSuccessAt: null });
});

test("a receiver down for 5,000 events, then back: every event arrives, in order, verified; failed attempts kept webhook-id", async () => {
  const hook = await receiverFor(["auth.login.failed"]);
  const bystander = await receiverFor(["user.deleted"]);
  // First a few answers of 500: the same message is retried under the same webhook-id.
  hook.receiver.failNext({ status: 500, times: 3 });
  const [firstId] = await recordAuditEvents(app.runtime, 1, "auth.login.failed");
  await eventually(() => hook.receiver.received.length === 1, { what: "the first event after three 500s" });
  expect(hook.receiver.attempts.map((attempt) => [attempt.id, attempt.status])).toEqual([
    [firstId, 500],
    [firstId, 500],
    [firstId, 500],
    [firstId, 204],
  ]);
  await hook.receiver.stop();
  const ids = await recordAuditEvents(app.runtime, 5000, "auth.login.failed", undefined, 500);
  await eventually(async () => (await destination(hook.id)).health.failures > 0, { what: "a failed attempt while the receiver is down" });
  expect((await destination(hook.id)).health.lastError).toMatch(/ECONNREFUSED/);
  await hook.receiver.start();
  await eventually(() => hook.receiver.received.length >= 5001, {
    what: "5,000 events after the receiver came back",
    timeout: 180_000,
    interval: 100,
  });
  expect(hook.receiver.firstArrivals()).toEqual([firstId, ...ids]);
  expect(hook.receiver.rejected).toEqual([]);
  expect(bystander.receiver.received).toEqual([]);
  // The last turn's position is written just after its messages arrived.
  await eventually(async () => (await destination(hook.id)).health.lag === "0", { what: "the position to reach the head" });
}, 300_000);

test("Retry-After is honoured; 410 disables the endpoint and is audited; undelivered events stay for replay", async () => {
  const hook = await receiverFor(["auth.logout"]);
  hook.receiver.failNext({ status: 429, headers: { "retry-after": "1" }, times: 1 });
  await recordAuditEvents(app.runtime, 1, "auth.logout");
  await eventually(() => hook.receiver.received.length === 1, { what: "the event after Retry-After" });
  const [limited, delivered] = hook.receiver.attempts;
  expect(limited.status).toBe(429);
  expect(delivered.at - limited.at).toBeGreaterThanOrEqual(950);

  hook.receiver.failNext({ status: 410, times: 1 });
  const [goneId, laterId] = await recordAuditEvents(app.runtime, 2, "auth.logout");
  await eventually(async () => (await destination(hook.id)).enabled === false, { what: "the endpoint disabled by 410" });
  const disabled = await destination(hook.id);
  expect(disabled.disabledReason).toBe("the receiver answered 410 Gone");
  expect(disabled.health).toMatchObject({ paused: true, lag: expect.not.stringMatching(/^0$/) });
  const audit = await app.runtime.services.audit.list({ eventTypes: ["stream.destination.disabled"] }, {});
  expect(audit.events[0]).toMatchObject({
    resource: { type: "stream_destination", id: hook.id },
    changes: { enabled: { old: true, new: false } },
  });
  // Delivery has done all it would: the later event is linked, and the pump found nothing more to send.
  await app.runtime.workers!.drain();
  expect(hook.receiver.attempts.filter((attempt) => attempt.id === laterId)).toEqual([]);
  // Enabled again: the events that waited are delivered.
  const enabled = await gql(`mutation ($id: ID!) { updateStreamDestination(id: $id, input: { enabled: true }) { enabled } }`, {
    id: hook.id,
  });
  expect(enabled.data.updateStreamDestination.enabled).toBe(true);
  await eventually(() => hook.receiver.firstArrivals().includes(laterId), { what: "the events after re-enabling" });
  expect(hook.receiver.firstArrivals().slice(-2)).toEqual([goneId, laterId]);
});

test("secret rotation: both signatures during the overlap, only the new one after", async () => {
  const hook = await receiverFor(["auth.token.issued"]);
  const oldSecret = hook.secret;
  const rotated = await gql(
    `mutation ($id: ID!) { rotateStreamWebhookSecret(id: $id, overlapSeconds: 3600) { secret destination { rotationOverlapUntil } } }`,
    {
      id: hook.id,
    },
  );
  const newSecret = rotated.data.rotateStreamWebhookSecret.secret as string;
  expect(newSecret).not.toBe(oldSecret);
  expect(rotated.data.rotateStreamWebhookSecret.destination.rotationOverlapUntil).not.toBeNull();
  // A receiver that knows only the new secret, and one that still knows only the old: both verify.
  hook.receiver.trust([newSecret]);
  await recordAuditEvents(app.runtime, 1, "auth.token.issued");
  await eventually(() => hook.receiver.received.length === 1, { what: "a message signed by both secrets" });
  expect(hook.receiver.received[0].signatures).toHaveLength(2);
  hook.receiver.trust([oldSecret]);
  await recordAuditEvents(app.runtime, 1, "auth.token.issued");
  await eventually(() => hook.receiver.received.length === 2, { what: "the old secret still verifying during the overlap" });

  const ended = await gql(`mutation ($id: ID!) { rotateStreamWebhookSecret(id: $id, overlapSeconds: 0) { secret } }`, { id: hook.id });
  const newest = ended.data.rotateStreamWebhookSecret.secret as string;
  hook.receiver.trust([newSecret]); // the previous secret, no longer signing
  await recordAuditEvents(app.runtime, 1, "auth.token.issued");
  await eventually(() => hook.receiver.rejected.length >= 1, { what: "a message the retired secret cannot verify" });
  hook.receiver.trust([newest]);
  await eventually(() => hook.receiver.received.length === 3, { what: "the retried message under the newest secret" });
  expect(hook.receiver.received[2].signatures).toHaveLength(1);
});

test("send test event: a signed webhook.test, logged in the delivery log and audited", async () => {
  const hook = await receiverFor(["auth.session.expired"]);
  const result = await gql(`mutation ($id: ID!) { testStreamDestination(id: $id) { ok status latencyMs error } }`, { id: hook.id });
  expect(result.data.testStreamDestination).toMatchObject({ ok: true, status: 204, error: null });
  expect(hook.receiver.received).toHaveLength(1);
  expect(hook.receiver.received[0]).toMatchObject({ type: "webhook.test", id: expect.stringMatching(/^test_/) });
  const log = await gql(
    `query ($id: ID!) { streamDeliveries(destinationId: $id) { attemptedAt status latencyMs outcome error test events } }`,
    { id: hook.id },
  );
  expect(log.data.streamDeliveries[0]).toMatchObject({ status: 204, outcome: "delivered", test: true, events: 1 });
});

test("the delivery log is newest first in numeric order of its ids, across a change in their number of digits", async () => {
  const hook = await receiverFor(["auth.session.expired"]);
  // The next ids cross a power of ten (…98, 99, 100, 101 …), where text order and numeric order differ.
  const [{ last }] = (await app.runtime.sequelize.query(`SELECT last_value::text AS last FROM audit_stream_deliveries_id_seq`, {
    type: "SELECT",
  })) as Array<{ last: string }>;
  await app.runtime.sequelize.query(`SELECT setval('audit_stream_deliveries_id_seq', $1)`, {
    bind: [10 ** (last.length + 1) - 4],
  });
  for (let i = 0; i < 8; i++) await gql(`mutation ($id: ID!) { testStreamDestination(id: $id) { ok } }`, { id: hook.id });
  const page = async (before?: string) =>
    (
      await gql(
        `query ($id: ID!, $first: Int, $before: ID) { streamDeliveries(destinationId: $id, first: $first, before: $before) { id } }`,
        {
          id: hook.id,
          first: 5,
          before,
        },
      )
    ).data.streamDeliveries.map((row: { id: string }) => row.id);
  const first = await page();
  const second = await page(first[first.length - 1]);
  const ids = [...first, ...second];
  expect(ids).toHaveLength(8);
  expect(new Set(ids.map((id: string) => id.length)).size).toBe(2);
  expect(ids).toEqual([...ids].sort((a, b) => Number(BigInt(b) - BigInt(a))));
});

test("pause holds delivery (lag grows), resume catches up; replay from a sequence or a time delivers again", async () => {
  const hook = await receiverFor(["user.roles.updated"]);
  await gql(`mutation ($id: ID!) { pauseStreamDestination(id: $id) { health { paused } } }`, { id: hook.id });
  const ids = await recordAuditEvents(app.runtime, 5, "user.roles.updated");
  await app.runtime.workers!.drain();
  expect(hook.receiver.received).toEqual([]);
  expect(Number((await destination(hook.id)).health.lag)).toBeGreaterThanOrEqual(5);
  await gql(`mutation ($id: ID!) { resumeStreamDestination(id: $id) { id } }`, { id: hook.id });
  await eventually(() => hook.receiver.received.length === 5, { what: "the paused events" });

  const third = hook.receiver.received[2].data.seq as string;
  const replay = await gql(
    `mutation ($id: ID!, $seq: String) { replayStreamDestination(id: $id, fromSequence: $seq) { health { position } } }`,
    {
      id: hook.id,
      seq: third,
    },
  );
  expect(replay.data.replayStreamDestination.health.position).toBe((BigInt(third) - 1n).toString());
  await eventually(() => hook.receiver.received.length === 8, { what: "three replayed events" });
  expect(hook.receiver.received.slice(5).map((message) => message.id)).toEqual(ids.slice(2));

  const from = hook.receiver.received[0].data.timestamp as string;
  await gql(`mutation ($id: ID!, $time: String) { replayStreamDestination(id: $id, fromTime: $time) { id } }`, { id: hook.id, time: from });
  await eventually(() => hook.receiver.received.length === 13, { what: "five events replayed from a time" });
  expect(hook.receiver.received.slice(8).map((message) => message.id)).toEqual(ids);

  const bad = await gql(`mutation ($id: ID!) { replayStreamDestination(id: $id) { id } }`, { id: hook.id });
  expect(bad.errors?.[0].extensions?.code).toBe("BAD_REQUEST");
});

test("a webhook created disabled receives nothing until enabled; its secret is stored only encrypted", async () => {
  const receiver = new WebhookReceiver([]);
  receivers.push(receiver);
  await receiver.start();
  const created = await admin$.create({
    kind: "webhook",
    name: "Later",
    url: receiver.url,
    eventTypes: ["user.suspended"],
    enabled: false,
  });
  receiver.trust([created.secret!]);
  const [stored] = (await app.runtime.sequelize.query(`SELECT secrets_encrypted AS sealed FROM audit_stream_destinations WHERE id = :id`, {
    replacements: { id: created.id },
    type: "SELECT",
  })) as Array<{ sealed: string }>;
  expect(stored.sealed).not.toContain(created.secret!.slice("whsec_".length, "whsec_".length + 16));
  expect(stored.sealed).not.toContain("whsec_");
  expect((await destination(created.id)).health.paused).toBe(true);

  const ids = await recordAuditEvents(app.runtime, 3, "user.suspended");
  await app.runtime.workers!.drain();
  expect(receiver.attempts).toEqual([]);
  expect(Number((await destination(created.id)).health.lag)).toBeGreaterThanOrEqual(3);

  await gql(`mutation ($id: ID!) { updateStreamDestination(id: $id, input: { enabled: true }) { id } }`, { id: created.id });
  await eventually(() => receiver.received.length === 3, { what: "the events that waited while it was disabled" });
  expect(receiver.firstArrivals()).toEqual(ids);
});

test("a URL's credentials are sealed at rest, shown masked to administrators and auditors, kept out of audit events; old rows are sealed at boot", async () => {
  const receiver = new WebhookReceiver([]);
  receivers.push(receiver);
  await receiver.start();
  const url = new URL(receiver.url);
  url.username = "bridge";
  url.password = "hunter2-pass";
  url.search = "?token=s3cr3t-tok&region=eu";
  const created = await admin$.create({ kind: "webhook", name: "With credentials", url: url.toString(), eventTypes: ["user.suspended"] });
  receiver.trust([created.secret!]);
  const masked = `http://***:***@${url.host}/hooks?token=***&region=eu`;
  const secrets = ["hunter2-pass", "s3cr3t-tok", "bridge:"];
  const auditor = await createUser(app.runtime.services, { role: "auditor" });
  const readUrls = async () => {
    const byAuditor = (await apiKeyClient(app.url, auditor.key).graphql(`query { streamDestinations { id url } }`)).body.data;
    return [(await destination(created.id)).url, byAuditor.streamDestinations.find((row: { id: string }) => row.id === created.id).url];
  };
  expect(await readUrls()).toEqual([masked, masked]);
  const stored = async () =>
    (
      (await app.runtime.sequelize.query(`SELECT url, url_encrypted AS sealed FROM audit_stream_destinations WHERE id = :id`, {
        replacements: { id: created.id },
        type: "SELECT",
      })) as Array<{ url: string; sealed: string | null }>
    )[0];
  const row = await stored();
  expect(row.url).toBe(masked);
  for (const secret of secrets) expect(row.sealed).not.toContain(secret);

  // The sender uses the real URL: the receiver sees the token and the Basic credentials.
  const deliveredWith = async (token: string) => {
    const before = receiver.received.length;
    await recordAuditEvents(app.runtime, 1, "user.suspended");
    await eventually(() => receiver.received.length > before, { what: `a delivery with ${token}` });
    const last = receiver.requests[receiver.requests.length - 1];
    expect(last.path).toBe(`/hooks?token=${token}&region=eu`);
    expect(last.authorization).toBe(`Basic ${Buffer.from("bridge:hunter2-pass").toString("base64")}`);
  };
  await deliveredWith("s3cr3t-tok");
  // The masked URL sent back (as an edit form does) keeps the credentials; a new token is a change, redacted.
  await gql(`mutation ($id: ID!, $url: String) { updateStreamDestination(id: $id, input: { name: "Renamed", url: $url }) { id } }`, {
    id: created.id,
    url: masked,
  });
  await deliveredWith("s3cr3t-tok");
  url.search = "?token=s3cr3t-tok-2&region=eu";
  const changed = await gql(`mutation ($id: ID!, $url: String) { updateStreamDestination(id: $id, input: { url: $url }) { url } }`, {
    id: created.id,
    url: url.toString(),
  });
  expect(changed.data.updateStreamDestination.url).toBe(masked);
  await deliveredWith("s3cr3t-tok-2");

  await app.runtime.services.audit.chainCommitted();
  const { events } = await app.runtime.services.audit.list({ eventTypes: ["stream.destination.*"] }, { first: 100 });
  const mine = events.filter((event) => event.resource?.id === created.id);
  expect(mine.map((event) => event.eventType).sort()).toEqual([
    "stream.destination.created",
    "stream.destination.updated",
    "stream.destination.updated",
  ]);
  for (const event of mine) for (const secret of [...secrets, "s3cr3t-tok-2"]) expect(JSON.stringify(event)).not.toContain(secret);
  const tokenChange = mine.find((event) => event.changes?.urlCredentials);
  expect(tokenChange?.changes?.urlCredentials).toEqual({ old: "[REDACTED]", new: "[REDACTED]" });
  expect(mine.find((event) => event.eventType === "stream.destination.created")?.changes?.url).toEqual({ old: null, new: masked });

  // A row stored before URLs were sealed: sealed at boot, and delivery goes on with the real URL.
  await app.runtime.sequelize.query(`UPDATE audit_stream_destinations SET url = :url, url_encrypted = NULL WHERE id = :id`, {
    replacements: { id: created.id, url: url.toString() },
  });
  expect(await app.runtime.services.streamDestinations.sealUrlCredentials()).toBe(1);
  expect((await stored()).url).toBe(masked);
  expect(await readUrls()).toEqual([masked, masked]);
  await deliveredWith("s3cr3t-tok-2");
  expect(await app.runtime.services.streamDestinations.sealUrlCredentials()).toBe(0);
});

test("control characters in a URL, a credential or a setting are refused, the field named", async () => {
  const refused = await gql(`mutation ($input: StreamDestinationInput!) { createStreamDestination(input: $input) { secret } }`, {
    input: {
      kind: "splunk",
      name: "Split\rname",
      url: "http://127.0.0.1:8088/x\r\nX-Injected: 1",
      settings: [{ name: "index", value: "main\nX-Other: 2" }],
      credentials: [{ name: "token", value: "abc\r\nX-Forged: yes" }],
    },
  });
  expect(refused.errors?.[0].extensions?.code).toBe("VALIDATION_FAILED");
  expect(refused.errors?.[0].extensions?.errors).toEqual([
    "Name must not contain control characters (such as CR or LF)",
    "Url must not contain control characters (such as CR or LF)",
    "Setting index must not contain control characters (such as CR or LF)",
    "Credential token must not contain control characters (such as CR or LF)",
  ]);
  const hook = await receiverFor(["user.suspended"], "Clean");
  const update = await gql(`mutation ($id: ID!, $url: String) { updateStreamDestination(id: $id, input: { url: $url }) { id } }`, {
    id: hook.id,
    url: `${hook.receiver.url}\u0000\u0007`,
  });
  expect(update.errors?.[0].extensions?.errors).toEqual(["Url must not contain control characters (such as CR or LF)"]);
  expect((await destination(hook.id)).url).toBe(hook.receiver.url);
});

test("configuration changes are audit events with changes, secrets and credentials redacted", async () => {
  const hook = await receiverFor(["provider.*"], "Config audit");
  await gql(
    `mutation ($id: ID!) { updateStreamDestination(id: $id, input: { name: "Renamed", eventTypes: ["provider.*", "user.*"] }) { name } }`,
    {
      id: hook.id,
    },
  );
  await gql(`mutation ($id: ID!) { rotateStreamWebhookSecret(id: $id) { secret } }`, { id: hook.id });
  await gql(`mutation ($id: ID!) { pauseStreamDestination(id: $id) { id } }`, { id: hook.id });
  await gql(`mutation ($id: ID!) { deleteStreamDestination(id: $id) { id } }`, { id: hook.id });
  const page = await app.runtime.services.audit.list({ eventTypes: ["stream.destination.*"], search: hook.id }, { first: 20 });
  const byType = Object.fromEntries(page.events.map((event) => [event.eventType, event]));
  expect(byType["stream.destination.created"].changes).toMatchObject({
    name: { old: null, new: "Config audit" },
    secret: { old: null, new: "[REDACTED]" },
  });
  expect(byType["stream.destination.updated"].changes).toEqual({
    name: { old: "Config audit", new: "Renamed" },
    eventTypes: { old: ["provider.*"], new: ["provider.*", "user.*"] },
  });
  expect(byType["stream.destination.secret_rotated"].changes).toMatchObject({ secret: { old: "[REDACTED]", new: "[REDACTED]" } });
  expect(byType["stream.destination.paused"].changes).toEqual({ paused: { old: false, new: true } });
  expect(byType["stream.destination.deleted"]).toMatchObject({ user: { id: admin.userId }, resource: { label: "Renamed" } });
  expect(JSON.stringify(page.events)).not.toContain(hook.secret.slice(6));
  // Never returned by the API either.
  const listed = await gql(`query { streamDestinations { id credentialNames } }`);
  expect(JSON.stringify(listed)).not.toContain("whsec_");
});

test("only administrators manage destinations; bad input is a clear 4xx", async () => {
  const member = await createUser(app.runtime.services);
  const refused = await apiKeyClient(app.url, member.key).graphql(`query { streamDestinations { id } }`);
  expect(refused.body.errors[0].extensions.code).toBe("FORBIDDEN");
  const invalid = await gql(
    `mutation { createStreamDestination(input: { kind: "splunk", name: "", url: "ftp://x", eventTypes: ["nope.*"] }) { secret } }`,
  );
  expect(invalid.errors?.[0].extensions?.code).toBe("VALIDATION_FAILED");
  expect(invalid.errors?.[0].extensions?.errors).toEqual(
    expect.arrayContaining([
      "Name can't be blank",
      "Url must be an http or https URL",
      'Event type "nope.*" is not a known event type or prefix',
      "Credential token is required for splunk",
    ]),
  );
  const unknownKind = await gql(
    `mutation { createStreamDestination(input: { kind: "kafka", name: "k", url: "http://127.0.0.1:1" }) { secret } }`,
  );
  expect(unknownKind.errors?.[0].extensions?.code).toBe("BAD_REQUEST");
});
