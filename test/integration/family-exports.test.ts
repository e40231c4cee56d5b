import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ZipFile } from "yazl";
import { DownloadSigner } from "../../src/audit/exports/signed-url";
import { SecretBox } from "../../src/platform/security/secret-box";
import { apiKeyClient } from "../helpers/http";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { readZip } from "../helpers/zip-entries";

/**
 * sure-cli's `family-exports list`, `show`, `create --apply` and `download --out` replayed as the client
 * sends them (cmd/sure-cli/root/family_exports_cmd.go: X-Api-Key, Accept: application/json, `{}` as the
 * create body, the download following its redirect with the same headers, as Go's client does on one
 * host); the zip's files and manifest; the hostile ways in; and the round trip: the export restored
 * into the empty family of a fresh instance reproduces every table, compared by SQL written here.
 */
jest.setTimeout(180_000);
let app: TestApp;
let fresh: TestApp;
let owner: TestUser;
let cli: ReturnType<typeof apiKeyClient>;
let stranger: TestUser;
const headers = { accept: "application/json" };
/** Family::DataExporter's entries, in its order (we-promise/sure 0252787). */
const UPSTREAM_FILES = [
  "version.txt",
  "accounts.csv",
  "transactions.csv",
  "trades.csv",
  "categories.csv",
  "merchants.csv",
  "rules.csv",
  "attachments.json",
  "all.ndjson",
];
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "family-exports-"));

beforeAll(async () => {
  [app, fresh] = await Promise.all([
    startTestApp({ env: { EXPORT_DIR: path.join(scratch, "a") }, roles: { workers: true } }),
    startTestApp({ env: { EXPORT_DIR: path.join(scratch, "b") } }),
  ]);
  owner = await createUser(app.runtime.services, { role: "admin" });
  stranger = await createUser(app.runtime.services, { role: "admin" });
  cli = apiKeyClient(`${app.url}/api/v1`, owner.key);
  await seed();
});
afterAll(async () => {
  await Promise.all([app?.stop(), fresh?.stop()]);
  fs.rmSync(scratch, { recursive: true, force: true });
});

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

async function ok(response: Promise<{ status: number; body: any }>, status = 201) {
  const answer = await response;
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
}

/** A family with something of every kind: parent and child categories, tags, merchants (one an import created), valuations, transfers, trades. */
async function seed() {
  const checking = await createAccount(app.runtime.services, owner, { name: "Checking", balance: "1500.25" });
  const card = await createAccount(app.runtime.services, owner, { name: 'Visa, "gold"', accountType: "credit_card", balance: "120" });
  const brokerage = await createAccount(app.runtime.services, owner, { name: "Brokerage", accountType: "investment", balance: "0" });
  await createAccount(app.runtime.services, owner, { name: "Euro savings", currency: "EUR", balance: "99.9999" });
  const food = await ok(cli.post("/categories", { category: { name: "Food", color: "#eb5429", icon: "utensils" } }));
  const coffee = await ok(cli.post("/categories", { category: { name: "Coffee", color: "#123456", icon: "coffee", parent_id: food.id } }));
  const morning = await ok(cli.post("/tags", { tag: { name: "morning" } }));
  const work = await ok(cli.post("/tags", { tag: { name: "work, mostly" } }));
  const cafe = await ok(cli.post("/merchants", { merchant: { name: 'Café "Le Nord"' } }));
  for (let i = 0; i < 40; i++) {
    await ok(
      cli.post("/transactions", {
        transaction: {
          account_id: i % 3 === 0 ? card.id : checking.id,
          date: day(-i * 3),
          amount: `${(i * 7.31 + 0.01).toFixed(2)}`,
          name: i % 5 === 0 ? 'Line one\nline two, "quoted"' : `Purchase ${i}`,
          nature: i % 4 === 0 ? "income" : "expense",
          notes: i % 2 ? `note ${i}` : null,
          category_id: i % 2 ? coffee.id : null,
          merchant_id: i % 3 ? cafe.id : null,
          tag_ids: i % 4 === 1 ? [morning.id, work.id] : i % 4 === 2 ? [work.id] : [],
        },
      }),
    );
  }
  const imported = `date,name,amount,merchant\n${day(-5)},Newspaper,-2.5,Corner shop\n`;
  await ok(cli.post("/imports", { raw_file_content: imported, account_id: checking.id, publish: "true" }));
  await app.runtime.services.transactions.createTransfer(owner.actor, {
    fromAccountId: checking.id,
    toAccountId: card.id,
    date: day(-7),
    amount: "300",
    name: "Card payment",
  });
  await ok(cli.post("/valuations", { valuation: { account_id: checking.id, amount: "2000.50", date: day(-10) }, upsert: true }));
  await ok(
    cli.post("/trades", {
      trade: { account_id: brokerage.id, date: day(-30), type: "buy", qty: "10", price: "150.25", ticker: "AAPL|XNAS" },
    }),
  );
  await ok(
    cli.post("/trades", {
      trade: { account_id: brokerage.id, date: day(-3), type: "sell", qty: "4", price: "160.5", ticker: "AAPL|XNAS" },
    }),
  );
  await ok(
    cli.post("/trades", { trade: { account_id: brokerage.id, date: day(-2), type: "buy", qty: "2.5", price: "50", ticker: "MSFT" } }),
  );
}

