import { eventually } from "../helpers/eventually";
import { createUser, type TestUser } from "../helpers/fixtures";
import { recordAuditEvents, streamAdmin } from "../helpers/streaming";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { selfSignedCertificate } from "../helpers/tls-certificate";
import { DatadogReceiver, ElasticReceiver, SentinelReceiver, SplunkReceiver, SyslogReceiver } from "../fakes/siem-receivers";

/**
 * The five SIEM platforms (and ArcSight CEF) against loopback receivers that check each wire format
 * strictly: Splunk's HEC envelope, ECS field types through `_bulk`, Datadog's batch limits, Sentinel's
 * client-credentials token flow, LEEF and CEF escaping read by a parser that is not our formatter.
 */
let app: TestApp;
let admin: TestUser;
let admin$: ReturnType<typeof streamAdmin>;

/** Text that needs every kind of escaping: CEF and LEEF separators, backslashes, a line break. */
const AWKWARD = "curl/8 (x|y) a=b \\ back^slash\nsecond line";

beforeAll(async () => {
  app = await startTestApp({
    roles: { workers: true },
    env: {
      OUTBOUND_ALLOWLIST: "127.0.0.1/32",
      STREAM_POLL_MS: "100",
      STREAM_LEASE_MS: "5000",
      STREAM_RETRY_SCHEDULE: "50ms,100ms,200ms,300ms,500ms,1s,1s,1s,1s,1s",
    },
  });
  admin = await createUser(app.runtime.services, { role: "admin" });
  admin$ = streamAdmin(app.url, admin.key);
});

afterAll(() => app?.stop());

const settingsOf = (settings: Record<string, string>) => Object.entries(settings).map(([name, value]) => ({ name, value }));
const credentialsOf = settingsOf;

test("Splunk HEC: concatenated event envelopes with epoch time, sourcetype and index, token in the Splunk header", async () => {
  const splunk = new SplunkReceiver("hec-token-1");
  await splunk.start();
  try {
    await admin$.create({
      kind: "splunk",
      name: "Splunk",
      url: splunk.url,
      eventTypes: ["auth.login.failed"],
      settings: settingsOf({ index: "security", sourcetype: "fg:audit" }),
      credentials: credentialsOf({ token: "hec-token-1" }),
    });
    const ids = await recordAuditEvents(
      app.runtime,
      700,
      "auth.login.failed",
      (i) => ({ email: `s${i}@example.test`, error: AWKWARD }),
      350,
    );
    await eventually(() => splunk.events.length >= 700, { what: "700 HEC events" });
    expect(splunk.events.map((event) => event.event.id)).toEqual(ids);
    expect(splunk.events[0]).toMatchObject({
      sourcetype: "fg:audit",
      index: "security",
      source: "finance-gateway",
      event: { error: AWKWARD },
    });
    expect(splunk.requests.every((request) => request.status === 200)).toBe(true);
    expect(splunk.requests.length).toBeGreaterThanOrEqual(2); // batched: at most 500 events a request
  } finally {
    await splunk.stop();
  }
});

test("Elastic: ECS documents through _bulk, typed as ECS says; a redelivery is a 409 that counts as delivered", async () => {
  const elastic = new ElasticReceiver("es-key");
  await elastic.start();
  try {
    const { id } = await admin$.create({
      kind: "elastic",
      name: "Elastic",
      url: elastic.url,
      eventTypes: ["auth.login.*", "user.created"],
      settings: settingsOf({ index: "fg-audit" }),
      credentials: credentialsOf({ apiKey: "es-key" }),
    });
    const failed = await recordAuditEvents(app.runtime, 3, "auth.login.failed", () => ({ error: "bad password" }));
    const ok = await recordAuditEvents(app.runtime, 2, "auth.login.success");
    await eventually(() => elastic.documents.size >= 5, { what: "5 ECS documents" });
    expect(elastic.order).toEqual([...failed, ...ok]);
    const doc = elastic.documents.get(failed[0])!;
    expect(doc.index).toBe("fg-audit");
    expect(doc.doc.event).toMatchObject({
      action: "auth.login.failed",
      category: ["authentication", "session"],
      type: ["start"],
      outcome: "failure",
    });
    expect(doc.doc.error).toEqual({ message: "bad password" });
    expect(elastic.documents.get(ok[0])!.doc.event.outcome).toBe("success");
    expect(elastic.requests.every((request) => request.status === 200)).toBe(true);
    // Replay: every document comes again and is acknowledged as already there.
    await admin$.gql(`mutation ($id: ID!, $seq: String) { replayStreamDestination(id: $id, fromSequence: $seq) { id } }`, {
      id,
      seq: String(elastic.documents.get(failed[0])!.doc.event.sequence),
    });
    await eventually(() => elastic.duplicates >= 5, { what: "the replayed documents as 409s" });
    await eventually(async () => (await admin$.destination(id)).health.lag === "0", { what: "the replay to finish" });
    expect((await admin$.destination(id)).health.failures).toBe(0);
  } finally {
    await elastic.stop();
  }
});

