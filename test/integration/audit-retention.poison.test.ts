/**
 * No input to an archive operation stops the service. A decompression bomb (a small gzip that unpacks
 * to 600 MB of one line) and other poisoned files are placed in the archive store in place of an
 * archive, first with the recorded manifest left as it was, then with the manifests (file and
 * database) rewritten to match the poison, so that only the reader's own bounds (line length, data
 * size) stand between it and the file. Every archive operation (restore, search, verification) is fed
 * every poison, as an administrator and as an auditor: each answers a domain error or a broken chain,
 * and the service keeps answering. One request reading past its archive budget is refused with a 400.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { createGzip, gzipSync } from "node:zlib";
import { Client } from "pg";
import { createUser } from "../helpers/fixtures";
import { graphqlClient, type Gql, type Json } from "../helpers/graphql";
import { seedMonth } from "../helpers/retention";
import { startTestApp, type TestApp } from "../helpers/test-app";

jest.setTimeout(300_000);

const BOMB_BYTES = 600 * 1024 * 1024;

let app: TestApp;
let superuser: Client;
let dataDir: string;
let admin: Gql;
let auditor: Gql;
let bomb: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-poison-"));
  app = await startTestApp({ env: { DATA_DIR: dataDir, RATE_LIMIT_REQUESTS: "0", AUDIT_ARCHIVE_REQUEST_BYTES: String(2 * 1024 * 1024) } });
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
  const services = app.runtime.services;
  admin = graphqlClient(app, (await createUser(services, { role: "admin" })).key);
  auditor = graphqlClient(app, (await createUser(services, { role: "auditor" })).readKey);
  await services.retention.updateSettings({ databaseDays: 30, defaultTier: "compliance", categoryTiers: [] });
  await seedMonth(superuser, "2024-01", 10);
  await services.audit.chainCommitted();
  await services.retention.run(new Date("2024-04-15T00:00:00Z"));
  // 600 MB of one line, compressed as it is made (never held in memory).
  bomb = path.join(dataDir, "bomb.gz");
  const chunk = Buffer.alloc(1024 * 1024, "a");
  await pipeline(
    Readable.from(
      (function* () {
        for (let written = 0; written < BOMB_BYTES; written += chunk.length) yield chunk;
      })(),
    ),
    createGzip({ level: 9 }),
    fs.createWriteStream(bomb),
  );
}, 240_000);

afterAll(async () => {
  await superuser?.end();
  await app?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const KEY = "2024/01/audit-2024-01-compliance.jsonl.gz";
const file = () => path.join(app.runtime.config.retention.archiveDir, KEY);

const event = (fields: Record<string, unknown>) => JSON.stringify(fields);
const POISONS: [string, () => Buffer][] = [
  ["a decompression bomb: 600 MB of one line", () => fs.readFileSync(bomb)],
  ["random bytes", () => createHash("sha512").update("poison").digest()],
  ["an empty file", () => Buffer.alloc(0)],
  ["gzip of text that is not JSON", () => gzipSync("not json\nat all\n")],
  ["gzip of invalid UTF-8", () => gzipSync(Buffer.from([0xff, 0xfe, 0x0a]))],
  [
    "gzip of events with hostile values",
    () =>
      gzipSync(
        [
          event({
            id: "00000000-0000-4000-8000-000000000001",
            seq: "1",
            occurredAt: "2024-01-01T01:00:00Z",
            userId: "not-a-uuid",
            ipAddress: "x",
            hash: "zz",
          }),
          event({ id: 5, seq: "99999999999999999999999", occurredAt: "never" }),
          "[1,2,3]",
        ].join("\n") + "\n",
      ),
  ],
  ["gzip of a huge number of empty lines", () => gzipSync(Buffer.alloc(8 * 1024 * 1024, "\n"))],
];

async function operations(): Promise<{ who: string; answer: () => Promise<Json> }[]> {
  const ids = (await app.runtime.services.retention.archives()).map((archive) => archive.id);
  const search = `query($ids: [ID!]!) { auditArchiveSearch(archiveIds: $ids) { nodes { id } } }`;
  const verify = `{ auditChainVerification { ok firstBroken { kind message archive byteRange } } }`;
  return [
    { who: "admin restores", answer: () => admin.raw(`mutation { restoreAuditArchive(month: "2024-01") { rows } }`).then((r) => r.body) },
    {
      who: "auditor restores",
      answer: () => auditor.raw(`mutation { restoreAuditArchive(month: "2024-01") { rows } }`).then((r) => r.body),
    },
    { who: "admin searches", answer: () => admin.raw(search, { ids }).then((r) => r.body) },
    { who: "auditor searches", answer: () => auditor.raw(search, { ids }).then((r) => r.body) },
    { who: "admin verifies", answer: () => admin.raw(verify).then((r) => r.body) },
    { who: "auditor verifies", answer: () => auditor.raw(verify).then((r) => r.body) },
  ];
}

/**
 * A domain error (never INTERNAL_SERVER_ERROR: CONFLICT for the tampered archive, FORBIDDEN for an
 * auditor's restore, BAD_REQUEST when forged manifests claim more than a request may read) or a
 * broken chain; and the service still answers.
 */
async function expectEvidence(label: string, body: Json) {
  if (body.errors) {
    expect({ label, code: body.errors[0].extensions.code }).toEqual({
      label,
      code: expect.stringMatching(/^(CONFLICT|FORBIDDEN|BAD_REQUEST)$/),
    });
  } else {
    const report = body.data.auditChainVerification;
    expect({ label, ok: report?.ok }).toEqual({ label, ok: false });
    expect(report.firstBroken.archive).toBe(KEY);
  }
  expect((await auditor.ok(`{ me { id } }`)).me.id).toEqual(expect.any(String));
}