async function exportDone(client: ReturnType<typeof apiKeyClient>, id: string) {
  for (let attempt = 0; attempt < 300; attempt++) {
    const shown = await client.get(`/family_exports/${id}`, headers);
    if (shown.body?.data?.status === "completed" || shown.body?.data?.status === "failed") return shown.body.data;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the export did not finish");
}

/** GET …/download without following, then the signed URL with the same headers (what Go's client does on one host). */
async function download(id: string, key = owner.key) {
  const redirect = await fetch(`${app.url}/api/v1/family_exports/${id}/download`, {
    headers: { "x-api-key": key, ...headers },
    redirect: "manual",
  });
  return redirect;
}

let exportId: string;
let zipFile: string;

describe("sure-cli `family-exports create --apply`, `list`, `show`, `download --out`", () => {
  test("create answers 202 with the pending export; a worker writes it; show and list have upstream's fields", async () => {
    const created = await cli.post("/family_exports", {}, headers);
    expect(created.status).toBe(202);
    expect(created.body.data).toMatchObject({
      id: expect.any(String),
      status: "pending",
      filename: null,
      downloadable: false,
      download_path: null,
    });
    expect(created.body.data.file).toEqual({ attached: false, byte_size: null, content_type: null });
    exportId = created.body.data.id;
    const done = await exportDone(cli, exportId);
    expect(done).toMatchObject({
      status: "completed",
      filename: `family-export-${exportId}.zip`,
      downloadable: true,
      download_path: `/api/v1/family_exports/${exportId}/download`,
      file: { attached: true, byte_size: expect.any(Number), content_type: "application/zip" },
    });
    const listed = await cli.get("/family_exports?page=1&per_page=10", headers);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((row: { id: string }) => row.id)).toEqual([exportId]);
    // Upstream's meta of this list (family_exports/index.json.jbuilder), not its imports' current_page/next_page.
    expect(listed.body.meta).toEqual({ page: 1, per_page: 10, total_count: 1, total_pages: 1 });
    const [audited] = (await app.runtime.sequelize.query(
      `SELECT array_agg(event_type ORDER BY event_type) AS types FROM audit_events WHERE resource_id = $1`,
      { bind: [exportId] },
    )) as [{ types: string[] }[], unknown];
    expect(audited[0].types).toEqual(["family_export.completed", "family_export.created"]);
  });

  test("download redirects to a signed URL whose zip holds upstream's files and a manifest of their SHA-256s", async () => {
    const redirect = await download(exportId);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/family_exports/${exportId}/file\\?expires=\\d+&signature=[\\w-]+$`));
    const file = await fetch(`${app.url}${location}`, { headers: { "x-api-key": owner.key, ...headers } });
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "application/zip"]);
    zipFile = path.join(scratch, "export.zip");
    fs.writeFileSync(zipFile, Buffer.from(await file.arrayBuffer()));
    const entries = await readZip(zipFile);
    expect([...entries.keys()]).toEqual([...UPSTREAM_FILES, "manifest.json"]);
    const manifest = JSON.parse(entries.get("manifest.json")!.toString("utf8"));
    expect(manifest).toMatchObject({ kind: "family-export", id: exportId, familyId: owner.familyId });
    // Records, not lines: a name with a newline inside its quotes is one transaction.
    expect(Object.fromEntries(manifest.files.map((f: { name: string; rows: number }) => [f.name, f.rows]))).toMatchObject({
      "accounts.csv": 4,
      "transactions.csv": 43,
      "trades.csv": 3,
      "categories.csv": 2,
      "merchants.csv": 2,
      "all.ndjson": 62,
    });
    for (const listed of manifest.files) {
      const bytes = entries.get(listed.name)!;
      expect([listed.name, listed.sha256, listed.bytes]).toEqual([
        listed.name,
        createHash("sha256").update(bytes).digest("hex"),
        bytes.length,
      ]);
    }
    const [stored] = (await app.runtime.sequelize.query(`SELECT manifest FROM family_exports WHERE id = $1`, { bind: [exportId] })) as [
      { manifest: { fileSha256: string } }[],
      unknown,
    ];
    expect(stored[0].manifest.fileSha256).toBe(createHash("sha256").update(fs.readFileSync(zipFile)).digest("hex"));

    const csv = (name: string) => entries.get(name)!.toString("utf8");
    expect(csv("accounts.csv").split("\n")[0]).toBe("id,name,type,subtype,balance,currency,created_at");
    expect(csv("accounts.csv")).toContain(`"Visa, ""gold""",CreditCard,,`);
    expect(csv("transactions.csv").split("\n")[0]).toBe("date,account_name,amount,name,category,tags,notes,currency");
    expect(csv("transactions.csv")).toContain(`,"morning,work, mostly",`);
    expect(csv("trades.csv").split("\n")[0]).toBe("date,account_name,ticker,quantity,price,amount,currency");
    expect(csv("categories.csv")).toContain("Coffee,#123456,Food,coffee");
    expect(csv("merchants.csv")).toBe('name,color,website_url\n"Café ""Le Nord""",,\nCorner shop,,\n');
    expect(csv("version.txt")).toBe("export_version: 2\n");
    expect(JSON.parse(csv("attachments.json"))).toEqual({ version: 1, binary_included: false, attachments: [] });
    const types = entries
      .get("all.ndjson")!
      .toString("utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).type);
    const counts = Object.fromEntries([...new Set(types)].map((type) => [type, types.filter((t) => t === type).length]));
    expect(counts).toEqual({ Account: 4, Category: 2, Tag: 2, Merchant: 2, Valuation: 5, Transaction: 43, Transfer: 1, Trade: 3 });
    const [downloads] = (await app.runtime.sequelize.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE resource_id = $1 AND event_type = 'family_export.downloaded' AND user_id = $2`,
      { bind: [exportId, owner.userId] },
    )) as [{ n: number }[], unknown];
    expect(downloads[0].n).toBe(1);
  });
});

