/**
 * Compliance reports through GraphQL and the real worker: every figure equals SQL written here over
 * the same period, and the PDF is read back with poppler's pdftotext/pdfinfo (a reader that is not
 * ours): its pages, header, controls, totals and page numbers.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseCsv } from "csv-parse/sync";
import type { AuditEventType } from "../../src/audit/log/audit.catalogue";
import { defaultSeverity } from "../../src/audit/log/audit.catalogue";
import { client } from "../helpers/http";
import { ReportRepository } from "../../src/audit/exports/report.repository";
import { buildReport } from "../../src/audit/exports/report.templates";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";
import { sqlThroughApp } from "../helpers/sql";

let app: TestApp;
let exportDir: string;
let token: string;
let auditorEmail: string;
const PASSWORD = "a long enough password";
const admin = { id: randomUUID(), email: "admin@corp.test" };
const users = Array.from({ length: 4 }, (_, i) => ({ id: randomUUID(), email: `person${i}@corp.test` }));
const suspended = users[3];
const PERIOD = { from: "2024-03-01", to: "2024-03-31" };

type Seed = {
  at: string;
  type: AuditEventType;
  user?: { id: string; email: string } | null;
  provider?: string | null;
  ip?: string | null;
  error?: string | null;
  resource?: { type: string; id: string; label: string } | null;
  changes?: Record<string, { old: unknown; new: unknown }> | null;
  requestId?: string;
};

function seeds(): Seed[] {
  const list: Seed[] = [];
  // Sign-ins over ten days of March: successes and failures per provider, reasons, addresses and accounts.
  for (let i = 0; i < 120; i++) {
    const day = String(1 + (i % 10)).padStart(2, "0");
    const user = users[i % 3];
    const failed = i % 4 === 0 || i % 9 === 0;
    list.push({
      at: `2024-03-${day}T${String(8 + (i % 10)).padStart(2, "0")}:00:${String(i % 60).padStart(2, "0")}Z`,
      type: failed ? "auth.login.failed" : "auth.login.success",
      user,
      provider: ["okta", "entra", null][i % 3],
      ip: failed ? `203.0.113.${i % 5}` : `10.0.0.${i % 20}`,
      error: failed ? ["invalid_password", "account_locked", "mfa_failed"][i % 3] : null,
    });
  }
  for (let i = 0; i < 30; i++) {
    const type = (["auth.token.issued", "auth.token.refreshed", "auth.token.revoked", "auth.session.expired", "auth.logout"] as const)[
      i % 5
    ];
    list.push({ at: `2024-03-1${i % 10}T12:00:${String(i).padStart(2, "0")}Z`, type, user: users[i % 3], ip: "10.0.0.1" });
  }
  // Access changes: roles, providers, a suspension, activity after it, a reactivation, then normal activity.
  list.push(
    {
      at: "2024-03-05T09:00:00Z",
      type: "user.roles.updated",
      user: admin,
      resource: { type: "user", id: users[1].id, label: users[1].email },
      changes: { role: { old: "member", new: "auditor" } },
    },
    {
      at: "2024-03-06T09:00:00Z",
      type: "user.roles.synced",
      user: users[2],
      provider: "okta",
      resource: { type: "user", id: users[2].id, label: users[2].email },
      changes: { role: { old: "member", new: "admin" } },
    },
    {
      at: "2024-03-07T09:00:00Z",
      type: "provider.updated",
      user: admin,
      provider: "okta",
      resource: { type: "provider", id: "okta", label: "Okta" },
      changes: { scopes: { old: ["openid"], new: ["openid", "email"] } },
    },
    {
      at: "2024-03-07T10:00:00Z",
      type: "provider.disabled",
      user: admin,
      provider: "entra",
      resource: { type: "provider", id: "entra", label: "Entra" },
    },
    {
      at: "2024-03-08T09:00:00Z",
      type: "user.suspended",
      user: admin,
      resource: { type: "user", id: suspended.id, label: suspended.email },
      requestId: "suspend-request",
    },
    // Recorded by the suspending request itself (its sessions ending): not activity after suspension.
    { at: "2024-03-08T09:00:00.005Z", type: "auth.token.revoked", user: suspended, requestId: "suspend-request" },
    { at: "2024-03-08T15:00:00Z", type: "auth.login.success", user: suspended, ip: "198.51.100.7", provider: "okta" },
    { at: "2024-03-08T15:05:00Z", type: "auth.token.issued", user: suspended, ip: "198.51.100.7" },
    {
      at: "2024-03-09T09:00:00Z",
      type: "user.reactivated",
      user: admin,
      resource: { type: "user", id: suspended.id, label: suspended.email },
    },
    { at: "2024-03-09T10:00:00Z", type: "auth.login.success", user: suspended, ip: "10.0.0.99", provider: "okta" },
    { at: "2024-03-20T10:00:00Z", type: "user.deleted", user: admin, resource: { type: "user", id: users[0].id, label: users[0].email } },
  );
  // Outside the period: must count nowhere.
  list.push({ at: "2024-02-29T23:59:59Z", type: "auth.login.failed", user: users[0], ip: "203.0.113.1", error: "invalid_password" });
  list.push({ at: "2024-04-01T00:00:00Z", type: "auth.login.success", user: users[0], ip: "10.0.0.1" });
  return list;
}

beforeAll(async () => {
  exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-reports-"));
  app = await startTestApp({ env: { EXPORT_DIR: exportDir }, roles: { workers: true } });
  const { services, sequelize } = app.runtime;
  const auditor = await services.users.create({ email: `auditor-${randomUUID()}@example.test`, role: "auditor", password: PASSWORD });
  auditorEmail = auditor.email;
  token = (await client(app.url).post("/auth/login", { email: auditor.email, password: PASSWORD })).body.access_token;
  await sequelize.transaction(async (transaction) => {
    for (const [index, seed] of seeds().entries()) {
      await services.repositories.audit.append(
        {
          id: randomUUID(),
          timestamp: new Date(seed.at),
          eventType: seed.type,
          severity: defaultSeverity(seed.type),
          userId: seed.user?.id ?? null,
          userEmail: seed.user?.email ?? null,
          provider: seed.provider ?? null,
          action: null,
          resourceType: seed.resource?.type ?? null,
          resourceId: seed.resource?.id ?? null,
          resourceLabel: seed.resource?.label ?? null,
          ipAddress: seed.ip ?? null,
          userAgent: "test",
          sessionId: null,
          requestId: seed.requestId ?? `seed-${index}`,
          changes: seed.changes ?? null,
          error: seed.error ?? null,
        },
        transaction,
      );
    }
  });
}, 60_000);

afterAll(async () => {
  await app?.stop();
  fs.rmSync(exportDir, { recursive: true, force: true });
});

const api = () => client(app.url, { authorization: `Bearer ${token}` });

async function report(input: Record<string, unknown>): Promise<{ record: any; bytes: Buffer }> {
  const created = await api().graphql(`mutation ($input: AuditReportInput!) { createAuditReport(input: $input) { id status } }`, {
    input: { ...PERIOD, ...input },
  });
  expect(created.body.errors).toBeUndefined();
  const id = created.body.data.createAuditReport.id;
  const record = await eventually(
    async () => {
      const current = (
        await api().graphql(`query ($id: ID!) { auditExport(id: $id) { id status fileName manifest rowsWritten error } }`, { id })
      ).body.data.auditExport;
      return (current.status === "COMPLETED" || current.status === "FAILED") && current;
    },
    { what: `report ${id} to finish`, timeout: 20_000 },
  );
  expect(record.status).toBe("COMPLETED");
  const url = (await api().graphql(`mutation ($id: ID!) { createAuditExportDownloadUrl(id: $id) { url } }`, { id })).body.data
    .createAuditExportDownloadUrl.url;
  const response = await fetch(`${app.url}${url}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(record.manifest.fileSha256).toBe(createHash("sha256").update(bytes).digest("hex"));
  return { record, bytes };
}

const sql = sqlThroughApp(() => app.runtime.sequelize);

const IN_PERIOD = `occurred_at >= '2024-03-01T00:00:00Z' AND occurred_at < '2024-04-01T00:00:00Z'`;

function tableOf(body: any, title: string): any {
  const table = body.tables.find((candidate: any) => candidate.title === title);
  if (!table) throw new Error(`no table ${title}`);
  return table;
}

test("the authentication report's figures equal SQL over the same period", async () => {
  const { bytes, record } = await report({ template: "AUTHENTICATION", format: "JSON" });
  const body = JSON.parse(bytes.toString("utf8"));
  expect(body.controls.map((control: any) => control.id)).toEqual(["CC6.1", "CC6.2", "CC6.3", "CC7.2"]);
  expect(body.period).toEqual(PERIOD);
  expect(body.generatedBy).toBe(auditorEmail);
  const { checksum, ...content } = body;
  expect(checksum).toBe(createHash("sha256").update(JSON.stringify(content)).digest("hex"));
  expect(record.manifest.reportChecksum).toBe(checksum);

  const outcomes = await sql<{ provider: string; ok: string; failed: string }>(
    `SELECT coalesce(provider, '(local)') AS provider, count(*) FILTER (WHERE event_type = 'auth.login.success') AS ok,
            count(*) FILTER (WHERE event_type = 'auth.login.failed') AS failed
       FROM audit_events WHERE ${IN_PERIOD} AND event_type IN ('auth.login.success', 'auth.login.failed') GROUP BY 1 ORDER BY 1`,
  );
  const byProvider = tableOf(body, "Sign-ins by outcome and provider").rows;
  expect(byProvider.slice(0, -1)).toEqual(outcomes.map((row) => [row.provider, Number(row.ok), Number(row.failed)]));
  const totals = byProvider[byProvider.length - 1];
  expect(totals).toEqual([
    "All providers",
    outcomes.reduce((s, r) => s + Number(r.ok), 0),
    outcomes.reduce((s, r) => s + Number(r.failed), 0),
  ]);

  const reasons = await sql<{ error: string; n: string }>(
    `SELECT error, count(*) AS n FROM audit_events WHERE ${IN_PERIOD} AND event_type = 'auth.login.failed' GROUP BY 1 ORDER BY 2 DESC, 1`,
  );
  expect(tableOf(body, "Failed sign-ins by reason").rows).toEqual(reasons.map((row) => [row.error, Number(row.n)]));
  const addresses = await sql<{ ip: string; n: string }>(
    `SELECT host(ip_address) AS ip, count(*) AS n FROM audit_events WHERE ${IN_PERIOD} AND event_type = 'auth.login.failed'
      GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`,
  );
  expect(tableOf(body, "Top 10 failing IP addresses").rows).toEqual(addresses.map((row) => [row.ip, Number(row.n)]));
  const tokens = await sql<{ type: string; n: string }>(
    `SELECT event_type AS type, count(*) AS n FROM audit_events WHERE ${IN_PERIOD}
        AND event_type IN ('auth.token.issued', 'auth.token.refreshed', 'auth.token.revoked', 'auth.session.expired', 'auth.logout')
      GROUP BY 1 ORDER BY 1`,
  );
  expect(tableOf(body, "Tokens and sessions").rows).toEqual(tokens.map((row) => [row.type, Number(row.n)]));
  const perDay = await sql<{ day: string; n: string }>(
    `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS n FROM audit_events
      WHERE ${IN_PERIOD} AND event_type LIKE 'auth.%' GROUP BY 1 ORDER BY 1`,
  );
  expect(body.eventsPerDay).toEqual(perDay.map((row) => ({ day: row.day, count: Number(row.n) })));
  expect(body.totalEvents).toBe(perDay.reduce((sum, row) => sum + Number(row.n), 0));
}, 30_000);

test("the access audit lists role and provider changes, suspensions, and flags activity after a suspension", async () => {
  const body = JSON.parse((await report({ template: "ACCESS_AUDIT", format: "JSON" })).bytes.toString("utf8"));
  expect(body.controls).toEqual([expect.objectContaining({ framework: "ISO/IEC 27001:2022", id: "A.8.15" })]);
  expect(tableOf(body, "Role changes").rows).toEqual([
    ["2024-03-05T09:00:00.000Z", users[1].email, "member -> auditor", admin.email],
    ["2024-03-06T09:00:00.000Z", users[2].email, "member -> admin", "okta (sync)"],
  ]);
  expect(tableOf(body, "Provider configuration changes").rows).toEqual([
    ["2024-03-07T09:00:00.000Z", "Okta", "provider.updated", admin.email, 'scopes: ["openid"] -> ["openid","email"]'],
    ["2024-03-07T10:00:00.000Z", "Entra", "provider.disabled", admin.email, null],
  ]);
  expect(tableOf(body, "Suspensions, reactivations and deletions").rows.map((row: any[]) => row[2])).toEqual([
    "user.suspended",
    "user.reactivated",
    "user.deleted",
  ]);
  // Between the suspension and the reactivation, excluding what the suspending request itself recorded.
  expect(tableOf(body, "FLAGGED: activity after suspension").rows).toEqual([
    ["2024-03-08T15:00:00.000Z", suspended.email, "auth.login.success", "198.51.100.7", "2024-03-08T09:00:00.000Z"],
    ["2024-03-08T15:05:00.000Z", suspended.email, "auth.token.issued", "198.51.100.7", "2024-03-08T09:00:00.000Z"],
  ]);
}, 30_000);

test("the per-user activity report lists everything a user did, in order, with addresses and role changes", async () => {
  const who = users[1];
  const body = JSON.parse((await report({ template: "USER_ACTIVITY", format: "JSON", userIds: [who.id] })).bytes.toString("utf8"));
  expect(body.controls.map((control: any) => control.id)).toEqual(["§164.312(b)", "§164.308(a)(1)(ii)(D)"]);
  const events = await sql<{ at: string; type: string; ip: string | null }>(
    `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, event_type AS type, host(ip_address) AS ip
       FROM audit_events WHERE ${IN_PERIOD} AND user_id = $1 ORDER BY occurred_at, id`,
    [who.id],
  );
  const activity = tableOf(body, "Activity, by user in time order");
  expect(activity.total).toBe(events.length);
  expect(activity.rows.map((row: any[]) => [row[0], row[2], row[3]])).toEqual(events.map((row) => [row.at, row.type, row.ip]));
  const [summary] = tableOf(body, "Activity by user").rows;
  const [distinct] = await sql<{ n: string }>(
    `SELECT count(DISTINCT ip_address) AS n FROM audit_events WHERE ${IN_PERIOD} AND user_id = $1`,
    [who.id],
  );
  expect(summary).toEqual([
    who.email,
    events.length,
    events[0].at.slice(0, 19) + "Z",
    events[events.length - 1].at.slice(0, 19) + "Z",
    Number(distinct.n),
  ]);
  expect(tableOf(body, "Role changes").rows).toEqual([["2024-03-05T09:00:00.000Z", who.email, "member -> auditor", admin.email]]);
}, 30_000);

test("a custom report: chosen event types, group-by and columns; CSV of uniform width", async () => {
  const input = {
    template: "CUSTOM",
    format: "CSV",
    eventTypes: ["auth.login.failed"],
    groupBy: "ipAddress",
    columns: ["timestamp", "user", "error"],
  };
  const text = (await report(input)).bytes.toString("utf8");
  const rows: string[][] = parseCsv(text, { relax_column_count: false });
  const groups = rows.filter((row) => row[0] === "Events by ipAddress" && row[1] === "row").map((row) => [row[2], Number(row[3])]);
  const expected = await sql<{ ip: string; n: string }>(
    `SELECT host(ip_address) AS ip, count(*) AS n FROM audit_events WHERE ${IN_PERIOD} AND event_type = 'auth.login.failed' GROUP BY 1 ORDER BY 2 DESC, 1`,
  );
  expect(groups).toEqual(expected.map((row) => [row.ip, Number(row.n)]));
  const header = rows.find((row) => row[0] === "Events" && row[1] === "header")!;
  expect(header.slice(2, 5)).toEqual(["timestamp", "user", "error"]);
  const listed = rows.filter((row) => row[0] === "Events" && row[1] === "row");
  expect(listed).toHaveLength(expected.reduce((sum, row) => sum + Number(row.n), 0));
  expect(rows.find((row) => row[1] === "meta" && row[2] === "checksum")?.[3]).toMatch(/^SHA-256 [0-9a-f]{64}$/);

  const refused = await api().graphql(`mutation ($input: AuditReportInput!) { createAuditReport(input: $input) { id } }`, {
    input: { ...PERIOD, template: "AUTHENTICATION", format: "PDF", groupBy: "day" },
  });
  expect(refused.body.errors[0].extensions.code).toBe("BAD_REQUEST");
  const badType = await api().graphql(`mutation ($input: AuditReportInput!) { createAuditReport(input: $input) { id } }`, {
    input: { ...PERIOD, template: "CUSTOM", format: "PDF", eventTypes: ["nope.*"] },
  });
  expect(badType.body.errors[0].extensions.code).toBe("BAD_REQUEST");
}, 30_000);

test("the PDF, read by pdftotext: header, controls, totals that match the log, chart, tables and page numbers", async () => {
  const { bytes, record } = await report({ template: "AUTHENTICATION", format: "PDF" });
  expect(bytes.subarray(0, 5).toString()).toBe("%PDF-");
  const file = path.join(exportDir, "read-back.pdf");
  fs.writeFileSync(file, bytes);
  const info = execFileSync("pdfinfo", [file], { encoding: "utf8" });
  const pages = Number(/Pages:\s+(\d+)/.exec(info)![1]);
  expect(pages).toBeGreaterThanOrEqual(1);
  const text = execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
  const body = JSON.parse((await report({ template: "AUTHENTICATION", format: "JSON" })).bytes.toString("utf8"));
  expect(text).toContain("Authentication activity report");
  expect(text).toContain("Period: 2024-03-01 to 2024-03-31 (UTC, inclusive; all times are UTC)");
  expect(text).toContain(`by ${auditorEmail}`);
  expect(text).toMatch(/Checksum: SHA-256 [0-9a-f]{64}/);
  expect(text).toContain(record.manifest.reportChecksum);
  for (const id of ["CC6.1", "CC6.2", "CC6.3", "CC7.2"]) expect(text).toContain(`SOC 2 ${id}`);
  expect(text).toContain("Events per day");
  expect(text).toContain(`Events in scope: ${body.totalEvents}`);
  const [allProviders] = await sql<{ ok: string; failed: string }>(
    `SELECT count(*) FILTER (WHERE event_type = 'auth.login.success') AS ok, count(*) FILTER (WHERE event_type = 'auth.login.failed') AS failed
       FROM audit_events WHERE ${IN_PERIOD}`,
  );
  expect(text).toMatch(new RegExp(`All providers\\s+${allProviders.ok}\\s+${allProviders.failed}`));
  expect(text).toContain("Failed sign-ins by reason");
  expect(text).toContain("invalid_password");
  for (let page = 1; page <= pages; page++) expect(text).toContain(`Page ${page} of ${pages}`);
  // One text page per PDF page (form feeds separate them).
  expect(text.split("\f").filter((chunk) => chunk.trim()).length).toBe(pages);
}, 30_000);

test("the users and providers parameters narrow every figure to their events, as SQL with the same conditions", async () => {
  const [busiest] = await sql<{ id: string }>(
    `SELECT user_id AS id FROM audit_events WHERE ${IN_PERIOD} AND user_id IS NOT NULL AND event_type LIKE 'auth.%'
      GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
  );
  for (const narrowed of [{ providers: ["okta"] }, { userIds: [busiest.id] }]) {
    const body = JSON.parse((await report({ template: "AUTHENTICATION", format: "JSON", ...narrowed })).bytes.toString("utf8"));
    const condition = "providers" in narrowed ? `provider = 'okta'` : `user_id = '${busiest.id}'`;
    const [expected] = await sql<{ scope: string; ok: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE event_type LIKE 'auth.%') AS scope,
              count(*) FILTER (WHERE event_type = 'auth.login.success') AS ok,
              count(*) FILTER (WHERE event_type = 'auth.login.failed') AS failed
         FROM audit_events WHERE ${IN_PERIOD} AND ${condition}`,
    );
    expect({ narrowed, filters: body.filters }).toMatchObject({ narrowed, filters: narrowed });
    expect({ narrowed, total: body.totalEvents }).toEqual({ narrowed, total: Number(expected.scope) });
    const byProvider = tableOf(body, "Sign-ins by outcome and provider").rows;
    expect(byProvider[byProvider.length - 1]).toEqual(["All providers", Number(expected.ok), Number(expected.failed)]);
  }
}, 30_000);

test("every listing table honours REPORT_MAX_ROWS and says so when it cuts: activity by user, groups, role changes", async () => {
  const build = (template: "user_activity" | "custom" | "access_audit", maxRows: number) =>
    buildReport(
      new ReportRepository(app.runtime.sequelize),
      { template, ...PERIOD, userIds: [], providers: [], eventTypes: [], groupBy: "user", columns: ["timestamp", "eventType"] },
      { generatedBy: "reports@corp.test", generatedAt: new Date(), maxRows },
    );
  const [people] = await sql<{ n: string }>(
    `SELECT count(DISTINCT coalesce(user_email, '(no user)')) AS n FROM audit_events WHERE ${IN_PERIOD}`,
  );
  const [roleChanges] = await sql<{ n: string }>(
    `SELECT count(*) AS n FROM audit_events WHERE ${IN_PERIOD} AND event_type LIKE 'user.roles.%'`,
  );
  expect(Number(people.n)).toBeGreaterThan(2);
  expect(Number(roleChanges.n)).toBeGreaterThan(1);
  const cut = (total: number) => ({ total, note: `Lists the first 1 of ${total} rows; the export of the same period has them all.` });

  const activity = await build("user_activity", 1);
  expect(tableOf(activity, "Activity by user")).toMatchObject({ rows: [expect.any(Array)], ...cut(Number(people.n)) });
  expect(tableOf(activity, "Role changes")).toMatchObject({ rows: [expect.any(Array)], ...cut(Number(roleChanges.n)) });
  const custom = await build("custom", 1);
  expect(tableOf(custom, "Events by user")).toMatchObject({ rows: [expect.any(Array)], ...cut(Number(people.n)) });
  expect(tableOf(await build("access_audit", 1), "Role changes")).toMatchObject({
    rows: [expect.any(Array)],
    ...cut(Number(roleChanges.n)),
  });
  // Under the limit nothing is cut and nothing is said.
  expect(tableOf(await build("user_activity", 1000), "Activity by user")).toMatchObject({ total: Number(people.n), note: null });
  expect(tableOf(await build("user_activity", 1000), "Activity by user").rows).toHaveLength(Number(people.n));
}, 30_000);
