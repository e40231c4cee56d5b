/**
 * The tamper matrix: every kind of tampering with an archived month (an altered line, an altered
 * manifest, a truncated gzip, a corrupt gzip, a missing file, a file from another month, a checkpoint
 * re-signed with another key) × every surface that reads archives (GraphQL restore, search and chain
 * verification; the CLI's `audit verify --json`). Each answers evidence, never an internal error: a
 * CONFLICT `archive_tampered` naming the archive and the first bad event or byte range, or a broken
 * chain naming the same. Then a clean restore brings the month back with its chain links, verified
 * against its archives and signed checkpoint, and a release removes them and counts them.
 *
 * The CLI runs from dist/ (`npm run build` first, as `npm test` does).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Client } from "pg";
import { generateSignerKey, parseSignerKey, signNote } from "../../src/audit/retention/signed-note";
import { CLI } from "../helpers/cli";
import { redisUrl } from "../helpers/database-urls";
import { createUser } from "../helpers/fixtures";
import { graphqlClient, type Gql, type Json } from "../helpers/graphql";
import { seedMonth } from "../helpers/retention";
import { startTestApp, type TestApp } from "../helpers/test-app";

jest.setTimeout(240_000);

let app: TestApp;
let superuser: Client;
let dataDir: string;
let admin: Gql;
let auditor: Gql;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-tamper-"));
  app = await startTestApp({ env: { DATA_DIR: dataDir, RATE_LIMIT_REQUESTS: "0" } });
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
  const services = app.runtime.services;
  admin = graphqlClient(app, (await createUser(services, { role: "admin" })).key);
  auditor = graphqlClient(app, (await createUser(services, { role: "auditor" })).readKey);
  await services.retention.updateSettings({
    databaseDays: 30,
    defaultTier: "extended",
    categoryTiers: [{ pattern: "auth.*", tier: "compliance" }],
  });
  await seedMonth(superuser, "2024-01", 12);
  await seedMonth(superuser, "2024-02", 8);
  await services.audit.chainCommitted();
  const outcome = await services.retention.run(new Date("2024-04-15T00:00:00Z"));
  expect(outcome?.moved.map((month) => month.month)).toEqual(["2024-01", "2024-02"]);
}, 120_000);

afterAll(async () => {
  await superuser?.end();
  await app?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const archiveDir = () => app.runtime.config.retention.archiveDir;
const JANUARY = "2024/01/audit-2024-01-extended.jsonl.gz";
const file = (key: string) => path.join(archiveDir(), key);

const RESTORE = `mutation { restoreAuditArchive(month: "2024-01") { month rows } }`;
const RELEASE = `mutation { releaseAuditArchive(month: "2024-01") { month rows } }`;
const SEARCH = `query($ids: [ID!]!) { auditArchiveSearch(archiveIds: $ids, first: 100) { nodes { id } scanned } }`;
const VERIFY = `{ auditChainVerification { ok checked firstBroken { kind seq eventId message archive byteRange } } }`;

async function januaryIds(): Promise<string[]> {
  return (await app.runtime.services.retention.archives()).filter((archive) => archive.manifest.month === "2024-01").map((a) => a.id);
}

/** The CLI, run without blocking this process (the service under test answers in it meanwhile). */
async function cliVerify(extra: string[] = []) {
  const env = {
    ...process.env,
    DATABASE_URL: app.database.url,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: app.runtime.config.redisPrefix,
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
  };
  const child = spawn(process.execPath, [CLI, "audit", "verify", ...extra, "--json"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let [stdout, stderr] = ["", ""];
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { status, stdout, stderr, json: JSON.parse(stdout.trim()) as Json };
}

type Tamper = {
  kind: string;
  /** Changes the store or the database; returns how to undo it. */
  apply: () => Promise<() => Promise<void>>;
  /** What the finding names: an event (and its line), or bytes of the file. */
  names: "event" | "bytes" | "event or bytes" | "archive" | "checkpoint";
  /** Search reads archives only: a checkpoint is not its business. */
  searchRefused: boolean;
};

function replaceFile(key: string, bytes: (original: Buffer) => Buffer | null) {
  return async () => {
    const original = fs.readFileSync(file(key));
    const next = bytes(original);
    if (next === null) fs.rmSync(file(key));
    else fs.writeFileSync(file(key), next);
    return async () => fs.writeFileSync(file(key), original);
  };
}

const TAMPERS: Tamper[] = [
  {
    kind: "altered line",
    apply: replaceFile(JANUARY, (original) => gzipSync(Buffer.from(gunzipSync(original).toString("utf8").replace("Old", "0ld")))),
    names: "event",
    searchRefused: true,
  },
  {
    kind: "altered manifest",
    apply: replaceFile(`${JANUARY}.manifest.json`, (original) => {
      const manifest = JSON.parse(original.toString("utf8"));
      return Buffer.from(JSON.stringify({ ...manifest, rows: manifest.rows - 1 }, null, 2));
    }),
    names: "archive",
    searchRefused: true,
  },
  {
    kind: "truncated gzip",
    apply: replaceFile(JANUARY, (original) => original.subarray(0, Math.floor(original.length / 2))),
    names: "bytes",
    searchRefused: true,
  },
  {
    kind: "corrupt gzip",
    apply: replaceFile(JANUARY, (original) => {
      const copy = Buffer.from(original);
      const at = Math.floor(copy.length / 2);
      copy[at] ^= 0xff;
      return copy;
    }),
    names: "event or bytes",
    searchRefused: true,
  },
  { kind: "missing file", apply: replaceFile(JANUARY, () => null), names: "archive", searchRefused: true },
  {
    kind: "file from another month",
    apply: replaceFile(JANUARY, () => fs.readFileSync(file("2024/02/audit-2024-02-extended.jsonl.gz"))),
    names: "event",
    searchRefused: true,
  },
  {
    kind: "checkpoint re-signed with another key",
    apply: async () => {
      const [row] = (await superuser.query("SELECT month, note FROM audit_checkpoints WHERE month = '2024-01-01'")).rows;
      const text = row.note.slice(0, row.note.lastIndexOf("\n\n") + 1);
      const forged = signNote(text, parseSignerKey(generateSignerKey(app.runtime.config.retention.checkpointOrigin)));
      await superuser.query("UPDATE audit_checkpoints SET note = $1 WHERE month = '2024-01-01'", [forged]);
      return async () => {
        await superuser.query("UPDATE audit_checkpoints SET note = $1 WHERE month = '2024-01-01'", [row.note]);
      };
    },
    names: "checkpoint",
    searchRefused: false,
  },
];

function expectNamed(details: Json, names: Tamper["names"]) {
  if (names === "event") expect(details).toMatchObject({ eventId: expect.any(String), seq: expect.any(String) });
  if (names === "bytes") expect(details.bytes).toMatch(/^\d+-\d+$/);
  if (names === "event or bytes") expect(details.eventId ?? details.bytes).toEqual(expect.any(String));
}

describe.each(TAMPERS)("$kind", (tamper) => {
  let undo: () => Promise<void>;
  beforeAll(async () => {
    expect((await auditor.ok(VERIFY)).auditChainVerification.ok).toBe(true);
    undo = await tamper.apply();
  });
  afterAll(async () => {
    await undo();
    expect((await auditor.ok(VERIFY)).auditChainVerification).toMatchObject({ ok: true, firstBroken: null });
  });

  test("GraphQL restore: a CONFLICT naming the archive (or checkpoint) and the first bad event or bytes; nothing is loaded", async () => {
    const error = await admin.fail(RESTORE);
    expect(error.extensions).toMatchObject({ code: "CONFLICT", restError: "archive_tampered" });
    const details = error.extensions.details;
    expect(details.archive.month).toBe("2024-01");
    if (tamper.names === "checkpoint") {
      expect(details.kind).toBe("checkpoint");
      expect(error.message).toMatch(/checkpoint of 2024-01 is rejected/);
    } else {
      expect(details.archive.storageKey).toBe(JANUARY);
      expect(error.message).toContain(JANUARY);
      expectNamed(details, tamper.names);
    }
    expect((await superuser.query("SELECT to_regclass('audit_events_y2024m01') IS NULL AS gone")).rows[0].gone).toBe(true);
    expect((await superuser.query("SELECT state FROM audit_retention_months WHERE month = '2024-01-01'")).rows[0].state).toBe("dropped");
  });

  test("GraphQL search by an auditor: the same domain error (a checkpoint is not search's business)", async () => {
    const ids = await januaryIds();
    if (!tamper.searchRefused) {
      expect((await auditor.ok(SEARCH, { ids })).auditArchiveSearch.nodes).toHaveLength(12);
      return;
    }
    const error = await auditor.fail(SEARCH, { ids });
    expect(error.extensions).toMatchObject({ code: "CONFLICT", restError: "archive_tampered" });
    expect(error.extensions.details.archive.storageKey).toBe(JANUARY);
    expectNamed(error.extensions.details, tamper.names);
  });

  test("GraphQL verification: a broken chain at the first broken link, naming the archive", async () => {
    const { auditChainVerification: report } = await auditor.ok(VERIFY);
    expect(report.ok).toBe(false);
    if (tamper.names === "checkpoint") {
      expect(report.firstBroken).toMatchObject({ kind: "altered", message: expect.stringMatching(/month 2024-01: checkpoint rejected/) });
      return;
    }
    expect(report.firstBroken).toMatchObject({
      kind: tamper.kind === "missing file" ? "deleted" : "altered",
      archive: JANUARY,
      message: expect.stringContaining(JANUARY),
    });
    if (tamper.names === "event") expect(report.firstBroken).toMatchObject({ eventId: expect.any(String), seq: expect.any(String) });
    if (tamper.names === "bytes") expect(report.firstBroken.byteRange).toMatch(/^\d+-\d+$/);
  });

  test("CLI `audit verify --json`: exit 1 and the broken-chain report", async () => {
    const { status, json, stderr } = await cliVerify();
    expect({ status, stderr }).toEqual({ status: 1, stderr: "" });
    expect(json.ok).toBe(false);
    if (tamper.names !== "checkpoint") expect(json.firstBroken).toMatchObject({ archive: JANUARY });
    else expect(json.firstBroken.message).toMatch(/checkpoint rejected/);
  });
});

test("`audit verify --checkpoint` on a missing file: exit 2 and one clear line, nothing on stderr", async () => {
  const missing = path.join(dataDir, "no-such-checkpoint");
  const { status, stdout, stderr, json } = await cliVerify(["--checkpoint", missing]);
  expect({ status, stderr }).toEqual({ status: 2, stderr: "" });
  expect(stdout.trim().split("\n")).toHaveLength(1);
  expect(json).toEqual({ error: `--checkpoint ${missing}: no such file` });
});

test("a clean restore brings events back with their chain links, verified; release removes them and counts them", async () => {
  const events = `{ auditEvents(filter: { from: "2024-01-01", to: "2024-01-31" }, first: 100) { nodes { id seq prevHash hash } } }`;
  expect((await admin.ok(RESTORE)).restoreAuditArchive).toEqual({ month: "2024-01", rows: 12 });
  const nodes = (await auditor.ok(events)).auditEvents.nodes as { seq: string | null; prevHash: string | null; hash: string | null }[];
  expect(nodes).toHaveLength(12);
  for (const node of nodes)
    expect(node).toMatchObject({ seq: expect.stringMatching(/^\d+$/), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  const [checkpoint] = (
    await superuser.query(
      "SELECT tree_size::text AS seq, encode(root_hash, 'hex') AS hash FROM audit_checkpoints WHERE month = '2024-01-01'",
    )
  ).rows;
  expect(nodes.find((node) => node.seq === checkpoint.seq)?.hash).toBe(checkpoint.hash);
  expect((await auditor.ok(VERIFY)).auditChainVerification).toMatchObject({ ok: true, firstBroken: null });
  expect((await cliVerify()).json).toMatchObject({ ok: true });

  // A restored event altered behind the application: verification compares it with its archive.
  await superuser.query("ALTER TABLE audit_events DISABLE TRIGGER USER");
  try {
    await superuser.query(
      "UPDATE audit_events SET user_email = 'someone@else.test' WHERE id = (SELECT id FROM audit_events_y2024m01 ORDER BY occurred_at LIMIT 1)",
    );
  } finally {
    await superuser.query("ALTER TABLE audit_events ENABLE TRIGGER USER");
  }
  const broken = (await auditor.ok(VERIFY)).auditChainVerification;
  expect(broken.ok).toBe(false);
  expect(broken.firstBroken).toMatchObject({ kind: "altered", eventId: expect.any(String) });

  expect((await admin.ok(RELEASE)).releaseAuditArchive).toEqual({ month: "2024-01", rows: 12 });
  const links = await superuser.query(
    "SELECT count(*)::int AS n FROM audit_chain WHERE occurred_at >= '2024-01-01' AND occurred_at < '2024-02-01'",
  );
  expect(links.rows[0].n).toBe(0);
  expect((await auditor.ok(VERIFY)).auditChainVerification).toMatchObject({ ok: true, firstBroken: null });
});
