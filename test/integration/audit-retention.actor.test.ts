/**
 * Every action of retention and archives names who asked: an administrator signed in with a password
 * (a session) changes the tiers, runs retention (archiving a month, signing its checkpoint, deleting an
 * expired archive), searches, restores and releases; an auditor with an API key searches. Each event of
 * each retention type carries the user, and the session when there is one; none has `user: null`.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { AUDIT_EVENT_TYPES } from "../../src/audit/log/audit.catalogue";
import { createUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { client } from "../helpers/http";
import { seedMonth } from "../helpers/retention";
import { startTestApp, type TestApp } from "../helpers/test-app";

jest.setTimeout(120_000);

let app: TestApp;
let superuser: Client;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-actor-"));
  app = await startTestApp({ env: { DATA_DIR: dataDir, RATE_LIMIT_REQUESTS: "0", AUDIT_RETENTION_DATABASE_DAYS: "1" } });
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
});
afterAll(async () => {
  await superuser?.end();
  await app?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The retention and archive event types: every one must come out of the walk below. */
const RETENTION_TYPES = AUDIT_EVENT_TYPES.filter(
  (type) => type.startsWith("audit.retention.") || type.startsWith("audit.archive.") || type.startsWith("audit.checkpoint."),
);

test("every retention and archive event names the user who asked, and their session", async () => {
  const services = app.runtime.services;
  const password = "an administrator who signs in";
  const root = await services.users.create({ email: "root@actor.test", role: "admin", password });
  const login = (await client(app.url).post("/auth/login", { email: "root@actor.test", password })).body;
  const admin = client(app.url, { authorization: `Bearer ${login.access_token}` });
  const gql = async (query: string, variables?: Record<string, unknown>) => {
    const response = await admin.graphql(query, variables);
    expect(response.body.errors).toBeUndefined();
    return response.body.data;
  };
  const auditorUser = await createUser(services, { role: "auditor" });
  const auditor = graphqlClient(app, auditorUser.readKey);
  const auditorKeyId = (await services.apiKeys.authenticate(auditorUser.readKey)).credential.id;
  const started = new Date();

  // An archive older than its tier: the run that archives the month also deletes it (standard: 90 days).
  await seedMonth(superuser, "2020-01", 4);
  await services.audit.chainCommitted();
  await gql(`mutation { updateAuditRetention(input: { databaseDays: 1, defaultTier: "standard", categoryTiers: [] }) { databaseDays } }`);
  const run = (await gql(`mutation { runAuditRetention { moved { month } deleted { month } error } }`)).runAuditRetention;
  expect(run.error).toBeNull();
  expect(run.moved.map((month: { month: string }) => month.month)).toContain("2020-01");
  expect(run.deleted.map((month: { month: string }) => month.month)).toContain("2020-01");

  await seedMonth(superuser, "2021-03", 4);
  await services.audit.chainCommitted();
  await gql(`mutation { updateAuditRetention(input: { databaseDays: 1, defaultTier: "compliance", categoryTiers: [] }) { databaseDays } }`);
  await gql(`mutation { runAuditRetention { error } }`);
  const archive = (await services.retention.archives()).find((candidate) => candidate.manifest.month === "2021-03")!;
  const search = `query($ids: [ID!]!) { auditArchiveSearch(archiveIds: $ids) { nodes { id } } }`;
  await gql(search, { ids: [archive.id] });
  await auditor.ok(search, { ids: [archive.id] });
  await gql(`mutation { restoreAuditArchive(month: "2021-03") { rows } }`);
  await gql(`mutation { releaseAuditArchive(month: "2021-03") { rows } }`);
  await services.audit.chainCommitted();

  const events = (await services.audit.list({ eventTypes: RETENTION_TYPES, from: started.toISOString() }, { first: 100 })).events;
  expect([...new Set(events.map((event) => event.eventType))].sort()).toEqual([...RETENTION_TYPES].sort());
  for (const event of events) {
    const expected =
      event.user?.email === auditorUser.email
        ? { id: auditorUser.userId, email: auditorUser.email }
        : { id: root.id, email: "root@actor.test" };
    expect({ type: event.eventType, user: event.user }).toEqual({ type: event.eventType, user: expected });
    if (event.user?.email === "root@actor.test")
      expect({ type: event.eventType, session: event.sessionId }).toEqual({ type: event.eventType, session: expect.any(String) });
    // The auditor asked with an API key: the key is named as the credential.
    else
      expect({ type: event.eventType, session: event.sessionId }).toEqual({
        type: event.eventType,
        session: `api_key:${auditorKeyId}`,
      });
  }
});