describe("who may, and hostile ways in", () => {
  test("a read-only key lists, shows and downloads, and may not create (403); a member is refused (403)", async () => {
    const reader = apiKeyClient(`${app.url}/api/v1`, owner.readKey);
    expect((await reader.get("/family_exports", headers)).status).toBe(200);
    expect((await reader.get(`/family_exports/${exportId}`, headers)).status).toBe(200);
    expect((await download(exportId, owner.readKey)).status).toBe(302);
    expect((await reader.post("/family_exports", {}, headers)).status).toBe(403);
    // Upstream's create takes no parameters: any is a 422 invalid_params, and nothing is requested.
    const withParams = await cli.post("/family_exports", { family_export: { format: "zip" } }, headers);
    expect([withParams.status, withParams.body]).toEqual([
      422,
      expect.objectContaining({ error: "invalid_params", message: "Family export creation does not accept request parameters" }),
    ]);
    expect((await cli.get("/family_exports", headers)).body.meta.total_count).toBe(1);
    const member = await createUser(app.runtime.services, { familyOf: owner, role: "member" });
    const memberApi = apiKeyClient(`${app.url}/api/v1`, member.key);
    expect((await memberApi.get("/family_exports", headers)).status).toBe(403);
    expect((await memberApi.post("/family_exports", {}, headers)).status).toBe(403);
    expect((await download(exportId, member.key)).status).toBe(403);
  });

  test("bad ids and another family's export are 404; an unfinished export is 409", async () => {
    for (const id of ["not-a-uuid", "00000000-0000-4000-8000-000000000000", "%27%3B--"]) {
      expect((await cli.get(`/family_exports/${id}`, headers)).status).toBe(404);
      expect((await download(id)).status).toBe(404);
    }
    const strangerApi = apiKeyClient(`${app.url}/api/v1`, stranger.key);
    expect((await strangerApi.get(`/family_exports/${exportId}`, headers)).status).toBe(404);
    expect((await download(exportId, stranger.key)).status).toBe(404);
    expect((await strangerApi.get("/family_exports", headers)).body.data).toEqual([]);
    const pending = await app.runtime.sequelize.query(
      `INSERT INTO family_exports (id, family_id, status, requested_by, requested_by_email) VALUES (gen_random_uuid(), $1, 'processing', $2, 'x') RETURNING id`,
      { bind: [owner.familyId, owner.userId] },
    );
    const pendingId = (pending[0] as { id: string }[])[0].id;
    const notReady = await download(pendingId);
    expect([notReady.status, await notReady.json()]).toEqual([
      409,
      expect.objectContaining({ error: "export_not_ready", message: "Export is not ready for download" }),
    ]);
    await app.runtime.sequelize.query(`DELETE FROM family_exports WHERE id = $1`, { bind: [pendingId] });
  });

  test("a forged, another family's or expired signature is 403, and is not audited as a download", async () => {
    const signer = new DownloadSigner(SecretBox.fromConfig(app.runtime.config).deriveKey("family-export-download"), 60);
    const url = (signed: { expires: number; signature: string }) =>
      `${app.url}/family_exports/${exportId}/file?expires=${signed.expires}&signature=${signed.signature}`;
    const get = (target: string, key = owner.key) => fetch(target, { headers: { "x-api-key": key } });
    const downloads = async () =>
      (
        (await app.runtime.sequelize.query(
          `SELECT count(*)::int AS n FROM audit_events WHERE resource_id = $1 AND event_type = 'family_export.downloaded'`,
          { bind: [exportId] },
        )) as [{ n: number }[], unknown]
      )[0][0].n;
    const before = await downloads();
    const good = signer.sign(exportId, owner.familyId);
    expect((await get(url(good))).status).toBe(200);
    expect((await get(url({ ...good, signature: good.signature.replace(/^./, (c) => (c === "A" ? "B" : "A")) }))).status).toBe(403);
    expect((await get(url(signer.sign(exportId, stranger.familyId)))).status).toBe(403);
    expect((await get(url(good), stranger.key)).status).toBe(403);
    const expired = await get(url(signer.sign(exportId, owner.familyId, Date.now() - 3_600_000)));
    expect([expired.status, ((await expired.json()) as { message: string }).message]).toEqual([
      403,
      "This download link has expired; ask for a new one",
    ]);
    expect((await get(`${app.url}/family_exports/${exportId}/file`)).status).toBe(403);
    expect((await fetch(url(good))).status).toBe(401);
    // The one good fetch, and none of the refused ones.
    expect((await downloads()) - before).toBe(1);
  });
});

