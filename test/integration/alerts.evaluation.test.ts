import { QueryTypes } from "sequelize";
import { eventually } from "../helpers/eventually";
import { createUser, type TestUser } from "../helpers/fixtures";
import { alertAdmin, evaluatorCaughtUp, failedLogin, login } from "../helpers/alerts";
import { recordAuditEvents } from "../helpers/streaming";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { chatWebhook, smsGateway, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN } from "../fakes/alert-receivers";
import type { FakeHttpServer } from "../fakes/fake-http";
import { SmtpSink } from "../fakes/smtp-sink";
import { WebhookReceiver } from "../fakes/webhook-receiver";

/**
 * Alert rules evaluated on the committed audit stream by a worker, sent through real receivers on
 * loopback: an SMTP server (smtp-server, mail parsed by mailparser), a Slack-compatible webhook, a
 * Standard Webhooks receiver (verified by `standardwebhooks`) and a Twilio-shaped SMS gateway.
 * Addresses are ones the bundled country database knows: 81.2.69.142 GB, 193.0.6.139 NL, 8.8.8.8 US.
 */
jest.setTimeout(60_000);

let app: TestApp;
let admin: TestUser;
let alerts: ReturnType<typeof alertAdmin>;
const smtp = new SmtpSink({ alerts: "smtp-password" });
const chat = chatWebhook();
const sms = smsGateway();
const webhook = new WebhookReceiver([]);
const servers: FakeHttpServer[] = [chat, sms];
let emailChannel: string;

beforeAll(async () => {
  app = await startTestApp({
    roles: { workers: true },
    env: {
      OUTBOUND_ALLOWLIST: "127.0.0.1/32",
      STREAM_POLL_MS: "100",
      ALERT_POLL_MS: "100",
      ALERT_RETRY_SCHEDULE: "100ms,200ms",
      RATE_LIMIT_REQUESTS: "0",
    },
  });
  admin = await createUser(app.runtime.services, { role: "admin" });
  alerts = alertAdmin(app.url, admin.key);
  await Promise.all([smtp.start(), chat.start(), sms.start(), webhook.start()]);
  emailChannel = (
    await alerts.channel(
      "email",
      "Security mailbox",
      { host: "127.0.0.1", port: String(smtp.port), security: "none", from: "alerts@finance.example", to: "security@finance.example" },
      { username: "alerts", password: "smtp-password" },
    )
  ).id;
});

afterAll(async () => {
  await app?.stop();
  await Promise.all([smtp.stop(), webhook.stop(), ...servers.map((server) => server.stop())]);
});