test("Datadog: JSON arrays of at most 1000 entries with ddsource, service and ddtags", async () => {
  const datadog = new DatadogReceiver("dd-key");
  await datadog.start();
  try {
    const { id } = await admin$.create({
      kind: "datadog",
      name: "Datadog",
      url: datadog.url,
      eventTypes: ["auth.token.issued"],
      settings: settingsOf({ service: "finance", tags: "env:test" }),
      credentials: credentialsOf({ apiKey: "dd-key" }),
    });
    // Paused while 1500 events are recorded, so that one turn holds more than a request may carry.
    await admin$.gql(`mutation ($id: ID!) { pauseStreamDestination(id: $id) { id } }`, { id });
    const ids = await recordAuditEvents(app.runtime, 1500, "auth.token.issued", undefined, 500);
    await app.runtime.services.audit.chainCommitted();
    await admin$.gql(`mutation ($id: ID!) { resumeStreamDestination(id: $id) { id } }`, { id });
    await eventually(() => datadog.entries.length >= 1500, { what: "1500 Datadog entries", timeout: 30_000 });
    expect(datadog.entries.map((entry) => entry.audit.id)).toEqual(ids);
    expect(datadog.largestBatch).toBe(1000);
    expect(datadog.requests.every((request) => request.status === 202)).toBe(true);
    // No per-event fan-out in the database: one delivery-log row per request (written as the turn settles), none per event.
    const logged = async () =>
      (
        (await app.runtime.sequelize.query(
          `SELECT count(*)::int AS rows, coalesce(sum(events), 0)::int AS events FROM audit_stream_deliveries WHERE destination_id = :id AND NOT test`,
          { replacements: { id }, type: "SELECT" },
        )) as Array<{ rows: number; events: number }>
      )[0];
    await eventually(async () => (await logged()).events === 1500, { what: "the delivery log of the 1500 entries" });
    expect(await logged()).toEqual({ rows: datadog.requests.length, events: 1500 });
    // Dated by when the event happened (it waited while the destination was paused), not by arrival.
    for (const entry of datadog.entries) expect(entry.timestamp).toBe(entry.audit.timestamp);
    expect(datadog.entries[0]).toMatchObject({
      ddsource: "finance-gateway",
      service: "finance",
      ddtags: expect.stringContaining("env:test"),
    });
  } finally {
    await datadog.stop();
  }
});

test("Sentinel: an OAuth2 client-credentials token, refreshed before it expires, then rows to the DCR stream", async () => {
  const settings = {
    tenantId: "tenant-1",
    clientId: "client-1",
    clientSecret: "entra-secret",
    dcrImmutableId: "dcr-abc",
    streamName: "Custom-FinanceAudit_CL",
  };
  const sentinel = new SentinelReceiver(settings, 2); // two-second tokens: a refresh is due every second
  await sentinel.start();
  try {
    const { id } = await admin$.create({
      kind: "sentinel",
      name: "Sentinel",
      url: sentinel.url,
      eventTypes: ["auth.token.refreshed"],
      settings: settingsOf({
        tenantId: settings.tenantId,
        clientId: settings.clientId,
        dcrImmutableId: settings.dcrImmutableId,
        streamName: settings.streamName,
        authorityUrl: sentinel.url,
      }),
      credentials: credentialsOf({ clientSecret: settings.clientSecret }),
    });
    const ids: string[] = [];
    for (let round = 0; round < 3; round++) {
      ids.push(...(await recordAuditEvents(app.runtime, 10, "auth.token.refreshed")));
      await eventually(() => sentinel.rows.length >= ids.length, { what: `round ${round}` });
      // Until the newest token is past its refresh point (half its lifetime, as the gateway reckons it from
      // the answer a moment after the fake issued it: 100 ms of margin), and still 900 ms short of expiring.
      const newest = sentinel.tokensIssued[sentinel.tokensIssued.length - 1];
      await eventually(() => Date.now() >= newest.expiresAt - 900, { what: "the token's refresh point" });
    }
    expect(sentinel.rows.map((row) => row.EventId)).toEqual(ids);
    expect(sentinel.tokensIssued.length).toBeGreaterThanOrEqual(2);
    expect(sentinel.expiredTokenUses).toBe(0);
    expect(sentinel.requests.filter((request) => request.status === 401)).toEqual([]);
    const listed = await admin$.destination(id);
    expect(listed.credentialNames).toEqual(["clientSecret"]);
    expect(JSON.stringify(listed)).not.toContain("entra-secret");
  } finally {
    await sentinel.stop();
  }
});