/** Every restorable table of a family, by natural content (no ids), in a fixed order. */
const TABLES: Record<string, string> = {
  accounts: `SELECT name, account_type, classification, currency, balance::text, cash_balance::text FROM accounts WHERE family_id = $1 ORDER BY name`,
  categories: `SELECT c.name, c.classification, c.color, c.icon, p.name AS parent FROM categories c
    LEFT JOIN categories p ON p.id = c.parent_id WHERE c.family_id = $1 ORDER BY c.name`,
  tags: `SELECT name, color FROM tags WHERE family_id = $1 ORDER BY name`,
  merchants: `SELECT name, color, logo_url FROM merchants WHERE family_id = $1 ORDER BY name`,
  valuations: `SELECT a.name AS account, v.date::text, v.amount::text, v.currency, v.kind, v.name, v.notes FROM valuations v
    JOIN accounts a ON a.id = v.account_id WHERE v.family_id = $1 ORDER BY a.name, v.date`,
  transactions: `SELECT a.name AS account, t.date::text, t.amount::text, t.currency, t.name, t.notes, t.pending, c.name AS category,
      m.name AS merchant, t.external_id, t.source,
      (SELECT string_agg(g.name, '|' ORDER BY g.name) FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id WHERE tt.transaction_id = t.id) AS tags
    FROM transactions t JOIN accounts a ON a.id = t.account_id LEFT JOIN categories c ON c.id = t.category_id
    LEFT JOIN merchants m ON m.id = t.merchant_id WHERE t.family_id = $1
    ORDER BY a.name, t.date, t.amount, t.name, t.notes NULLS FIRST`,
  transfers: `SELECT o.name AS outflow, o.date::text, o.amount::text, i.name AS inflow FROM transfers x
    JOIN transactions o ON o.id = x.outflow_transaction_id JOIN transactions i ON i.id = x.inflow_transaction_id
    WHERE x.family_id = $1 ORDER BY o.date, o.name`,
  trades: `SELECT a.name AS account, s.key, s.ticker, tr.date::text, tr.qty::text, tr.price::text, tr.fee::text, tr.amount::text,
      tr.currency, tr.name, tr.notes, tr.investment_activity_label, c.name AS category
    FROM trades tr JOIN accounts a ON a.id = tr.account_id JOIN securities s ON s.id = tr.security_id
    LEFT JOIN categories c ON c.id = tr.category_id WHERE tr.family_id = $1 ORDER BY a.name, tr.date, s.key`,
  positions: `SELECT a.name AS account, s.key, p.date::text, p.quantity::text, p.cost_basis::text FROM positions p
    JOIN accounts a ON a.id = p.account_id JOIN securities s ON s.id = p.security_id WHERE p.family_id = $1 ORDER BY a.name, s.key, p.date`,
};

