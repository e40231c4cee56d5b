import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { apiKeyClient, client } from "../helpers/http";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlThroughApp } from "../helpers/sql";

/**
 * sure-cli's `imports preflight` (JSON raw_file_content), `imports create --file … --apply` (multipart,
 * the fields before the file part), `imports list`, `imports show` and the rows, replayed as the client
 * sends them (cmd/sure-cli/root/imports_cmd.go, imports_preflight_cmd.go), then the ways a file can be
 * hostile. What was written is read back with SQL written here.
 */
jest.setTimeout(120_000);
const MAX_BYTES = 2_000_000;
const MAX_ROWS = 500;
let app: TestApp;
let user: TestUser;
let cli: ReturnType<typeof apiKeyClient>;
let checkingId: string;
const headers = { accept: "application/json" };

beforeAll(async () => {
  app = await startTestApp({ env: { IMPORT_MAX_BYTES: String(MAX_BYTES), IMPORT_MAX_ROWS: String(MAX_ROWS) } });
  user = await createUser(app.runtime.services);
  cli = apiKeyClient(`${app.url}/api/v1`, user.key);
  checkingId = (await createAccount(app.runtime.services, user, { name: "Checking" })).id;
  await createAccount(app.runtime.services, user, { name: "Savings", currency: "EUR" });
});
afterAll(() => app.stop());

const sql = sqlThroughApp(() => app.runtime.sequelize);

async function written() {
  const [row] = await sql<{ transactions: number; imports: number; rows: number }>(
    `SELECT (SELECT count(*) FROM transactions WHERE family_id = $1)::int AS transactions,
            (SELECT count(*) FROM imports WHERE family_id = $1)::int AS imports,
            (SELECT count(*) FROM import_rows WHERE import_id IN (SELECT id FROM imports WHERE family_id = $1))::int AS rows`,
    [user.familyId],
  );
  return row;
}

/** POST as sure-cli's PostMultipart: the fields, then the file part named `file`. */
function multipart(path: string, fields: Record<string, string>, file: string | Buffer, key = user.key) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("file", new Blob([file], { type: "text/csv" }), "statement.csv");
  return fetch(`${app.url}/api/v1${path}`, { method: "POST", headers: { "x-api-key": key, accept: "application/json" }, body: form });
}

const BANK_CSV = [
  "Date;Payee;Amount;Category;Tags;Notes",
  '02/01/2026;"Café ""Le Nord""";-4,50;Coffee;morning|work;',
  "03/01/2026;Salary;2.500,00;Income;;January",
  "03/01/2026;Café;-4,50;Coffee;;",
  "03/01/2026;Café;-4,50;Coffee;;",
  '15/01/2026;"Rent, flat";-1.200,00;Housing;;"paid\nby transfer"',
].join("\r\n");