test("QRadar: LEEF 2.0 over syslog TLS, escaping read back by an independent parser", async () => {
  const certificate = selfSignedCertificate(["127.0.0.1"]);
  const qradar = new SyslogReceiver("leef", certificate);
  await qradar.start();
  try {
    await admin$.create({
      kind: "qradar",
      name: "QRadar",
      url: qradar.url,
      eventTypes: ["user.suspended"],
      settings: settingsOf({ caCertificate: certificate.cert }),
    });
    const ids = await recordAuditEvents(app.runtime, 5, "user.suspended", (i) => ({ email: `q${i}@example.test`, error: AWKWARD }));
    await eventually(() => qradar.records.length + qradar.problems.length >= 5, { what: "5 LEEF records" });
    expect(qradar.problems).toEqual([]);
    expect(qradar.records.map((record) => record.fields.eventId)).toEqual(ids);
    const [record] = qradar.records;
    expect(record.header).toEqual(["LEEF:2.0", "finance-gateway", "finance-gateway", "0.1.0", "user.suspended"]);
    expect(record.fields).toMatchObject({ usrName: "q0@example.test", sev: "5", cat: "iam", error: AWKWARD });
    expect(Date.parse(record.fields.devTime)).not.toBeNaN();
    expect(record.syslog).toMatchObject({ appName: "finance-gateway", messageid: "user.suspended", levelval: 4 });
  } finally {
    await qradar.stop();
  }
});

test("ArcSight: CEF over syslog TCP, header and extension escaping read back by an independent parser", async () => {
  const arcsight = new SyslogReceiver("cef");
  await arcsight.start();
  try {
    await admin$.create({ kind: "arcsight", name: "ArcSight", url: arcsight.url, eventTypes: ["user.deleted"] });
    const ids = await recordAuditEvents(app.runtime, 5, "user.deleted", (i) => ({
      email: `c${i}@example.test`,
      error: AWKWARD,
      action: "a|b=c",
    }));
    await eventually(() => arcsight.records.length + arcsight.problems.length >= 5, { what: "5 CEF records" });
    expect(arcsight.problems).toEqual([]);
    expect(arcsight.records.map((record) => record.fields.externalId)).toEqual(ids);
    const [record] = arcsight.records;
    expect(record.header).toEqual(["CEF:0", "finance-gateway", "finance-gateway", "0.1.0", "user.deleted", "user.deleted", "6"]);
    expect(record.fields).toMatchObject({ suser: "c0@example.test", act: "a|b=c", msg: AWKWARD, outcome: "failure" });
    expect(Number(record.fields.rt)).toBeGreaterThan(1.7e12);
  } finally {
    await arcsight.stop();
  }
});

test("a SIEM test event goes out in the platform's format; credentials are never returned", async () => {
  const splunk = new SplunkReceiver("hec-token-2");
  await splunk.start();
  try {
    const { id } = await admin$.create({
      kind: "splunk",
      name: "Splunk test",
      url: splunk.url,
      credentials: credentialsOf({ token: "hec-token-2" }),
    });
    const result = await admin$.gql(`mutation ($id: ID!) { testStreamDestination(id: $id) { ok status error } }`, { id });
    expect(result.data.testStreamDestination).toEqual({ ok: true, status: 200, error: null });
    const sent = splunk.events.find((event) => String(event.event.id).startsWith("test_"));
    expect(sent!.event).toMatchObject({ eventType: "stream.destination.tested", action: "test", resource: { id } });
    const wrong = await admin$.gql(
      `mutation ($id: ID!, $input: StreamDestinationInput!) { updateStreamDestination(id: $id, input: $input) { credentialNames } }`,
      {
        id,
        input: { credentials: credentialsOf({ token: "wrong" }) },
      },
    );
    expect(wrong.data.updateStreamDestination.credentialNames).toEqual(["token"]);
    const refused = await admin$.gql(`mutation ($id: ID!) { testStreamDestination(id: $id) { ok status error } }`, { id });
    expect(refused.data.testStreamDestination).toMatchObject({ ok: false, status: 401 });
    expect(JSON.stringify(await admin$.gql(`query { streamDestinations { settings { value } credentialNames } }`))).not.toMatch(
      /hec-token|wrong/,
    );
  } finally {
    await splunk.stop();
  }
});