test.each(["as stored", "with its manifests rewritten to match"])(
  "every poisoned file fed to every archive operation, %s: evidence each time, and the service stays up",
  async (mode) => {
    const original = fs.readFileSync(file());
    const manifestFile = `${file()}.manifest.json`;
    const originalManifest = fs.readFileSync(manifestFile, "utf8");
    const [row] = (await superuser.query("SELECT id, manifest FROM audit_archives WHERE storage_key = $1", [KEY])).rows;
    try {
      for (const [name, make] of POISONS) {
        const poison = make();
        fs.writeFileSync(file(), poison);
        if (mode !== "as stored") {
          // Someone who can write the store and the database: only the reader's bounds remain.
          const forged = {
            ...row.manifest,
            fileBytes: poison.length,
            fileSha256: createHash("sha256").update(poison).digest("hex"),
            dataBytes: name.includes("bomb") ? BOMB_BYTES : row.manifest.dataBytes,
          };
          fs.writeFileSync(manifestFile, JSON.stringify(forged, null, 2) + "\n");
          await superuser.query("UPDATE audit_archives SET manifest = $1 WHERE id = $2", [JSON.stringify(forged), row.id]);
        }
        for (const { who, answer } of await operations()) await expectEvidence(`${name}: ${who}`, await answer());
      }
    } finally {
      fs.writeFileSync(file(), original);
      fs.writeFileSync(manifestFile, originalManifest);
      await superuser.query("UPDATE audit_archives SET manifest = $1 WHERE id = $2", [JSON.stringify(row.manifest), row.id]);
    }
    expect((await auditor.ok(`{ auditChainVerification { ok } }`)).auditChainVerification.ok).toBe(true);
  },
);

test("the bomb, with manifests claiming its size, is refused by the line bound and costs little memory", async () => {
  const poison = fs.readFileSync(bomb);
  expect(poison.length).toBeLessThan(3 * 1024 * 1024);
  const original = fs.readFileSync(file());
  const manifestFile = `${file()}.manifest.json`;
  const originalManifest = fs.readFileSync(manifestFile, "utf8");
  const [row] = (await superuser.query("SELECT id, manifest FROM audit_archives WHERE storage_key = $1", [KEY])).rows;
  const forged = {
    ...row.manifest,
    fileBytes: poison.length,
    fileSha256: createHash("sha256").update(poison).digest("hex"),
    dataBytes: 1000,
  };
  try {
    fs.writeFileSync(file(), poison);
    fs.writeFileSync(manifestFile, JSON.stringify(forged, null, 2) + "\n");
    await superuser.query("UPDATE audit_archives SET manifest = $1 WHERE id = $2", [JSON.stringify(forged), row.id]);
    const before = process.memoryUsage().rss;
    const error = await admin.fail(`mutation { restoreAuditArchive(month: "2024-01") { rows } }`);
    expect(error.extensions).toMatchObject({ code: "CONFLICT", restError: "archive_tampered", details: { archive: { storageKey: KEY } } });
    expect(error.message).toMatch(/unpacks to more than the 1000 bytes of its manifest|longer than/);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  } finally {
    fs.writeFileSync(file(), original);
    fs.writeFileSync(manifestFile, originalManifest);
    await superuser.query("UPDATE audit_archives SET manifest = $1 WHERE id = $2", [JSON.stringify(row.manifest), row.id]);
  }
});

test("archive reads are budgeted per request: repeated ids count once, aliases add up, past the budget a 400", async () => {
  const [archive] = await app.runtime.services.retention.archives();
  const search = `query($ids: [ID!]!) { auditArchiveSearch(archiveIds: $ids) { nodes { id } } }`;
  // The same id 100 times is one archive read.
  expect((await auditor.ok(search, { ids: Array.from({ length: 100 }, () => archive.id) })).auditArchiveSearch.nodes).toHaveLength(10);
  // Past the request's budget (2 MiB here), aliases of one request are refused: the bytes come from the manifests.
  await superuser.query("UPDATE audit_archives SET manifest = jsonb_set(manifest, '{dataBytes}', '800000') WHERE id = $1", [archive.id]);
  try {
    const aliases = Array.from({ length: 3 }, (_, index) => `a${index}: auditArchiveSearch(archiveIds: $ids) { scanned }`).join(" ");
    const response = await auditor.raw(`query($ids: [ID!]!) { ${aliases} }`, { ids: [archive.id] });
    const refused = response.body.errors.find((error: Json) => error.extensions.code === "BAD_REQUEST");
    expect(refused.extensions.restError).toBe("archive_read_budget_exceeded");
    expect(refused.message).toMatch(/AUDIT_ARCHIVE_REQUEST_BYTES/);
    // The operation's cost counts the bytes too (from the manifests): 10 TB of archives is refused before it runs.
    await superuser.query("UPDATE audit_archives SET manifest = jsonb_set(manifest, '{dataBytes}', '10000000000000') WHERE id = $1", [
      archive.id,
    ]);
    const costly = await auditor.raw(search, { ids: [archive.id] });
    expect(costly.status).toBe(400);
    expect(costly.body.errors[0].extensions.code).toBe("QUERY_TOO_COSTLY");
    const verification = await auditor.raw(`{ auditChainVerification { ok } }`);
    expect(verification.body.errors[0].extensions.code).toBe("QUERY_TOO_COSTLY");
  } finally {
    await superuser.query("UPDATE audit_archives SET manifest = $1 WHERE id = $2", [JSON.stringify(archive.manifest), archive.id]);
  }
});