async function tables(target: TestApp, familyId: string) {
  const out: Record<string, unknown[]> = {};
  for (const [name, sql] of Object.entries(TABLES)) out[name] = (await target.runtime.sequelize.query(sql, { bind: [familyId] }))[0];
  return out;
}

/** A copy of the zip with one entry's content replaced and the manifest left as it was. */
async function tampered(entries: Map<string, Buffer>, name: string, content: Buffer): Promise<string> {
  const zip = new ZipFile();
  for (const [entry, bytes] of entries) zip.addBuffer(entry === name ? content : bytes, entry);
  zip.end();
  const file = path.join(scratch, `tampered-${name}-${Date.now()}.zip`);
  await new Promise((resolve, reject) =>
    zip.outputStream
      .pipe(fs.createWriteStream(file))
      .on("close", () => resolve(undefined))
      .on("error", reject),
  );
  return file;
}

describe("restore: the export loaded into an empty family of a fresh instance", () => {
  let target: TestUser;
  const asTarget = () => ({ userId: target.userId, email: target.email, session: null, familyId: target.familyId });

  beforeAll(async () => {
    target = await createUser(fresh.runtime.services, { role: "admin" });
  });

  test("a tampered file, a missing manifest or a hostile line are refused and write nothing", async () => {
    const entries = await readZip(zipFile);
    const restore = (file: string) => fresh.runtime.services.familyRestore.restore(asTarget(), file);
    const ndjson = entries.get("all.ndjson")!;
    const flipped = Buffer.from(ndjson);
    flipped[flipped.length - 5] ^= 1;
    await expect(restore(await tampered(entries, "all.ndjson", flipped))).rejects.toThrow(
      "all.ndjson does not match its SHA-256 in manifest.json",
    );
    const withoutManifest = new Map(entries);
    withoutManifest.delete("manifest.json");
    await expect(restore(await tampered(withoutManifest, "", Buffer.alloc(0)))).rejects.toThrow("no manifest.json");
    const notZip = path.join(scratch, "not.zip");
    fs.writeFileSync(notZip, "hello");
    await expect(restore(notZip)).rejects.toThrow("Not a zip file");

    // A line that is wrong, with a manifest that matches it: refused by the line's checks, naming it.
    const lines = ndjson.toString("utf8").split("\n");
    const at = lines.findIndex((line) => line !== "" && JSON.parse(line).type === "Transaction");
    const bad = JSON.parse(lines[at]);
    bad.data.amount = "1e400";
    lines[at] = JSON.stringify(bad);
    const hostile = Buffer.from(lines.join("\n"));
    const manifest = JSON.parse(entries.get("manifest.json")!.toString("utf8"));
    for (const file of manifest.files)
      if (file.name === "all.ndjson")
        Object.assign(file, { sha256: createHash("sha256").update(hostile).digest("hex"), bytes: hostile.length });
    const rewritten = new Map(entries);
    rewritten.set("all.ndjson", hostile);
    rewritten.set("manifest.json", Buffer.from(JSON.stringify(manifest)));
    await expect(restore(await tampered(rewritten, "", Buffer.alloc(0)))).rejects.toThrow(
      `all.ndjson line ${at + 1} amount must be a decimal number as text`,
    );
    const written = await tables(fresh, target.familyId);
    expect(Object.values(written).flat()).toEqual([]);
  });

  test("every account, category, tag, merchant, valuation, transaction, transfer and trade equal, table by table", async () => {
    const summary = await fresh.runtime.services.familyRestore.restore(asTarget(), zipFile);
    expect(summary.counts).toEqual({ Account: 4, Category: 2, Tag: 2, Merchant: 2, Valuation: 5, Transaction: 43, Transfer: 1, Trade: 3 });
    const [before, after] = await Promise.all([tables(app, owner.familyId), tables(fresh, target.familyId)]);
    for (const name of Object.keys(TABLES)) expect([name, after[name]]).toEqual([name, before[name]]);
    // Nothing compared is empty: a table the export left out would fail here, not pass as two empty lists.
    for (const name of Object.keys(TABLES)) expect([name, before[name].length > 0]).toEqual([name, true]);
    expect([before.transactions.length, before.transfers.length, before.trades.length]).toEqual([43, 1, 3]);
    // The imported transaction comes back with the merchant its import created, and its import fingerprint.
    expect(after.transactions).toContainEqual(
      expect.objectContaining({
        name: "Newspaper",
        merchant: "Corner shop",
        source: "import",
        external_id: expect.stringMatching(/^import:/),
      }),
    );
    const [audited] = (await fresh.runtime.sequelize.query(
      `SELECT user_id AS "userId", changes FROM audit_events WHERE event_type = 'family.restored' AND resource_id = $1`,
      { bind: [target.familyId] },
    )) as [{ userId: string; changes: Record<string, { new: number }> }[], unknown];
    expect([audited.length, audited[0].userId, audited[0].changes.Transaction.new]).toEqual([1, target.userId, 43]);
  });

  test("a family that holds data is refused (409), and nothing more is written", async () => {
    const before = await tables(fresh, target.familyId);
    await expect(fresh.runtime.services.familyRestore.restore(asTarget(), zipFile)).rejects.toMatchObject({ restError: "conflict" });
    expect(await tables(fresh, target.familyId)).toEqual(before);
  });
});

