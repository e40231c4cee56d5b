/**
 * Audit exports end to end, through GraphQL and the real worker: each format parses back (with
 * independent parsers) to exactly the events the audit search shows for the same filter, the manifest's
 * checksums match the file, an empty range is a valid empty export, bad filters are refused, download
 * URLs work for their user only and only until they expire, expired files are removed, and every step
 * is itself in the audit log.
 */
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { parse as parseCsv } from "csv-parse/sync";
import yauzl from "yauzl";
import type { AuditEventType, Severity } from "../../src/audit/log/audit.catalogue";
import { CSV_COLUMNS, csvRecord } from "../../src/audit/exports/export-formats";
import { AuditExportService } from "../../src/audit/exports/export.service";
import { DownloadSigner } from "../../src/audit/exports/signed-url";
import { SecretBox } from "../../src/platform/security/secret-box";
import { createLogger } from "../../src/platform/common/logger";
import { client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

let app: TestApp;
let exportDir: string;
const PASSWORD = "a long enough password";
let auditor: { id: string; email: string; token: string };
let otherAuditor: { id: string; email: string; token: string };
const alice = { id: randomUUID(), email: "alice@example.test" };

/** Field values a CSV writer gets wrong: quotes, commas, line breaks, non-ASCII, and spreadsheet formulas. */
const AWKWARD = [
  'He said "hello", then left',
  "line one\nline two\r\nline three",
  "Zoë 日本語 🎉 naïve café",
  '=HYPERLINK("http://evil.example","click")',
  "+1+2",
  "-2+3",
  "@SUM(A1:A2)",
  "\tindented",
  "\rreturn first",
  "comma, only",
  "back\\slash 'apostrophe' $1",
];

const JANUARY = { from: "2024-01-01", to: "2024-01-31" };

const logLines: string[] = [];

beforeAll(async () => {
  exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-exports-"));
  app = await startTestApp({
    env: { EXPORT_DIR: exportDir, EXPORT_BATCH_ROWS: "100" },
    roles: { workers: true },
    // Errors and warnings kept, to check that a download the client cuts off is not one.
    logger: createLogger("warn", { write: (line: string) => void logLines.push(line) }),
  });
  const { services, sequelize } = app.runtime;
  const signIn = async (role: string) => {
    const user = await services.users.create({ email: `${role}-${randomUUID()}@example.test`, role, password: PASSWORD });
    const login = await client(app.url).post("/auth/login", { email: user.email, password: PASSWORD });
    return { id: user.id, email: user.email, token: login.body.access_token as string };
  };
  auditor = await signIn("auditor");
  otherAuditor = await signIn("auditor");
  // 250 events in January 2024 (more than two export batches), the awkward values among them, and some outside the month.
  const types: AuditEventType[] = ["auth.login.success", "auth.login.failed", "user.updated", "provider.updated"];
  await sequelize.transaction(async (transaction) => {
    for (let i = 0; i < 260; i++) {
      const inJanuary = i < 250;
      const day = inJanuary ? 1 + (i % 31) : 1 + (i % 28);
      const month = inJanuary ? "01" : "02";
      const awkward = AWKWARD[i % AWKWARD.length];
      await services.repositories.audit.append(
        {
          id: randomUUID(),
          timestamp: new Date(
            `2024-${month}-${String(day).padStart(2, "0")}T${String(i % 24).padStart(2, "0")}:00:00.${String(i % 1000).padStart(3, "0")}Z`,
          ),
          eventType: types[i % types.length],
          severity: (i % types.length === 1 ? "warning" : "info") as Severity,
          userId: i % 5 === 0 ? null : alice.id,
          userEmail: i % 5 === 0 ? null : alice.email,
          provider: i % 3 === 0 ? "okta" : null,
          action: i % 2 ? awkward : null,
          resourceType: i % 4 === 2 ? "user" : null,
          resourceId: i % 4 === 2 ? alice.id : null,
          resourceLabel: i % 4 === 2 ? awkward : null,
          ipAddress: i % 7 === 0 ? null : `10.0.${i % 4}.${i % 250}`,
          userAgent: awkward,
          sessionId: null,
          requestId: `seed-${i}`,
          changes: i % 4 === 2 ? { name: { old: awkward, new: `${awkward} (2)` } } : null,
          error: i % types.length === 1 ? awkward : null,
        },
        transaction,
      );
    }
  });
  await services.audit.chainCommitted();
}, 60_000);

afterAll(async () => {
  await app?.stop();
  fs.rmSync(exportDir, { recursive: true, force: true });
});

const as = (user: { token: string }) => client(app.url, { authorization: `Bearer ${user.token}` });

const EXPORT_FIELDS = `id kind format status rowsWritten progress fileName fileBytes manifest error expiresAt`;

async function requestExport(filter: Record<string, unknown>, format: string, user = auditor) {
  const response = await as(user).graphql(
    `mutation ($input: AuditExportInput!) { createAuditExport(input: $input) { ${EXPORT_FIELDS} } }`,
    { input: { filter, format } },
  );
  return response.body;
}

async function finished(id: string, user = auditor): Promise<any> {
  return eventually(
    async () => {
      const { body } = await as(user).graphql(`query ($id: ID!) { auditExport(id: $id) { ${EXPORT_FIELDS} } }`, { id });
      const record = body.data.auditExport;
      return (record.status === "COMPLETED" || record.status === "FAILED") && record;
    },
    { what: `export ${id} to finish`, timeout: 20_000 },
  );
}

async function exportOf(filter: Record<string, unknown>, format: string) {
  const { data, errors } = await requestExport(filter, format);
  expect(errors).toBeUndefined();
  const record = await finished(data.createAuditExport.id);
  expect(record.status).toBe("COMPLETED");
  const file = await download(record.id);
  expect(file.status).toBe(200);
  return { record, bytes: file.bytes, text: gunzipSync(file.bytes).toString("utf8") };
}

async function downloadUrl(id: string, user = auditor): Promise<string> {
  const { body } = await as(user).graphql(`mutation ($id: ID!) { createAuditExportDownloadUrl(id: $id) { url expiresAt } }`, { id });
  expect(body.errors).toBeUndefined();
  return body.data.createAuditExportDownloadUrl.url;
}

async function download(id: string, user = auditor, url?: string) {
  const response = await fetch(`${app.url}${url ?? (await downloadUrl(id, user))}`, { headers: { authorization: `Bearer ${user.token}` } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, bytes, headers: response.headers };
}

/** Every event the audit search shows for a filter, oldest first, as GraphQL renders them. */
async function searched(filter: Record<string, unknown>): Promise<any[]> {
  const events: any[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    const { body } = await as(auditor).graphql(
      `query ($filter: AuditEventFilter, $after: String) { auditEvents(filter: $filter, first: 100, after: $after) {
        nodes { id seq timestamp eventType severity user { id email } provider action resource { type id label } ipAddress
                userAgent sessionId requestId changes error prevHash hash }
        pageInfo { hasNextPage endCursor } } }`,
      { filter, after },
    );
    events.push(...body.data.auditEvents.nodes);
    if (!body.data.auditEvents.pageInfo.hasNextPage) break;
    after = body.data.auditEvents.pageInfo.endCursor;
  }
  return events.reverse();
}

/** A CSV cell back to its text: the apostrophe that neutralised a formula stripped, empty as null. */
function cellValue(text: string): string | null {
  if (text === "") return null;
  return /^'[=+\-@\t\r]/.test(text) ? text.slice(1) : text;
}

/** A CSV row back to an event: the leading apostrophe that neutralised a formula is the only change to strip. */
function eventOfCsv(record: Record<string, string>): Record<string, unknown> {
  const value = (name: string) => cellValue(record[name]);
  return {
    id: value("id"),
    seq: value("seq"),
    timestamp: value("timestamp"),
    eventType: value("eventType"),
    severity: value("severity"),
    user: value("userId") || value("userEmail") ? { id: value("userId"), email: value("userEmail") ?? "" } : null,
    provider: value("provider"),
    action: value("action"),
    resource: value("resourceType") ? { type: value("resourceType"), id: value("resourceId") ?? "", label: value("resourceLabel") } : null,
    ipAddress: value("ipAddress"),
    userAgent: value("userAgent"),
    sessionId: value("sessionId"),
    requestId: value("requestId"),
    changes: value("changes") === null ? null : JSON.parse(value("changes") as string),
    error: value("error"),
    prevHash: value("prevHash"),
    hash: value("hash"),
  };
}

describe("each format holds exactly the events the search shows", () => {
  test("JSONL, JSON and CSV of January parse back to the 250 events of January, awkward values intact", async () => {
    const expected = await searched(JANUARY);
    expect(expected).toHaveLength(250);
    expect(expected.every((event) => event.seq !== null && event.hash !== null)).toBe(true);

    const jsonl = await exportOf(JANUARY, "JSONL");
    expect(jsonl.text.endsWith("\n")).toBe(true);
    expect(
      jsonl.text
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual(expected);

    const json = await exportOf(JANUARY, "JSON");
    expect(JSON.parse(json.text)).toEqual(expected);

    const csv = await exportOf(JANUARY, "CSV");
    const records: Record<string, string>[] = parseCsv(csv.text, { columns: true, relax_column_count: false });
    expect(Object.keys(records[0])).toEqual([...CSV_COLUMNS]);
    expect(records.map(eventOfCsv)).toEqual(expected);
    // PostgreSQL renders each record; byte for byte, it is what csvRecord writes for the same values
    // (the changes as PostgreSQL prints their JSON, which JSON.stringify would space differently).
    const csvValues = (event: any, index: number) => [
      ...[event.id, event.seq, event.timestamp, event.eventType, event.severity, event.user?.id, event.user?.email || null],
      ...[event.provider, event.action, event.resource?.type, event.resource?.id || null, event.resource?.label, event.ipAddress],
      ...[event.userAgent, event.sessionId, event.requestId, cellValue(records[index].changes), event.error, event.prevHash, event.hash],
    ];
    expect(csv.text).toBe(csvRecord(CSV_COLUMNS) + expected.map((event, index) => csvRecord(csvValues(event, index))).join(""));
    // RFC 4180: CRLF record ends, quoted fields keep their own line breaks.
    expect(csv.text.startsWith(`${CSV_COLUMNS.join(",")}\r\n`)).toBe(true);
    expect(csv.text).toContain('"line one\nline two\r\nline three"');
    expect(csv.text).toContain('"He said ""hello"", then left"');
    // Formulas are neutralised: no cell starts with = + - @ as a spreadsheet would read it.
    const cells = records.flatMap((record) => Object.values(record));
    expect(cells.filter((cell) => /^[=+@]/.test(cell) || /^-[^0-9]/.test(cell) || /^-\d+\+/.test(cell))).toEqual([]);
    expect(cells).toContain(`'=HYPERLINK("http://evil.example","click")`);
    expect(cells).toContain("'@SUM(A1:A2)");
    expect(cells).toContain("Zoë 日本語 🎉 naïve café");
  }, 60_000);

  test("the filters of the search apply unchanged: event types, user, provider, IP wildcard, free text (quotes and all)", async () => {
    const filter = { ...JANUARY, eventTypes: ["auth.*"], userIds: [alice.id], ipAddress: "10.0.1.*", search: "zoë" };
    const expected = await searched(filter);
    expect(expected.length).toBeGreaterThan(0);
    const { text } = await exportOf(filter, "JSONL");
    const lines =
      text === ""
        ? []
        : text
            .trimEnd()
            .split("\n")
            .map((line) => JSON.parse(line));
    expect(lines).toEqual(expected);
    const providerOnly = await searched({ ...JANUARY, providers: ["okta"] });
    expect(providerOnly.length).toBeGreaterThan(0);
    expect(JSON.parse((await exportOf({ ...JANUARY, providers: ["okta"] }, "JSON")).text)).toEqual(providerOnly);
    // COPY takes no parameters, so filter values are written into its SQL as literals: quotes, backslashes
    // and placeholders in them must stay plain text.
    const hostile = { ...JANUARY, search: "slash 'apostrophe' $1" };
    const hostileExpected = await searched(hostile);
    expect(hostileExpected.length).toBeGreaterThan(0);
    expect(JSON.parse((await exportOf(hostile, "JSON")).text)).toEqual(hostileExpected);
  }, 60_000);

  test("the manifest: row count, range, filters, generator, and SHA-256 of the data and of the file", async () => {
    const { record, bytes, text } = await exportOf(JANUARY, "JSONL");
    const manifest = record.manifest;
    expect(manifest).toMatchObject({
      kind: "audit-events-export",
      id: record.id,
      format: "jsonl",
      compression: "gzip",
      rows: 250,
      filters: { from: JANUARY.from, to: JANUARY.to },
      range: { from: "2024-01-01T00:00:00.000Z", before: "2024-02-01T00:00:00.000Z" },
      generatedBy: { id: auditor.id, email: auditor.email },
    });
    expect(record.rowsWritten).toBe(250);
    expect(record.progress).toBe(1);
    expect(manifest.dataSha256).toBe(createHash("sha256").update(text).digest("hex"));
    expect(manifest.fileSha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(manifest.fileBytes).toBe(bytes.length);
    // The manifest also sits beside the file, for whoever holds the folder.
    const onDisk = JSON.parse(fs.readFileSync(path.join(exportDir, `${record.fileName}.manifest.json`), "utf8"));
    expect(onDisk).toEqual(manifest);
  }, 60_000);

  test("zip instead of gzip: the data file and its manifest inside, read back with yauzl", async () => {
    const expected = await searched(JANUARY);
    const { data } = await (async () =>
      (
        await as(auditor).graphql(`mutation ($input: AuditExportInput!) { createAuditExport(input: $input) { id } }`, {
          input: { filter: JANUARY, format: "JSONL", compression: "ZIP" },
        })
      ).body)();
    const record = await finished(data.createAuditExport.id);
    expect(record.fileName).toBe(`audit-export-${record.id}.jsonl.zip`);
    const file = await download(record.id);
    expect(file.headers.get("content-type")).toBe("application/zip");
    expect(record.manifest.fileSha256).toBe(createHash("sha256").update(file.bytes).digest("hex"));
    const zip = await yauzl.fromBufferPromise(file.bytes, { lazyEntries: true });
    const entries = new Map<string, Buffer>();
    await new Promise<void>((resolve, reject) => {
      zip.on("entry", async (entry: yauzl.Entry) => {
        try {
          const chunks: Buffer[] = [];
          for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
          entries.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        } catch (error) {
          reject(error);
        }
      });
      zip.on("end", resolve);
      zip.on("error", reject);
      zip.readEntry();
    });
    expect([...entries.keys()]).toEqual([`audit-export-${record.id}.jsonl`, "manifest.json"]);
    const content = entries.get(`audit-export-${record.id}.jsonl`)!;
    expect(
      content
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual(expected);
    const inner = JSON.parse(entries.get("manifest.json")!.toString("utf8"));
    expect(inner.dataSha256).toBe(createHash("sha256").update(content).digest("hex"));
    expect(inner).toEqual({ ...record.manifest, file: `audit-export-${record.id}.jsonl`, fileSha256: undefined, fileBytes: undefined });
  }, 60_000);

  test("a range with no events is a valid, empty export in every format", async () => {
    const empty = { from: "2023-06-01", to: "2023-06-30" };
    const jsonl = await exportOf(empty, "JSONL");
    expect(jsonl.text).toBe("");
    expect(jsonl.record.manifest.rows).toBe(0);
    expect(JSON.parse((await exportOf(empty, "JSON")).text)).toEqual([]);
    const csv = await exportOf(empty, "CSV");
    expect(parseCsv(csv.text, { columns: true })).toEqual([]);
    expect(csv.text).toBe(`${CSV_COLUMNS.join(",")}\r\n`);
  }, 60_000);
});

describe("what is refused", () => {
  test("unknown or malformed filters are refused, never ignored", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ eventTypes: ["auth.login.hacked"] }, "not a known event type"],
      [{ ipAddress: "10.1.x.*" }, "ipAddress"],
      [{ from: "2024-02-30" }, "not a valid date"],
      [{ userIds: ["not-a-uuid"] }, "not a valid id"],
      [{ severities: ["loud"] }, "not known"],
      [{ from: "2024-02-01", to: "2024-01-01" }, "from must be before to"],
    ];
    for (const [filter, message] of cases) {
      const body = await requestExport(filter, "CSV");
      expect({ filter, code: body.errors?.[0]?.extensions?.code }).toEqual({ filter, code: "BAD_REQUEST" });
      expect(body.errors[0].message).toContain(message);
    }
    // A filter field the search does not know is a GraphQL validation error.
    const unknownField = await requestExport({ colour: "red" }, "CSV");
    expect(unknownField.errors[0].message).toMatch(/colour/);
    const unknownFormat = await requestExport({}, "XLSX");
    expect(unknownFormat.errors[0].message).toMatch(/XLSX/);
    const { rows } = await app.runtime.services.repositories.exports
      .listFor(auditor.id, { kind: "events", limit: 100 })
      .then((records) => ({ rows: records.filter((record) => record.status === "failed") }));
    expect(rows).toEqual([]);
  });

  test("members cannot export; nobody sees another user's exports", async () => {
    const member = await app.runtime.services.users.create({
      email: `member-${randomUUID()}@example.test`,
      role: "member",
      password: PASSWORD,
    });
    const token = (await client(app.url).post("/auth/login", { email: member.email, password: PASSWORD })).body.access_token;
    const refused = await requestExport(JANUARY, "CSV", { token } as typeof auditor);
    expect(refused.errors[0].extensions.code).toBe("FORBIDDEN");
    const { data } = await requestExport(JANUARY, "CSV");
    const other = await as(otherAuditor).graphql(`query ($id: ID!) { auditExport(id: $id) { id } }`, { id: data.createAuditExport.id });
    expect(other.body.errors[0].extensions.code).toBe("NOT_FOUND");
    await finished(data.createAuditExport.id);
  }, 30_000);
});

describe("download through a signed URL", () => {
  test("works for the requester only, and only until it expires; each download is audited", async () => {
    const { data } = await requestExport(JANUARY, "CSV");
    const record = await finished(data.createAuditExport.id);
    const url = await downloadUrl(record.id);
    expect(url).toMatch(new RegExp(`^/exports/${record.id}/download\\?expires=\\d+&signature=[\\w-]+$`));

    expect((await download(record.id, auditor, url)).status).toBe(200);
    // Another auditor with the same URL, and with a URL of their own for someone else's file.
    const stolen = await download(record.id, otherAuditor, url);
    expect(stolen.status).toBe(403);
    expect(JSON.parse(stolen.bytes.toString()).message).toMatch(/not valid for you/);
    const foreign = await as(otherAuditor).graphql(`mutation ($id: ID!) { createAuditExportDownloadUrl(id: $id) { url } }`, {
      id: record.id,
    });
    expect(foreign.body.errors[0].extensions.code).toBe("NOT_FOUND");
    // No credentials at all.
    expect((await fetch(`${app.url}${url}`)).status).toBe(401);
    // A tampered signature or expiry.
    expect((await download(record.id, auditor, url.replace(/expires=\d+/, "expires=9999999999"))).status).toBe(403);
    // A URL signed correctly for this user, but already expired.
    const signer = new DownloadSigner(SecretBox.fromConfig(app.runtime.config).deriveKey("audit-export-download"), 60);
    const old = signer.sign(record.id, auditor.id, Date.now() - 61_000);
    const expired = await download(record.id, auditor, `/exports/${record.id}/download?expires=${old.expires}&signature=${old.signature}`);
    expect(expired.status).toBe(403);
    expect(JSON.parse(expired.bytes.toString()).message).toMatch(/expired/);

    const events = await app.runtime.services.audit.list({ eventTypes: ["audit.export.*"], search: record.id }, { first: 100 });
    const types = events.events.map((event) => event.eventType).sort();
    expect(types).toEqual(["audit.export.completed", "audit.export.downloaded", "audit.export.requested"]);
    const requested = events.events.find((event) => event.eventType === "audit.export.requested")!;
    expect(requested.user).toEqual({ id: auditor.id, email: auditor.email });
    expect(requested.resource).toEqual({ type: "audit_export", id: record.id, label: "CSV export" });
  }, 30_000);

  test("a download the client cuts off midway is no error in the log", async () => {
    const { data } = await requestExport(JANUARY, "CSV");
    const record = await finished(data.createAuditExport.id);
    const url = await downloadUrl(record.id);
    // A file large enough for the client to go away while it is being sent.
    fs.writeFileSync(path.join(exportDir, record.fileName), Buffer.alloc(32 * 1024 * 1024, "a"));
    const before = logLines.length;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(`${app.url}${url}`, { headers: { authorization: `Bearer ${auditor.token}` } }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`));
        response.once("data", () => {
          request.destroy();
          resolve();
        });
      });
      request.on("error", () => undefined);
    });
    // A whole download after it: by its end the server has long seen the first one's connection close.
    const whole = await download(record.id);
    expect(whole.status).toBe(200);
    expect(whole.bytes.length).toBe(32 * 1024 * 1024);
    expect(logLines.slice(before).filter((line) => /unhandled|premature/i.test(line))).toEqual([]);
  }, 30_000);

  test("expired files are removed by the cleanup job, which records it; their URLs stop working", async () => {
    const { data } = await requestExport(JANUARY, "JSON");
    const record = await finished(data.createAuditExport.id);
    const url = await downloadUrl(record.id);
    const file = path.join(exportDir, record.fileName);
    expect(fs.existsSync(file)).toBe(true);
    // The job as scheduled, at a time past this file's expiry.
    const removed = await app.runtime.services.auditExports.expire(new Date(Date.parse(record.expiresAt) + 1000));
    expect(removed).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(`${file}.manifest.json`)).toBe(false);
    const after = await as(auditor).graphql(`query ($id: ID!) { auditExport(id: $id) { status } }`, { id: record.id });
    expect(after.body.data.auditExport.status).toBe("EXPIRED");
    expect((await download(record.id, auditor, url)).status).toBe(409);
    const expiredEvents = await app.runtime.services.audit.list({ eventTypes: ["audit.export.expired"], search: record.id }, { first: 10 });
    expect(expiredEvents.events).toHaveLength(1);
  }, 30_000);
});

test("progress is visible while the export runs", async () => {
  const { services, sequelize, config } = app.runtime;
  // The worker's own code, with the read of each batch after the first held until the test lets it go.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const repository = services.repositories.audit;
  const gated = Object.create(repository) as typeof repository;
  let batches = 0;
  gated.exportBatch = async function* (...args) {
    if (batches++ > 0) await held;
    yield* repository.exportBatch(...args);
  };
  const exporter = new AuditExportService(
    sequelize,
    services.repositories.exports,
    gated,
    services.repositories.reports,
    services.audit,
    { enqueue: async () => undefined, requeue: async () => undefined },
    new DownloadSigner(Buffer.alloc(32), 60),
    config.exports,
  );
  const record = await sequelize.transaction((transaction) =>
    services.repositories.exports.insert(
      {
        id: randomUUID(),
        kind: "events",
        format: "jsonl",
        params: { filter: JANUARY },
        requestedBy: auditor.id,
        requestedByEmail: auditor.email,
        requestedSession: null,
      },
      transaction,
    ),
  );
  const running = exporter.run(record.id);
  const seen = await eventually(
    async () => {
      const { body } = await as(auditor).graphql(`query ($id: ID!) { auditExport(id: $id) { status rowsWritten progress } }`, {
        id: record.id,
      });
      return body.data.auditExport.rowsWritten > 0 && body.data.auditExport;
    },
    { what: "the first rows written", timeout: 10_000, interval: 20 },
  );
  // Part of the first batch of 100 written (progress is reported as rows arrive): a fraction of January's
  // events, and of its days (they are spread over the month).
  expect(seen.status).toBe("RUNNING");
  expect(seen.rowsWritten).toBeGreaterThan(0);
  expect(seen.rowsWritten).toBeLessThanOrEqual(100);
  expect(seen.progress).toBeGreaterThan(0);
  expect(seen.progress).toBeLessThan(1);
  release();
  const done = await running;
  expect(done).toMatchObject({ status: "completed", rowsWritten: 250, progress: 1 });
}, 30_000);

test("a user has at most 5 exports or reports waiting or being written; a sixth request is refused", async () => {
  // Without workers, requests stay queued.
  const idle = await startTestApp({ env: { EXPORT_DIR: exportDir } });
  try {
    const user = await idle.runtime.services.users.create({
      email: `busy-${randomUUID()}@example.test`,
      role: "auditor",
      password: PASSWORD,
    });
    const login = await client(idle.url).post("/auth/login", { email: user.email, password: PASSWORD });
    const api = client(idle.url, { authorization: `Bearer ${login.body.access_token}` });
    const ask = () =>
      api.graphql(`mutation ($input: AuditExportInput!) { createAuditExport(input: $input) { id status } }`, {
        input: { filter: JANUARY, format: "CSV" },
      });
    const answers = await Promise.all(Array.from({ length: 7 }, ask));
    const accepted = answers.filter((answer) => answer.body.data?.createAuditExport?.status === "QUEUED");
    const refused = answers.filter((answer) => answer.body.errors?.[0]?.extensions?.code === "RATE_LIMITED");
    expect([accepted.length, refused.length]).toEqual([5, 2]);
    expect(refused[0].body.errors[0].message).toMatch(/5 exports or reports in progress/);
  } finally {
    await idle.stop();
  }
}, 30_000);