describe("`imports preflight`, `imports create`, `imports list/show`, and the rows", () => {
  test("preflight detects the separator, date and number formats, reports what would be written, and writes nothing", async () => {
    const before = await written();
    const preflight = await cli.post(
      "/imports/preflight",
      { type: "TransactionImport", raw_file_content: BANK_CSV, account_id: checkingId, name_col_label: "Payee" },
      headers,
    );
    expect(preflight.status).toBe(200);
    expect(preflight.body.data).toEqual({
      type: "TransactionImport",
      valid: true,
      content: { filename: "import.csv", content_type: "text/csv", byte_size: Buffer.byteLength(BANK_CSV) },
      stats: { rows_count: 5, valid_rows_count: 5, invalid_rows_count: 0, importable_count: 5, duplicate_count: 0 },
      headers: ["Date", "Payee", "Amount", "Category", "Tags", "Notes"],
      required_headers: ["date", "amount"],
      missing_required_headers: [],
      errors: [],
      warnings: [],
      row_errors: [],
      detected: {
        col_sep: ";",
        date_format: "%d/%m/%Y",
        number_format: "1.234,56",
        columns: { date: "Date", amount: "Amount", name: "Payee", category: "Category", tags: "Tags", notes: "Notes" },
      },
    });
    expect(await written()).toEqual(before);
    // A read key may ask: preflight writes nothing.
    expect(
      (
        await apiKeyClient(`${app.url}/api/v1`, user.readKey).post("/imports/preflight", {
          raw_file_content: BANK_CSV,
          account_id: checkingId,
        })
      ).status,
    ).toBe(200);
  });

  test("create --file (multipart) stores a pending import; create with publish writes it through the ledger, once", async () => {
    const readOnly = await multipart("/imports", { format: "csv", account_id: checkingId }, BANK_CSV, user.readKey);
    expect(readOnly.status).toBe(403);

    const pending = await multipart("/imports", { format: "csv", account_id: checkingId, name_col_label: "Payee" }, BANK_CSV);
    expect(pending.status).toBe(201);
    const { data } = (await pending.json()) as { data: unknown };
    expect(data).toMatchObject({
      type: "TransactionImport",
      status: "pending",
      account_id: checkingId,
      file_name: "statement.csv",
      status_detail: { uploaded: true, configured: true, terminal: false, cleaned: true, publishable: true, revertable: false },
      configuration: {
        name_col_label: "Payee",
        date_format: "%d/%m/%Y",
        number_format: "1.234,56",
        signage_convention: "inflows_positive",
      },
      stats: { rows_count: 5, valid_rows_count: 5, invalid_rows_count: 0, imported_count: null },
    });
    expect((await written()).transactions).toBe(0);

    const published = await cli.post("/imports", {
      raw_file_content: BANK_CSV,
      account_id: checkingId,
      name_col_label: "Payee",
      publish: "true",
    });
    expect(published.status).toBe(201);
    expect(published.body.data).toMatchObject({ status: "complete", stats: { imported_count: 5, duplicate_count: 0 } });
    // Stored amounts: positive is money out (inflows_positive files write income as positive).
    expect(
      await sql(`SELECT name, amount::text, currency, notes, source FROM transactions WHERE account_id = $1 ORDER BY date, name, amount`, [
        checkingId,
      ]),
    ).toEqual([
      { name: 'Café "Le Nord"', amount: "4.5000", currency: "USD", notes: null, source: "import" },
      { name: "Café", amount: "4.5000", currency: "USD", notes: null, source: "import" },
      { name: "Café", amount: "4.5000", currency: "USD", notes: null, source: "import" },
      { name: "Salary", amount: "-2500.0000", currency: "USD", notes: "January", source: "import" },
      { name: "Rent, flat", amount: "1200.0000", currency: "USD", notes: "paid\nby transfer", source: "import" },
    ]);
    expect(await sql(`SELECT name FROM categories WHERE family_id = $1 ORDER BY name`, [user.familyId])).toEqual([
      { name: "Coffee" },
      { name: "Housing" },
      { name: "Income" },
    ]);
    expect(
      await sql(
        `SELECT tg.name FROM transaction_tags tt JOIN tags tg ON tg.id = tt.tag_id JOIN transactions t ON t.id = tt.transaction_id
          WHERE t.account_id = $1 ORDER BY tg.name`,
        [checkingId],
      ),
    ).toEqual([{ name: "morning" }, { name: "work" }]);
    // The ledger moved: 2,500.00 in, 3 × 4.50 and 1,200.00 out of an account opened at zero.
    expect((await cli.get(`/accounts/${checkingId}`, headers)).body.balance).toBe("$1,286.50");
    const [event] = (await app.runtime.services.audit.list({ eventTypes: ["import.published"] }, { first: 10 })).events;
    expect(event).toMatchObject({ user: { id: user.userId }, changes: { imported_count: { new: 5 }, duplicate_count: { new: 0 } } });
    // The fingerprint, pinned: a file imported before any change to imports (a merchant column …) is still recognised after it.
    expect(await sql(`SELECT external_id FROM transactions WHERE account_id = $1 AND name = 'Salary'`, [checkingId])).toEqual([
      { external_id: `import:${createHash("sha256").update(`${checkingId}|2026-01-03|-2500.0000|USD|Salary|1`).digest("hex")}` },
    ]);

    // The same file again writes nothing: every row is a duplicate.
    const again = await cli.post("/imports", {
      raw_file_content: BANK_CSV,
      account_id: checkingId,
      name_col_label: "Payee",
      publish: "true",
    });
    expect(again.body.data.stats).toMatchObject({ imported_count: 0, duplicate_count: 5 });
    expect((await written()).transactions).toBe(5);
    const preflight = await cli.post("/imports/preflight", { raw_file_content: BANK_CSV, account_id: checkingId, name_col_label: "Payee" });
    expect(preflight.body.data.stats).toMatchObject({ importable_count: 0, duplicate_count: 5 });

    const list = await cli.get("/imports?status=complete&account_id=x&limit=50&page=1&per_page=25", headers);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    expect(list.body.data[0]).toEqual({
      id: again.body.data.id,
      type: "TransactionImport",
      status: "complete",
      created_at: expect.any(String),
      updated_at: expect.any(String),
      account_id: checkingId,
      rows_count: 5,
      error: null,
      status_detail: { uploaded: true, configured: true, terminal: true },
    });
    expect(list.body.meta).toEqual({ current_page: 1, next_page: null, prev_page: null, total_pages: 1, total_count: 2, per_page: 25 });
    expect((await cli.get(`/imports/${published.body.data.id}`, headers)).body).toEqual(published.body);
    const rows = await cli.get(`/imports/${published.body.data.id}/rows?per_page=2&page=1`, headers);
    expect(rows.body.meta).toMatchObject({ total_count: 5, total_pages: 3, next_page: 2 });
    expect(rows.body.data[0]).toMatchObject({
      row_number: 1,
      valid: true,
      errors: [],
      fields: { date: "02/01/2026", amount: "-4,50", name: 'Café "Le Nord"', category: "Coffee", tags: "morning|work" },
      reading: { date: "2026-01-02", amount: "4.5", currency: "USD", account_id: checkingId, transaction_id: expect.any(String) },
    });
    expect((await cli.get("/imports/not-an-id", headers)).status).toBe(404);
    const stranger = apiKeyClient(`${app.url}/api/v1`, (await createUser(app.runtime.services)).key);
    expect((await stranger.get(`/imports/${published.body.data.id}`, headers)).status).toBe(404);
    expect((await stranger.get(`/imports/${published.body.data.id}/rows`, headers)).status).toBe(404);
  });

  test("rows name their account; a row naming no account of the family is a problem, and publish then writes nothing", async () => {
    const file = "date,name,amount,account,currency\n2026-02-01,Transfer in,100,savings,EUR\n2026-02-02,Lunch,-12.5,Nowhere,\n";
    const preflight = await cli.post("/imports/preflight", { raw_file_content: file });
    expect(preflight.body.data).toMatchObject({
      valid: false,
      stats: { rows_count: 2, valid_rows_count: 1, invalid_rows_count: 1, importable_count: 0 },
      required_headers: ["date", "amount", "account"],
      row_errors: [{ row_number: 2, errors: ['Account "Nowhere" is not an account of the family'] }],
    });
    const before = await written();
    const refused = await cli.post("/imports", { raw_file_content: file, publish: "true" });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual(['Row 2: Account "Nowhere" is not an account of the family']);
    expect(await written()).toEqual(before);
    const fixed = await cli.post("/imports", { raw_file_content: file.replace("Nowhere", "checking"), publish: "true" });
    expect(fixed.body.data.stats).toMatchObject({ imported_count: 2 });
    expect(
      await sql(
        `SELECT a.name, t.currency, t.amount::text FROM transactions t JOIN accounts a ON a.id = t.account_id WHERE t.date >= '2026-02-01' ORDER BY t.date`,
      ),
    ).toEqual([
      { name: "Savings", currency: "EUR", amount: "-100.0000" },
      { name: "Checking", currency: "USD", amount: "12.5000" },
    ]);
  });

  test("the family's rules apply to the transactions a publish writes, not to the rows it finds imported before", async () => {
    const other = await createUser(app.runtime.services);
    const otherCli = apiKeyClient(`${app.url}/api/v1`, other.key);
    const accountId = (await createAccount(app.runtime.services, other, { name: "Checking" })).id;
    const first = "date,name,amount\n2026-03-01,Coffee,-4.5\n2026-03-02,Lunch,-12\n";
    expect((await otherCli.post("/imports", { raw_file_content: first, account_id: accountId, publish: "true" })).status).toBe(201);
    const actor = await app.runtime.services.apiKeys.authenticate(other.key);
    await app.runtime.services.rules.create(actor, {
      name: "Coffee shops",
      resourceType: "transaction",
      conditions: [{ conditionType: "transaction_name", operator: "like", value: "coffee" }],
      actions: [{ actionType: "set_transaction_name", value: "Coffee shop" }],
    });

    const again = await otherCli.post("/imports", {
      raw_file_content: `${first}2026-03-03,Coffee,-3\n`,
      account_id: accountId,
      publish: "true",
    });
    expect(again.body.data.stats).toMatchObject({ imported_count: 1 });
    expect(await sql(`SELECT date::text, name FROM transactions WHERE family_id = $1 ORDER BY date`, [other.familyId])).toEqual([
      { date: "2026-03-01", name: "Coffee" },
      { date: "2026-03-02", name: "Lunch" },
      { date: "2026-03-03", name: "Coffee shop" },
    ]);
    expect(
      await sql(`SELECT transactions_queued AS queued, transactions_processed AS processed FROM rule_runs WHERE family_id = $1`, [
        other.familyId,
      ]),
    ).toEqual([{ queued: 1, processed: 1 }]);
  });

  test("the family's categories, tags and merchants are matched by name, whatever the case; a new name is created once", async () => {
    const other = await createUser(app.runtime.services);
    const otherCli = apiKeyClient(`${app.url}/api/v1`, other.key);
    const accountId = (await createAccount(app.runtime.services, other, { name: "Checking" })).id;
    const groceries = (await otherCli.post("/categories", { category: { name: "Groceries", color: "#123456", icon: "carrot" } })).body;
    const work = (await otherCli.post("/tags", { tag: { name: "Work" } })).body;
    const market = (await otherCli.post("/merchants", { merchant: { name: "Market Hall" } })).body;
    const file = [
      "date,name,amount,category,tags,Shop",
      "2026-04-01,Market,-20,groceries,work|Home,market hall",
      "2026-04-02,Bakery,-5,GROCERIES, home ,Le Fournil",
      "2026-04-03,Bread,-3,,,LE FOURNIL",
      "",
    ].join("\n");
    const settings = { raw_file_content: file, account_id: accountId, merchant_col_label: "shop" };
    const preflight = (await otherCli.post("/imports/preflight", settings)).body.data;
    expect([preflight.valid, preflight.detected.columns.merchant]).toEqual([true, "Shop"]);
    const tooLong = `date,amount,merchant\n2026-04-01,-1,${"m".repeat(121)}\n`;
    expect((await otherCli.post("/imports/preflight", { raw_file_content: tooLong, account_id: accountId })).body.data.row_errors).toEqual([
      { row_number: 1, errors: ["Merchant is too long (maximum is 120 characters)"] },
    ]);
    const created = await otherCli.post("/imports", { ...settings, publish: "true" });
    expect([created.status, created.body.data.configuration.merchant_col_label]).toEqual([201, "shop"]);
    const rows = (await otherCli.get(`/imports/${created.body.data.id}/rows`, headers)).body.data;
    expect([rows[1].fields.merchant, rows[1].mappings.merchant]).toMatchObject([
      "Le Fournil",
      { type: "Import::MerchantMapping", key: "Le Fournil", creatable: true },
    ]);

    // The existing merchant kept (its id, its spelling); the new one created once, spelt as on its first row.
    expect(await sql(`SELECT id, name FROM merchants WHERE family_id = $1 ORDER BY name`, [other.familyId])).toEqual([
      { id: expect.any(String), name: "Le Fournil" },
      { id: market.id, name: "Market Hall" },
    ]);
    expect(
      await sql(
        `SELECT t.name, m.name AS merchant FROM transactions t LEFT JOIN merchants m ON m.id = t.merchant_id WHERE t.family_id = $1 ORDER BY t.date`,
        [other.familyId],
      ),
    ).toEqual([
      { name: "Market", merchant: "Market Hall" },
      { name: "Bakery", merchant: "Le Fournil" },
      { name: "Bread", merchant: "Le Fournil" },
    ]);

    expect(await sql(`SELECT id, name FROM categories WHERE family_id = $1`, [other.familyId])).toEqual([
      { id: groceries.id, name: "Groceries" },
    ]);
    expect(await sql(`SELECT name FROM tags WHERE family_id = $1 ORDER BY name`, [other.familyId])).toEqual([
      { name: "Home" },
      { name: "Work" },
    ]);
    expect(
      await sql(
        `SELECT t.name, t.category_id AS category, string_agg(g.name, '|' ORDER BY g.name) AS tags, bool_or(g.id = $2) AS work
           FROM transactions t JOIN transaction_tags tt ON tt.transaction_id = t.id JOIN tags g ON g.id = tt.tag_id
          WHERE t.family_id = $1 GROUP BY t.id ORDER BY t.date`,
        [other.familyId, work.id],
      ),
    ).toEqual([
      { name: "Market", category: groceries.id, tags: "Home|Work", work: true },
      { name: "Bakery", category: groceries.id, tags: "Home", work: false },
    ]);
  });

  test("an import's rows go with the import, and with its family; the other imports' rows stay", async () => {
    const other = await createUser(app.runtime.services);
    const otherCli = apiKeyClient(`${app.url}/api/v1`, other.key);
    const accountId = (await createAccount(app.runtime.services, other, { name: "Checking" })).id;
    const file = "date,name,amount\n2026-03-01,Coffee,-4.5\n2026-03-02,Lunch,-12\n";
    const importIds: string[] = [];
    for (let i = 0; i < 2; i += 1)
      importIds.push((await otherCli.post("/imports", { raw_file_content: file, account_id: accountId })).body.data.id as string);
    const rowsOf = async (ids: string[]) =>
      (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM import_rows WHERE import_id = ANY($1::uuid[])`, [ids]))[0].n;
    const before = await written();
    expect(await rowsOf(importIds)).toBe(4);

    await sql(`DELETE FROM imports WHERE id = $1`, [importIds[0]]);
    expect(await rowsOf(importIds)).toBe(2);
    await sql(`DELETE FROM families WHERE id = $1`, [other.familyId]);
    expect(await rowsOf(importIds)).toBe(0);
    expect(await written()).toEqual(before);
  });
});

/** Over IMPORT_MAX_BYTES in fewer rows than IMPORT_MAX_ROWS. */
const BIG_FILE = "date,amount,name\n" + `2026-01-01,1,${"x".repeat(10_000)}\n`.repeat(Math.ceil(MAX_BYTES / 10_000) + 10);

describe("hostile files: a 4xx or a per-row problem, never a 500, never a partial import", () => {
  const post = (body: unknown) => cli.post("/imports", body);

  test("too large, too many rows, too many columns, a 1 MB field, invalid UTF-8, broken quotes", async () => {
    const before = await written();
    const big = await multipart("/imports", { account_id: checkingId }, BIG_FILE);
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toBe(`The file is larger than IMPORT_MAX_BYTES (${MAX_BYTES} bytes)`);
    const jsonBig = await post({
      raw_file_content: BIG_FILE,
      account_id: checkingId,
    });
    expect(jsonBig.status).toBe(413);
    expect(jsonBig.body.message).toContain("IMPORT_MAX_BYTES");
    const rows = await post({ raw_file_content: "date,amount\n" + "2026-01-01,1\n".repeat(MAX_ROWS + 1), account_id: checkingId });
    expect(rows.status).toBe(422);
    expect(rows.body.errors).toEqual([`The file has more than IMPORT_MAX_ROWS (${MAX_ROWS}) data rows`]);
    const wide = await post({
      raw_file_content: Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(",") + "\n",
      account_id: checkingId,
    });
    expect(wide.status).toBe(422);
    const field = await multipart("/imports", { account_id: checkingId }, `date,amount,name\n2026-01-01,1,${"x".repeat(1024 * 1024)}\n`);
    expect(field.status).toBe(422);
    const utf8 = await multipart(
      "/imports",
      { account_id: checkingId },
      Buffer.concat([Buffer.from("date,amount,name\n2026-01-01,1,"), Buffer.from([0xff, 0xfe]), Buffer.from("\n")]),
    );
    expect(utf8.status).toBe(422);
    expect(((await utf8.json()) as { errors: string[] }).errors[0]).toContain("not valid UTF-8");
    const quotes = await post({ raw_file_content: 'date,amount,name\n2026-01-01,1,"never closed\n', account_id: checkingId });
    expect(quotes.status).toBe(422);
    expect(await written()).toEqual(before);
  });

  test("compressed: a gzip bomb as a JSON body's Content-Encoding is refused at IMPORT_MAX_BYTES; a gzipped file is not a CSV", async () => {
    const before = await written();
    // 64 MB of file inflated from about 64 kB: read as it inflates, and cut off at the limit.
    const inflated = JSON.stringify({ raw_file_content: "date,amount\n" + "2026-01-01,1\n".repeat(5_000_000), account_id: checkingId });
    const bomb = await fetch(`${app.url}/api/v1/imports`, {
      method: "POST",
      headers: { "x-api-key": user.key, "content-type": "application/json", "content-encoding": "gzip", accept: "application/json" },
      body: gzipSync(inflated),
    });
    expect(bomb.status).toBe(413);
    expect(((await bomb.json()) as { message: string }).message).toContain("IMPORT_MAX_BYTES");
    const gzipped = await multipart("/imports", { account_id: checkingId }, gzipSync("date,amount,name\n2026-01-01,1,Coffee\n"));
    expect(gzipped.status).toBe(422);
    expect(await written()).toEqual(before);
  });

  test("BOM, mixed line endings, quoted newlines and formulas are data; bad values are per-row problems", async () => {
    const file =
      '\ufeffdate,amount,name\r\n2026-03-01,-1,=HYPERLINK("http://evil.test";"x")\n2026-03-02,-2,"two\r\nlines"\r2026-03-40,abc,\n';
    const preflight = await cli.post("/imports/preflight", { raw_file_content: file, account_id: checkingId });
    expect(preflight.status).toBe(200);
    expect(preflight.body.data.row_errors).toEqual([
      {
        row_number: 3,
        errors: ['Date "2026-03-40" is not a date in the %Y-%m-%d format (from 1970 to five years ahead)', 'Amount "abc" must be a number'],
      },
    ]);
    const stored = await post({ raw_file_content: file, account_id: checkingId });
    expect(stored.status).toBe(201);
    const rows = (await cli.get(`/imports/${stored.body.data.id}/rows`)).body.data;
    expect(rows.map((row: any) => row.fields.name)).toEqual(['=HYPERLINK("http://evil.test";"x")', "two\r\nlines", null]);
    // Backslashes and tabs are data; a NUL (which PostgreSQL text cannot hold) is kept as \0, as every other write keeps it.
    const odd = await post({ raw_file_content: "date,amount,name\n2026-03-03,-3,a\\b\u0000c\td\n", account_id: checkingId });
    expect(odd.status).toBe(201);
    expect((await cli.get(`/imports/${odd.body.data.id}/rows`)).body.data[0].fields.name).toBe("a\\b\\0c\td");
    const unknownType = await post({ raw_file_content: file, type: "PdfImport" });
    expect(unknownType.status).toBe(422);
    expect((await post({ raw_file_content: file, account_id: "not-an-id" })).body.errors).toEqual(["Account not found"]);
    expect((await post({ raw_file_content: file, date_format: "%Q" })).status).toBe(422);
    expect((await post({ raw_file_content: { nested: true } })).status).toBe(422);
    expect((await client(`${app.url}/api/v1`).post("/imports", { raw_file_content: file })).status).toBe(401);
    const noFile = await fetch(`${app.url}/api/v1/imports`, {
      method: "POST",
      headers: { "x-api-key": user.key, "content-type": "text/plain" },
      body: "x",
    });
    expect(noFile.status).toBe(400);
    const brokenMultipart = await fetch(`${app.url}/api/v1/imports`, {
      method: "POST",
      headers: { "x-api-key": user.key, "content-type": "multipart/form-data; boundary=zzz" },
      body: '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\ndate,amount\n2026',
    });
    expect(brokenMultipart.status).toBeGreaterThanOrEqual(400);
    expect(brokenMultipart.status).toBeLessThan(500);
  });
});

/** A generated bank file: its separator, formats, encoding details and rows, some of them broken on purpose. */
const fileArbitrary = fc.record({
  separator: fc.constantFrom(",", ";", "\t", "|"),
  dateStyle: fc.constantFrom("iso", "us", "eu"),
  decimalComma: fc.boolean(),
  bom: fc.boolean(),
  lineEnd: fc.constantFrom("\n", "\r\n"),
  // Every field quoted, or only those that must be (a separator, a quote or a line break inside).
  quoting: fc.constantFrom("all" as const, "needed" as const),
  inflowsNegative: fc.boolean(),
  // The date format given with the file, or left to detection.
  declareDateFormat: fc.boolean(),
  // sure-cli's two forms: JSON raw_file_content (UTF-8 by definition), or a multipart file (streamed), whose bytes
  // are sometimes Latin-1: a file with é in it is then not UTF-8 and refused whole; ✓ becomes its low byte.
  upload: fc.constantFrom("json" as const, "multipart" as const, "multipart-latin1" as const),
  // A merchant column, sometimes: its names matched to the family's merchants (any case) or created.
  merchantColumn: fc.boolean(),
  rows: fc.array(
    fc.record({
      day: fc.integer({ min: 1, max: 28 }),
      month: fc.integer({ min: 1, max: 12 }),
      cents: fc.integer({ min: -500_000, max: 500_000 }),
      name: fc.string({ unit: fc.constantFrom("a", "é", "✓", " ", ",", ";", "|", '"', "\n", "=", "\t"), minLength: 1, maxLength: 12 }),
      // Mostly good rows, so that long files are often valid and get published.
      broken: fc.oneof(
        { arbitrary: fc.constant(null), weight: 12 },
        { arbitrary: fc.constantFrom("date" as const, "amount" as const), weight: 1 },
      ),
      repeat: fc.boolean(),
      merchant: fc.constantFrom("", "Corner Shop", "corner shop", " Kiosk ", "KIOSK"),
    }),
    { minLength: 1, maxLength: 30, size: "max" },
  ),
});

const DATE_FORMAT_OF = { iso: "%Y-%m-%d", us: "%m/%d/%Y", eu: "%d/%m/%Y" } as const;

function csvOf(file: GeneratedFile): string {
  const quote = (value: string) =>
    file.quoting === "all" || /["\r\n]/.test(value) || value.includes(file.separator) ? `"${value.replace(/"/g, '""')}"` : value;
  const pad = (n: number) => String(n).padStart(2, "0");
  const lines = [["Date", "Name", "Amount", ...(file.merchantColumn ? ["Merchant"] : [])].join(file.separator)];
  for (const row of file.rows) {
    const date =
      row.broken === "date"
        ? "2026-02-31"
        : file.dateStyle === "iso"
          ? `2025-${pad(row.month)}-${pad(row.day)}`
          : file.dateStyle === "us"
            ? `${pad(row.month)}/${pad(row.day)}/2025`
            : `${pad(row.day)}/${pad(row.month)}/2025`;
    const amount = row.broken === "amount" ? "n/a" : (row.cents / 100).toFixed(2).replace(".", file.decimalComma ? "," : ".");
    const line = [quote(date), quote(row.name), quote(amount), ...(file.merchantColumn ? [quote(row.merchant)] : [])].join(file.separator);
    lines.push(line);
    if (row.repeat) lines.push(line);
  }
  return (file.bom ? "\ufeff" : "") + lines.join(file.lineEnd) + file.lineEnd;
}

type GeneratedFile = typeof fileArbitrary extends fc.Arbitrary<infer T> ? T : never;

/**
 * The transactions a valid generated file must write, as `date amount name` lines, sorted: each row (and
 * its repeat) on its day read in `dateFormat` (detection may read a file of days up to 12 either way),
 * its amount stored as money out is positive, its name trimmed, "Imported transaction" when blank, and
 * after a bar its merchant's name in lower case (the family's merchant of that name, whatever its case), `-` for none.
 */
function expectedTransactions(file: GeneratedFile, dateFormat: string): string[] {
  const pad = (n: number) => String(n).padStart(2, "0");
  const lines: string[] = [];
  for (const row of file.rows) {
    const [month, day] =
      dateFormat === DATE_FORMAT_OF.eu && file.dateStyle === "us"
        ? [row.day, row.month]
        : dateFormat === DATE_FORMAT_OF.us && file.dateStyle === "eu"
          ? [row.day, row.month]
          : [row.month, row.day];
    const stored = file.inflowsNegative ? row.cents : -row.cents;
    const name = file.upload === "multipart-latin1" ? Buffer.from(row.name, "latin1").toString("latin1") : row.name;
    const merchant = (file.merchantColumn && row.merchant.trim().toLowerCase()) || "-";
    const line = `2025-${pad(month)}-${pad(day)} ${stored} ${name.trim() || "Imported transaction"} | ${merchant}`;
    lines.push(line);
    if (row.repeat) lines.push(line);
  }
  return lines.sort();
}

describe("any generated file: preflight's report is what publish writes; a refused file writes nothing; twice writes once", () => {
  test("property over separators, quoting, encodings, date and number formats, broken rows and repeated rows", async () => {
    await fc.assert(
      fc.asyncProperty(fileArbitrary, async (file) => {
        const account = await createAccount(app.runtime.services, user, { name: `Generated ${Math.random()}` });
        const settings = {
          account_id: account.id,
          name_col_label: "Name",
          number_format: file.decimalComma ? "1.234,56" : "1,234.56",
          signage_convention: file.inflowsNegative ? "inflows_negative" : "inflows_positive",
          ...(file.declareDateFormat ? { date_format: DATE_FORMAT_OF[file.dateStyle] } : {}),
        };
        const content = csvOf(file);
        const bytes = Buffer.from(content, file.upload === "multipart-latin1" ? "latin1" : "utf8");
        const send = async (path: string, fields: Record<string, string>, text = content) => {
          if (file.upload === "json") return cli.post(path, { ...fields, raw_file_content: text });
          const response = await multipart(path, fields, Buffer.from(text, file.upload === "multipart-latin1" ? "latin1" : "utf8"));
          return { status: response.status, body: (await response.json()) as any };
        };
        const before = await written();
        const checked = await send("/imports/preflight", settings);
        expect(await written()).toEqual(before);
        const created = await send("/imports", { ...settings, publish: "true" });
        const after = await written();
        if (!isUtf8(bytes)) {
          expect([checked.status, created.status, checked.body.errors[0]]).toEqual([422, 422, expect.stringContaining("not valid UTF-8")]);
          expect(after).toEqual(before);
          return;
        }
        const preflight = checked.body.data;
        if (preflight.valid) {
          expect(created.status).toBe(201);
          expect(created.body.data.stats.imported_count).toBe(preflight.stats.importable_count);
          expect(preflight.stats.importable_count).toBe(preflight.stats.rows_count);
          expect(after.transactions - before.transactions).toBe(preflight.stats.importable_count);
          // What was written is what the file says: every day, amount (with the file's sign convention) and name.
          // Left to detection, a file is read in its own format unless every day is 12 or less (then either reading is right).
          const ambiguous = file.dateStyle !== "iso" && file.rows.every((row) => row.day <= 12);
          const readAs = preflight.detected.date_format as string;
          if (!file.declareDateFormat)
            expect(ambiguous ? [DATE_FORMAT_OF.us, DATE_FORMAT_OF.eu] : [DATE_FORMAT_OF[file.dateStyle]]).toContain(readAs);
          const writtenRows = await sql<{ line: string }>(
            `SELECT t.date::text || ' ' || round(t.amount * 100)::bigint || ' ' || t.name || ' | ' || coalesce(lower(m.name), '-') AS line
               FROM transactions t LEFT JOIN merchants m ON m.id = t.merchant_id WHERE t.account_id = $1`,
            [account.id],
          );
          expect(writtenRows.map((row) => row.line).sort()).toEqual(
            expectedTransactions(file, file.declareDateFormat ? DATE_FORMAT_OF[file.dateStyle] : readAs),
          );
          // An account opened at zero, before the file's days, holds what its transactions moved.
          const [ledger] = await sql<{ balance: string; moved: string }>(
            `SELECT a.balance::text AS balance, (-coalesce((SELECT sum(t.amount) FROM transactions t WHERE t.account_id = a.id), 0))::numeric(19, 4)::text AS moved
               FROM accounts a WHERE a.id = $1`,
            [account.id],
          );
          expect(ledger.balance).toBe(ledger.moved);
          const twice = (await send("/imports/preflight", settings)).body.data;
          expect(twice.stats).toMatchObject({ importable_count: 0, duplicate_count: preflight.stats.rows_count });
          // The same rows again, with the merchant column taken away or added: a merchant is not part of a row's fingerprint.
          const again = await send("/imports", { ...settings, publish: "true" }, csvOf({ ...file, merchantColumn: !file.merchantColumn }));
          expect(again.body.data.stats).toMatchObject({ imported_count: 0, duplicate_count: preflight.stats.rows_count });
          expect((await written()).transactions).toBe(after.transactions);
        } else {
          expect(created.status).toBe(422);
          expect(preflight.stats.invalid_rows_count).toBeGreaterThan(0);
          expect(after).toEqual(before);
        }
      }),
      {
        numRuns: 15,
        // One valid file on 20 days, always: a publish of more than 16 days of an account rebuilds its ledger rows at once.
        examples: [
          [
            {
              separator: ",",
              dateStyle: "iso",
              decimalComma: false,
              bom: false,
              lineEnd: "\n",
              quoting: "all",
              inflowsNegative: false,
              declareDateFormat: false,
              upload: "json",
              merchantColumn: true,
              rows: Array.from({ length: 20 }, (_, i) => ({
                day: i + 1,
                month: 3,
                cents: (i % 3) * 1000 - 1500,
                name: "Shop",
                broken: null,
                repeat: i % 4 === 0,
                merchant: (["", "Corner Shop", "corner shop", " Kiosk "] as const)[i % 4],
              })),
            },
          ],
        ],
      },
    );
  });
});

describe("the upload routes as routes: a wrong method is a 405 naming POST; openapi.yaml describes both", () => {
  test("GET /imports/preflight, DELETE /imports and PUT /imports/preflight answer 405 with Allow; the document has both uploads", async () => {
    const preflightGet = await fetch(`${app.url}/api/v1/imports/preflight`, { headers: { "x-api-key": user.key, ...headers } });
    expect(preflightGet.status).toBe(405);
    expect(preflightGet.headers.get("allow")).toBe("POST");
    const put = await fetch(`${app.url}/api/v1/imports/preflight`, { method: "PUT", headers: { "x-api-key": user.key, ...headers } });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("POST");
    const remove = await fetch(`${app.url}/api/v1/imports`, { method: "DELETE", headers: { "x-api-key": user.key, ...headers } });
    expect(remove.status).toBe(405);
    expect(remove.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "HEAD", "POST"]);
    expect(((await remove.json()) as { error: string }).error).toBe("method_not_allowed");

    const { parse } = await import("yaml");
    const { readFileSync } = await import("node:fs");
    const document = parse(readFileSync(`${__dirname}/../../schema/openapi.yaml`, "utf8"));
    for (const path of ["/imports", "/imports/preflight"]) {
      const post = document.paths[path].post;
      expect(Object.keys(post.requestBody.content).sort()).toEqual(["application/json", "multipart/form-data"]);
      expect(post.requestBody.content["multipart/form-data"].schema.properties.file).toMatchObject({ format: "binary" });
      expect(post.requestBody.content["application/json"].schema.properties.ticker_col_label).toBeDefined();
    }
    expect(Object.keys(document.paths["/imports"].post.responses)).toContain("201");
    expect(
      document.paths["/imports/preflight"].post.responses["200"].content["application/json"].schema.properties.data.properties.row_errors,
    ).toBeDefined();
  });
});