describe("without Redis (the default configuration)", () => {
  test("the worker writes the export on PostgreSQL's queue", async () => {
    const plain = await startTestApp({ env: { REDIS_URL: "", EXPORT_DIR: path.join(scratch, "c") }, roles: { workers: true } });
    try {
      expect(plain.runtime.queues.kind).toBe("postgres");
      const user = await createUser(plain.runtime.services, { role: "admin" });
      await createAccount(plain.runtime.services, user, { name: "Checking", balance: "10" });
      const api = apiKeyClient(`${plain.url}/api/v1`, user.key);
      const created = await api.post("/family_exports", {}, headers);
      expect(created.status).toBe(202);
      const done = await exportDone(api, created.body.data.id);
      expect([done.status, done.downloadable]).toEqual(["completed", true]);
    } finally {
      await plain.stop();
    }
  });
});

describe("a request whose job never reached the queue", () => {
  test("is enqueued again by the requeue schedule's handler once stale, and written", async () => {
    const [rows] = (await app.runtime.sequelize.query(
      `INSERT INTO family_exports (id, family_id, status, requested_by, requested_by_email, created_at)
       VALUES (gen_random_uuid(), $1, 'pending', $2, $3, now() - interval '2 minutes') RETURNING id`,
      { bind: [owner.familyId, owner.userId, owner.email] },
    )) as [{ id: string }[], unknown];
    expect(await app.runtime.services.familyExports.requeueStale()).toBe(1);
    const done = await exportDone(cli, rows[0].id);
    expect(done.status).toBe("completed");
    expect(await app.runtime.services.familyExports.requeueStale()).toBe(0);
  });
});