test("7 failed logins from one IP fire the brute-force preset once, by e-mail with text and HTML; a new window fires again", async () => {
  const preset = await alerts.enablePreset("brute_force", [emailChannel]);
  expect(preset).toMatchObject({
    preset: "brute_force",
    eventTypes: ["auth.login.failed"],
    threshold: 5,
    windowSeconds: 600,
    groupBy: "ip",
  });
  await Promise.all(Array.from({ length: 7 }, () => failedLogin(app.url, "81.2.69.142")));
  await Promise.all(Array.from({ length: 4 }, () => failedLogin(app.url, "8.8.8.8"))); // another group, below the threshold
  await evaluatorCaughtUp(app.runtime);
  const firings = await alerts.firings(preset.id);
  expect(firings).toHaveLength(1);
  expect(firings[0]).toMatchObject({ ruleName: "Failed logins from one IP", groupKey: "81.2.69.142", count: 5 });
  expect(firings[0].events).toHaveLength(5);
  expect(firings[0].events.every((event: any) => event.eventType === "auth.login.failed" && event.ipAddress === "81.2.69.142")).toBe(true);

  const mail = await eventually(() => smtp.messages.find((message) => message.subject.includes("Failed logins from one IP")) ?? false, {
    what: "the alert mail",
  });
  expect(mail.envelopeTo).toEqual(["security@finance.example"]);
  expect(mail.from).toBe("alerts@finance.example");
  expect(mail.subject).toBe(
    "[finance-gateway alert] Failed logins from one IP: 5 auth.login.failed event(s) from IP 81.2.69.142 within 10 min",
  );
  expect(mail.text).toContain("Group: 81.2.69.142");
  expect(mail.text.match(/auth\.login\.failed user=\S+ ip=81\.2\.69\.142/g)).toHaveLength(5);
  expect(mail.html).toContain("<h1>Failed logins from one IP</h1>");
  expect(mail.html.match(/<td>81\.2\.69\.142<\/td>/g)).toHaveLength(5);
  await eventually(async () => (await alerts.firings(preset.id))[0].deliveries[0]?.status === "sent", { what: "the delivery marked sent" });

  // The same rule with a 3-second window: a burst fires, more in that window do not, a burst after it fires again.
  const short = await alerts.rule({
    name: "Short window",
    eventTypes: ["auth.login.failed"],
    threshold: 5,
    windowSeconds: 3,
    groupBy: "ip",
  });
  const burst = (n: number) => Promise.all(Array.from({ length: n }, () => failedLogin(app.url, "193.0.6.139")));
  await burst(6);
  await evaluatorCaughtUp(app.runtime);
  expect(await alerts.firings(short.id)).toHaveLength(1);
  await burst(3);
  await evaluatorCaughtUp(app.runtime);
  expect(await alerts.firings(short.id)).toHaveLength(1);
  // Until the window (and the firing's quiet time) has passed the last of those events, by the database's clock that stamped them.
  await eventually(
    async () => {
      const [row] = await app.runtime.sequelize.query<{ passed: boolean }>(
        "SELECT now() > max(occurred_at) + interval '3100 milliseconds' AS passed FROM audit_events WHERE event_type = 'auth.login.failed'",
        { type: QueryTypes.SELECT },
      );
      return row.passed;
    },
    { what: "the 3-second window to pass", interval: 100 },
  );
  await burst(4);
  await evaluatorCaughtUp(app.runtime);
  expect(await alerts.firings(short.id)).toHaveLength(1);
  await burst(1);
  await evaluatorCaughtUp(app.runtime);
  const both = await alerts.firings(short.id);
  expect(both.map((firing) => firing.count)).toEqual([5, 5]);
  expect(new Date(both[0].windowStart).getTime() - new Date(both[1].windowStart).getTime()).toBeGreaterThanOrEqual(3000);
});

