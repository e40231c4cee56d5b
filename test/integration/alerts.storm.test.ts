import { eventually } from "../helpers/eventually";
import { createUser, type TestUser } from "../helpers/fixtures";
import { alertAdmin, evaluatorCaughtUp } from "../helpers/alerts";
import { recordAuditEvents } from "../helpers/streaming";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { smsGateway, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN } from "../fakes/alert-receivers";
import { SmtpSink } from "../fakes/smtp-sink";

/**
 * An alert storm (issue 28): 10,000 failed logins from 10,000 users within seconds, under a rule that
 * fires on every one (threshold 1, grouped by user). With a firing cap of 5 per period and an SMS budget
 * of 3, the real SMTP server receives 5 alerts and one digest, the Twilio-shaped gateway 3 and the
 * digest; the rest are held back, counted in the digest ("9995 more since …"), and the two limits are
 * recorded once each when they begin to bite.
 */
jest.setTimeout(180_000);

const EVENTS = 10_000;
const CAP = 5;
const SMS_BUDGET = 3;
const CAP_WINDOW_SECONDS = 30;

let app: TestApp;
let admin: TestUser;
const smtp = new SmtpSink(null);
const sms = smsGateway();

beforeAll(async () => {
  app = await startTestApp({
    roles: { workers: true },
    env: {
      OUTBOUND_ALLOWLIST: "127.0.0.1/32",
      STREAM_POLL_MS: "100",
      ALERT_POLL_MS: "100",
      ALERT_FIRING_CAP: String(CAP),
      ALERT_FIRING_CAP_WINDOW_SECONDS: String(CAP_WINDOW_SECONDS),
      ALERT_CHANNEL_BUDGETS: `sms=${SMS_BUDGET}`,
      RATE_LIMIT_REQUESTS: "0",
    },
  });
  admin = await createUser(app.runtime.services, { role: "admin" });
  await Promise.all([smtp.start(), sms.start()]);
});

afterAll(async () => {
  await app?.stop();
  await Promise.all([smtp.stop(), sms.stop()]);
});

test("10,000 matching events: at most the cap of deliveries per channel plus one digest; the limits recorded when they bite", async () => {
  const alerts = alertAdmin(app.url, admin.key);
  const limits = (
    await alerts.data(
      `{ alertLimits { cooldownSeconds firingCap capWindowSeconds channelBudgets { kind deliveries } budgetWindowSeconds } }`,
    )
  ).alertLimits;
  expect(limits).toMatchObject({ cooldownSeconds: 0, firingCap: CAP, capWindowSeconds: CAP_WINDOW_SECONDS, budgetWindowSeconds: 3600 });
  expect(limits.channelBudgets).toEqual(
    expect.arrayContaining([
      { kind: "sms", deliveries: SMS_BUDGET },
      { kind: "email", deliveries: 60 },
    ]),
  );
  const mail = await alerts.channel("email", "Storm mailbox", {
    host: "127.0.0.1",
    port: String(smtp.port),
    security: "none",
    from: "alerts@finance.example",
    to: "security@finance.example",
  });
  const phone = await alerts.channel(
    "sms",
    "Storm phone",
    { baseUrl: sms.url, accountSid: SMS_ACCOUNT_SID, from: "+15005550006", to: "+447700900125" },
    { authToken: SMS_AUTH_TOKEN },
  );
  const rule = await alerts.rule({
    name: "Every failed login",
    eventTypes: ["auth.login.failed"],
    threshold: 1,
    windowSeconds: 1,
    groupBy: "user",
    channelIds: [mail.id, phone.id],
  });
  expect(rule).toMatchObject({ cooldownSeconds: null, firingCap: null });

  const started = Date.now();
  // One transaction: the storm reaches the evaluator at once, whatever this machine's speed of recording.
  await recordAuditEvents(
    app.runtime,
    EVENTS,
    "auth.login.failed",
    (i) => ({ email: `victim${i}@example.test`, error: "bad password" }),
    EVENTS,
  );
  const recordedInMs = Date.now() - started;
  await evaluatorCaughtUp(app.runtime, 120_000);

  // The period ends CAP_WINDOW_SECONDS after the first firing; then the digest goes out.
  const digest = await eventually(async () => (await alerts.firings(rule.id)).find((firing) => firing.digest) ?? false, {
    what: "the storm digest",
    timeout: (CAP_WINDOW_SECONDS + 30) * 1000,
  });
  const firings = (await alerts.firings(rule.id)).filter((firing) => !firing.digest);
  expect(firings).toHaveLength(CAP);
  expect(digest.count).toBe(EVENTS - CAP);
  expect(digest.summary).toMatch(
    new RegExp(`^${EVENTS - CAP} more since \\d{4}-\\d\\d-\\d\\dT.*the cap of ${CAP} firing\\(s\\) per ${CAP_WINDOW_SECONDS} s`),
  );

  // What the receivers got: the cap (e-mail) or the budget (SMS), plus one digest each.
  await eventually(() => smtp.messages.length >= CAP + 1 && sms.requests.length >= SMS_BUDGET + 1, { what: "the deliveries" });
  await evaluatorCaughtUp(app.runtime);
  const mails = smtp.messages.filter((message) => message.subject.includes("Every failed login"));
  expect(mails).toHaveLength(CAP + 1);
  expect(mails.filter((message) => message.subject.includes(`${EVENTS - CAP} more since`))).toHaveLength(1);
  expect(sms.requests).toHaveLength(SMS_BUDGET + 1);
  expect(sms.requests.filter((request) => new URLSearchParams(request.body).get("Body")!.includes("more since"))).toHaveLength(1);

  // The firings the SMS budget held back are in the history, with the reason.
  const smsDeliveries = firings.flatMap((firing) => firing.deliveries).filter((delivery: any) => delivery.channelKind === "sms");
  expect(smsDeliveries.filter((delivery: any) => delivery.status === "sent")).toHaveLength(SMS_BUDGET);
  const held = smsDeliveries.filter((delivery: any) => delivery.status === "suppressed");
  expect(held).toHaveLength(CAP - SMS_BUDGET);
  expect(held[0].errors[0].error).toBe(`held back: the sms send budget of ${SMS_BUDGET} per 3600 s is spent`);

  // Each limit recorded once, when it began to bite.
  const { events: limited } = await app.runtime.services.audit.list(
    { eventTypes: ["alert.rule.limited", "alert.channel.limited"] },
    { first: 50 },
  );
  expect(limited.map((event) => [event.eventType, event.resource?.id]).sort()).toEqual(
    [
      ["alert.channel.limited", phone.id],
      ["alert.rule.limited", rule.id],
    ].sort(),
  );
  console.log(
    `storm: ${EVENTS} events recorded in ${recordedInMs} ms; ${firings.length} firings + 1 digest; ${mails.length} mails, ${sms.requests.length} SMS`,
  );
});