describe("a family reset", () => {
  test("removes the family's exports with its data, and the sweep then removes their zips, not another family's", async () => {
    const household = await createUser(app.runtime.services, { role: "admin" });
    const client = apiKeyClient(`${app.url}/api/v1`, household.key);
    await createAccount(app.runtime.services, household, { name: "Checking", balance: "10" });
    const theirs = await exportDone(client, (await client.post("/family_exports", {}, headers)).body.data.id);
    const ours = await exportDone(cli, (await cli.post("/family_exports", {}, headers)).body.data.id);
    const zipOf = (id: string) => path.join(scratch, "a", `family-export-${id}.zip`);
    expect([fs.existsSync(zipOf(theirs.id)), fs.existsSync(zipOf(ours.id))]).toEqual([true, true]);
    expect((await client.get("/users/reset/status", headers)).body.counts.family_exports).toBe(1);

    expect((await client.delete("/users/reset", headers)).status).toBe(200);
    expect((await client.get("/users/reset/status", headers)).body.counts.family_exports).toBe(0);
    expect((await client.get(`/family_exports/${theirs.id}`, headers)).status).toBe(404);
    expect(await app.runtime.services.familyExports.removeOrphanFiles()).toBe(1);
    expect([fs.existsSync(zipOf(theirs.id)), fs.existsSync(zipOf(ours.id))]).toEqual([false, true]);
    expect(await app.runtime.services.familyExports.removeOrphanFiles()).toBe(0);
  });
});

describe("a write that fails", () => {
  test("leaves the export failed, with family_export.failed naming the requester, and a later request works", async () => {
    const dir = path.join(scratch, "a");
    fs.renameSync(dir, `${dir}-away`);
    fs.writeFileSync(dir, "not a folder");
    let failed: { id: string; status: string };
    try {
      failed = await exportDone(cli, (await cli.post("/family_exports", {}, headers)).body.data.id);
    } finally {
      fs.rmSync(dir);
      fs.renameSync(`${dir}-away`, dir);
    }
    expect(failed.status).toBe("failed");
    await app.runtime.services.audit.chainCommitted();
    const [rows] = (await app.runtime.sequelize.query(
      `SELECT user_id AS "userId" FROM audit_events WHERE resource_id = $1 AND event_type = 'family_export.failed'`,
      { bind: [failed.id] },
    )) as [Array<{ userId: string }>, unknown];
    expect(rows).toEqual([{ userId: owner.userId }]);
    expect((await exportDone(cli, (await cli.post("/family_exports", {}, headers)).body.data.id)).status).toBe("completed");
  });
});