test("provider.deleted fires the provider-change preset through the chat webhook; other provider events do not", async () => {
  const channel = await alerts.channel("chat", "Ops chat", {}, { url: `${chat.url}/hooks/T000/B000/secret-token` });
  const preset = await alerts.enablePreset("provider_change", [channel.id]);
  const provider = await alerts.data(`mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
    input: { name: "Corporate IdP", slug: "corp", issuer: "https://127.0.0.1:9443", clientId: "finance", clientSecret: "s3cret" },
  });
  await alerts.data(`mutation ($id: ID!) { deleteSsoProvider(id: $id) { id } }`, { id: provider.createSsoProvider.id });
  await evaluatorCaughtUp(app.runtime);
  const [firing, ...more] = await alerts.firings(preset.id);
  expect(more).toEqual([]);
  expect(firing).toMatchObject({ groupKey: provider.createSsoProvider.id, count: 1, summary: `provider.deleted by ${admin.email} (corp)` });
  const posted = await eventually(() => chat.requestsTo(/^\/hooks\/T000\/B000\/secret-token$/)[0] ?? false, { what: "the chat message" });
  expect(JSON.parse(posted.body).text).toContain(`provider.deleted by ${admin.email} (corp)`);
  // The chat URL is a credential: sealed at rest, never returned, redacted in the audit event.
  const row = await app.runtime.services.repositories.alerts.getChannel(channel.id);
  expect(row!.secretsEncrypted).not.toContain("secret-token");
  const created = (await app.runtime.services.audit.list({ eventTypes: ["alert.channel.created"] }, { first: 10 })).events.find(
    (event) => event.resource?.id === channel.id,
  );
  expect(created?.changes).toMatchObject({ urlSecret: { old: null, new: "[REDACTED]" } });
  expect(JSON.stringify(created)).not.toContain("secret-token");
});

test("a login from a new country fires (SMS and signed webhook); a known country, loopback and private addresses do not", async () => {
  const password = "correct horse battery staple";
  const email = `traveller-${Date.now()}@example.test`;
  await app.runtime.services.users.create({ email, password });
  const phone = await alerts.channel(
    "sms",
    "On-call phone",
    { baseUrl: sms.url, accountSid: SMS_ACCOUNT_SID, from: "+15005550006", to: "+447700900123" },
    { authToken: SMS_AUTH_TOKEN },
  );
  const hook = await alerts.channel("webhook", "SOAR", { url: webhook.url });
  webhook.trust([hook.secret!]);
  const preset = await alerts.enablePreset("new_country", [phone.id, hook.id]);

  await login(app.url, email, password, "81.2.69.142"); // GB: the first country is the baseline
  await login(app.url, email, password, "81.2.69.160"); // GB again
  await login(app.url, email, password, "127.0.0.1");
  await login(app.url, email, password, "10.0.0.8");
  await evaluatorCaughtUp(app.runtime);
  expect(await alerts.firings(preset.id)).toEqual([]);

  await login(app.url, email, password, "8.8.8.8"); // US: new
  await login(app.url, email, password, "8.8.4.4"); // US: known now
  await evaluatorCaughtUp(app.runtime);
  const firings = await alerts.firings(preset.id);
  expect(firings).toHaveLength(1);
  expect(firings[0].groupKey).toBe(email);
  expect(firings[0].events).toEqual([expect.objectContaining({ eventType: "auth.login.success", ipAddress: "8.8.8.8", country: "US" })]);
  expect(firings[0].summary).toContain("from US (8.8.8.8)");
  expect(firings[0].summary).toContain("known: GB");

  const text = await eventually(() => sms.requests[0] ?? false, { what: "the SMS" });
  const form = new URLSearchParams(text.body);
  expect(form.get("To")).toBe("+447700900123");
  expect(form.get("From")).toBe("+15005550006");
  expect(form.get("Body")).toContain("Login from a new country");
  const received = await eventually(() => webhook.received.find((message) => message.type === "alert.fired") ?? false, {
    what: "the signed webhook",
  });
  expect(webhook.rejected).toEqual([]);
  expect(received.data).toMatchObject({ rule: "Login from a new country", group: email, count: 1 });
});

test("every channel's failure is retried and shown; one that keeps failing ends failed with its reasons; send test reports both", async () => {
  const chatDown = await alerts.channel("chat", "Broken chat", {}, { url: `${chat.url}/hooks/never` });
  const hook = await alerts.channel("webhook", "Flaky webhook", { url: webhook.url });
  webhook.trust([hook.secret!]);
  const flakyChat = await alerts.channel("chat", "Flaky chat", {}, { url: `${chat.url}/hooks/flaky` });
  const phone = await alerts.channel(
    "sms",
    "Flaky phone",
    { baseUrl: sms.url, accountSid: SMS_ACCOUNT_SID, from: "+15005550006", to: "+447700900124" },
    { authToken: SMS_AUTH_TOKEN },
  );
  const channels = [emailChannel, hook.id, flakyChat.id, phone.id, chatDown.id];
  const rule = await alerts.rule({
    name: "Role changes",
    eventTypes: ["user.roles.updated"],
    threshold: 1,
    windowSeconds: 1,
    channelIds: channels,
  });

  chat.inject({ kind: "status", status: 503, body: "no_service" }, { path: /^\/hooks\/never$/, times: 100 });
  expect(await alerts.test(emailChannel)).toMatchObject({ ok: true, error: null });
  expect(await alerts.test(phone.id)).toMatchObject({ ok: true });
  const brokenTest = await alerts.test(chatDown.id);
  expect(brokenTest.ok).toBe(false);
  expect(brokenTest.error).toMatch(/^the chat webhook answered 503/);

  smtp.refuseNext(1);
  chat.inject({ kind: "status", status: 500, body: "internal" }, { path: /^\/hooks\/flaky$/ });
  sms.inject({ kind: "status", status: 503, body: '{"code":20503,"message":"Service unavailable"}' });
  webhook.failNext({ status: 500, times: 1 });
  await recordAuditEvents(app.runtime, 1, "user.roles.updated");
  await evaluatorCaughtUp(app.runtime);

  const settled = await eventually(
    async () => {
      const [firing] = await alerts.firings(rule.id);
      return firing?.deliveries.length === 5 && firing.deliveries.every((d: any) => d.status !== "pending") ? firing : false;
    },
    { what: "every delivery settled" },
  );
  const byName = Object.fromEntries(settled.deliveries.map((d: any) => [d.channelName, d]));
  expect(byName["Security mailbox"]).toMatchObject({ status: "sent", attempts: 2 });
  expect(byName["Security mailbox"].errors[0].error).toMatch(/451/);
  expect(byName["Flaky chat"]).toMatchObject({ status: "sent", attempts: 2 });
  expect(byName["Flaky chat"].errors[0].error).toBe("the chat webhook answered 500: internal");
  expect(byName["Flaky phone"]).toMatchObject({ status: "sent", attempts: 2 });
  expect(byName["Flaky phone"].errors[0].error).toMatch(/^the SMS gateway \(to \+447700900124\) answered 503/);
  expect(byName["Flaky webhook"]).toMatchObject({ status: "sent", attempts: 2 });
  expect(byName["Flaky webhook"].errors[0].error).toBe("the webhook answered 500");
  expect(byName["Broken chat"]).toMatchObject({ status: "failed", attempts: 3 });
  expect(byName["Broken chat"].errors.map((e: any) => e.error)).toEqual(Array(3).fill("the chat webhook answered 503: no_service"));
});

test("rules and channels are validated, and their changes audited", async () => {
  const bad = await alerts.gql(
    `mutation { createAlertRule(input: { name: "", eventTypes: ["nope.*"], threshold: 0, groupBy: "country" }) { id } }`,
  );
  expect(bad.errors?.[0].extensions?.code).toBe("VALIDATION_FAILED");
  expect(bad.errors?.[0].extensions?.errors).toEqual([
    "Name can't be blank",
    'Event type "nope.*" is not a known event type or prefix',
    "Threshold must be between 1 and 100000",
    "Group by must be one of ip, user, provider or empty",
  ]);
  const badChannel = await alerts.gql(
    `mutation { createAlertChannel(input: { kind: "sms", name: "x", settings: [{ name: "baseUrl", value: "${sms.url}" }, { name: "accountSid", value: "AC1" }, { name: "from", value: "+15005550006" }, { name: "to", value: "0123" }], credentials: [{ name: "authToken", value: "t" }] }) { secret } }`,
  );
  expect(badChannel.errors?.[0].extensions?.errors).toEqual(['Setting to: "0123" is not E.164 phone numbers']);
  const rule = await alerts.rule({ name: "To be switched off", eventTypes: ["user.*"], minSeverity: "warning" });
  await alerts.data(`mutation ($id: ID!) { updateAlertRule(id: $id, input: { enabled: false }) { id } }`, { id: rule.id });
  const [updated] = (await app.runtime.services.audit.list({ eventTypes: ["alert.rule.updated"] }, { first: 1 })).events;
  expect(updated).toMatchObject({ resource: { type: "alert_rule", id: rule.id }, changes: { enabled: { old: true, new: false } } });
  const types = (await app.runtime.services.audit.list({ eventTypes: ["alert.*"] }, { first: 100 })).events.map((event) => event.eventType);
  expect(types).toEqual(
    expect.arrayContaining(["alert.rule.created", "alert.rule.updated", "alert.channel.created", "alert.channel.tested"]),
  );
});
