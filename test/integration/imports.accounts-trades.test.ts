import fc from "fast-check";
import { apiKeyClient } from "../helpers/http";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlThroughApp } from "../helpers/sql";

/**
 * Account and trade imports (upstream's AccountImport and TradeImport), as sure-cli's `imports
 * preflight` and `imports create` send them: preflight reports what publish writes, a refused file
 * writes nothing, the same file twice writes once, and trades keep holdings as the trade service does
 * (a sell beyond what is held is a problem of its row). What was written is read back with SQL here.
 */
jest.setTimeout(180_000);
let app: TestApp;
let user: TestUser;
let cli: ReturnType<typeof apiKeyClient>;
let brokerageId: string;
const headers = { accept: "application/json" };

beforeAll(async () => {
  app = await startTestApp({ env: { IMPORT_MAX_ROWS: "500" } });
  user = await createUser(app.runtime.services);
  cli = apiKeyClient(`${app.url}/api/v1`, user.key);
  brokerageId = (await createAccount(app.runtime.services, user, { name: "Brokerage", accountType: "investment" })).id;
  await createAccount(app.runtime.services, user, { name: "Checking" });
});
afterAll(() => app.stop());

const sql = sqlThroughApp(() => app.runtime.sequelize);

async function counts() {
  const [row] = await sql<{ accounts: number; trades: number; valuations: number; imports: number; securities: number }>(
    `SELECT (SELECT count(*) FROM accounts WHERE family_id = $1)::int AS accounts,
            (SELECT count(*) FROM trades WHERE family_id = $1)::int AS trades,
            (SELECT count(*) FROM valuations WHERE family_id = $1)::int AS valuations,
            (SELECT count(*) FROM imports WHERE family_id = $1)::int AS imports,
            (SELECT count(*) FROM securities)::int AS securities`,
    [user.familyId],
  );
  return row;
}

/** Each security's quantity held now by the account, from its trades (SQL written here) and from the holdings the service computed. */
async function heldQuantities(accountId: string) {
  const fromTrades = await sql<{ ticker: string; quantity: string }>(
    `SELECT s.ticker, trim_scale(sum(t.qty))::text AS quantity FROM trades t JOIN securities s ON s.id = t.security_id
      WHERE t.account_id = $1 GROUP BY s.ticker ORDER BY s.ticker`,
    [accountId],
  );
  const fromPositions = await sql<{ ticker: string; quantity: string }>(
    `SELECT DISTINCT ON (s.ticker) s.ticker, trim_scale(p.quantity)::text AS quantity FROM positions p JOIN securities s ON s.id = p.security_id
      WHERE p.account_id = $1 ORDER BY s.ticker, p.date DESC`,
    [accountId],
  );
  return { fromTrades, fromPositions };
}

const ACCOUNTS_CSV = [
  "Account type*,Name*,Balance*,Currency,Balance Date",
  "Checking,Main Checking Account,1000.00,USD,01/01/2024",
  "Savings,Emergency Fund,5000.00,EUR,01/15/2024",
  "Credit Card,Rewards Card,500.00,USD,",
].join("\n");

describe("account imports (AccountImport)", () => {
  test("preflight says what would be created; publish creates each account at its balance and date, audited; twice writes once", async () => {
    const before = await counts();
    const preflight = await cli.post("/imports/preflight", { type: "AccountImport", raw_file_content: ACCOUNTS_CSV }, headers);
    expect(preflight.status).toBe(200);
    expect(preflight.body.data).toMatchObject({
      type: "AccountImport",
      valid: true,
      stats: { rows_count: 3, valid_rows_count: 3, invalid_rows_count: 0, importable_count: 3, duplicate_count: 0 },
      required_headers: ["entity_type", "name", "amount"],
      missing_required_headers: [],
      detected: { date_format: "%m/%d/%Y", number_format: "1,234.56" },
    });
    expect(await counts()).toEqual(before);

    const created = await cli.post("/imports", { type: "AccountImport", raw_file_content: ACCOUNTS_CSV, publish: "true" }, headers);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      type: "AccountImport",
      status: "complete",
      stats: { imported_count: 3, duplicate_count: 0 },
    });
    const accounts = await sql<{ name: string; account_type: string; currency: string; balance: string; opened: string }>(
      `SELECT a.name, a.account_type, a.currency, trim_scale(a.balance)::text AS balance, v.date::text AS opened
         FROM accounts a JOIN valuations v ON v.account_id = a.id AND v.kind = 'opening_anchor'
        WHERE a.family_id = $1 AND a.name IN ('Main Checking Account', 'Emergency Fund', 'Rewards Card') ORDER BY a.name`,
      [user.familyId],
    );
    expect(accounts.map(({ opened: _opened, ...rest }) => rest)).toEqual([
      { name: "Emergency Fund", account_type: "depository", currency: "EUR", balance: "5000" },
      { name: "Main Checking Account", account_type: "depository", currency: "USD", balance: "1000" },
      { name: "Rewards Card", account_type: "credit_card", currency: "USD", balance: "500" },
    ]);
    expect(accounts.find((account) => account.name === "Main Checking Account")!.opened).toBe("2024-01-01");
    expect(accounts.find((account) => account.name === "Emergency Fund")!.opened).toBe("2024-01-15");
    const [audited] = await sql<{ created: number; published: number }>(
      `SELECT (count(*) FILTER (WHERE event_type = 'finance_account.created' AND resource_id IN
                 (SELECT id::text FROM accounts WHERE family_id = $1 AND name IN ('Main Checking Account', 'Emergency Fund', 'Rewards Card'))))::int AS created,
              (count(*) FILTER (WHERE event_type = 'import.published' AND resource_id = $2))::int AS published
         FROM audit_events`,
      [user.familyId, created.body.data.id],
    );
    expect(audited).toEqual({ created: 3, published: 1 });

    const middle = await counts();
    const again = await cli.post(
      "/imports",
      { type: "AccountImport", raw_file_content: ACCOUNTS_CSV.toUpperCase().replace("ACCOUNT TYPE*", "Account type"), publish: "true" },
      headers,
    );
    expect(again.status).toBe(201);
    expect(again.body.data.stats).toMatchObject({ imported_count: 0, duplicate_count: 3 });
    expect((await counts()).accounts).toBe(middle.accounts);
    const preflightAgain = await cli.post("/imports/preflight", { type: "AccountImport", raw_file_content: ACCOUNTS_CSV }, headers);
    expect(preflightAgain.body.data.stats).toMatchObject({ importable_count: 0, duplicate_count: 3 });
  });

  test("an unknown type, a repeated name or a bad balance is a row problem; the file is refused whole and nothing is written", async () => {
    const file = [
      "type,name,balance,currency,date",
      "Depository,Wallet,10,USD,2024-01-01",
      "Spaceship,Rocket,10,USD,2024-01-01",
      "Loan,wallet,10,USD,2024-01-01",
      "Loan,Car loan,ten,XYZ,2024-02-30",
    ].join("\n");
    const before = await counts();
    const preflight = await cli.post("/imports/preflight", { type: "AccountImport", raw_file_content: file }, headers);
    expect(preflight.body.data.valid).toBe(false);
    expect(preflight.body.data.row_errors).toEqual([
      { row_number: 2, errors: [expect.stringContaining('Account type "Spaceship" is not one of')] },
      { row_number: 3, errors: ['Name "wallet" is on an earlier row (row 1)'] },
      {
        row_number: 4,
        errors: [
          'Currency "XYZ" is not an ISO 4217 code',
          'Balance "ten" must be a number',
          'Date "2024-02-30" is not a date in the %Y-%m-%d format (from 1970 to five years ahead)',
        ],
      },
    ]);
    const refused = await cli.post("/imports", { type: "AccountImport", raw_file_content: file, publish: "true" }, headers);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatch(/^Row 2: Account type "Spaceship"/);
    expect(await counts()).toEqual(before);
    const tooMany = ["type,name,balance", ...Array.from({ length: 51 }, (_, i) => `Depository,Many ${i},1`)].join("\n");
    const capped = await cli.post("/imports/preflight", { type: "AccountImport", raw_file_content: tooMany }, headers);
    expect(capped.status).toBe(422);
    expect(capped.body.errors).toEqual(["An account import takes at most 50 rows (upstream's limit)"]);
    const missing = await cli.post("/imports/preflight", { type: "AccountImport", raw_file_content: "name,balance\nA,1\n" }, headers);
    expect(missing.body.data).toMatchObject({ valid: false, missing_required_headers: ["entity_type"] });
  });
});

const TRADES_CSV = [
  "date*,ticker*,exchange_operating_mic,currency,qty*,price*,account,name",
  "2025-05-15,AAPL,XNAS,USD,10,150.00,Brokerage,Apple purchase",
  "2025-05-16,MSFT,XNAS,USD,4,400.5,brokerage,",
  "2025-05-20,AAPL,XNAS,USD,-4,160.25,Brokerage,",
].join("\n");

describe("trade imports (TradeImport)", () => {
  test("preflight says what would be written; publish writes trades through the trade service, holdings follow; twice writes once", async () => {
    const before = await counts();
    const preflight = await cli.post("/imports/preflight", { type: "TradeImport", raw_file_content: TRADES_CSV }, headers);
    expect(preflight.status).toBe(200);
    expect(preflight.body.data).toMatchObject({
      type: "TradeImport",
      valid: true,
      stats: { rows_count: 3, importable_count: 3, duplicate_count: 0 },
      required_headers: ["date", "ticker", "qty", "price", "account"],
    });
    expect(await counts()).toEqual(before);

    const created = await cli.post("/imports", { type: "TradeImport", raw_file_content: TRADES_CSV, publish: "true" }, headers);
    expect(created.status).toBe(201);
    expect(created.body.data.stats).toMatchObject({ imported_count: 3, duplicate_count: 0 });
    const trades = await sql<{ ticker: string; date: string; qty: string; price: string; amount: string; name: string; label: string }>(
      `SELECT s.ticker, t.date::text, trim_scale(t.qty)::text AS qty, trim_scale(t.price)::text AS price, trim_scale(t.amount)::text AS amount,
              t.name, t.investment_activity_label AS label
         FROM trades t JOIN securities s ON s.id = t.security_id WHERE t.account_id = $1 ORDER BY t.date`,
      [brokerageId],
    );
    expect(trades).toEqual([
      { ticker: "AAPL", date: "2025-05-15", qty: "10", price: "150", amount: "1500", name: "Apple purchase", label: "Buy" },
      { ticker: "MSFT", date: "2025-05-16", qty: "4", price: "400.5", amount: "1602", name: "Buy 4.0 shares of MSFT", label: "Buy" },
      { ticker: "AAPL", date: "2025-05-20", qty: "-4", price: "160.25", amount: "-641", name: "Sell 4.0 shares of AAPL", label: "Sell" },
    ]);
    const held = await heldQuantities(brokerageId);
    expect(held.fromPositions).toEqual(held.fromTrades);
    expect(held.fromTrades).toEqual([
      { ticker: "AAPL", quantity: "6" },
      { ticker: "MSFT", quantity: "4" },
    ]);

    const again = await cli.post("/imports", { type: "TradeImport", raw_file_content: TRADES_CSV, publish: "true" }, headers);
    expect(again.body.data.stats).toMatchObject({ imported_count: 0, duplicate_count: 3 });
    expect((await counts()).trades).toBe(before.trades + 3);
    const rows = await cli.get(`/imports/${created.body.data.id}/rows`, headers);
    expect(rows.body.data[0].fields).toMatchObject({ ticker: "AAPL", exchange_operating_mic: "XNAS", qty: "10", price: "150.00" });
  });

  test("a sell beyond what is held, a cash account, another currency: row problems that preflight reports and publish refuses, writing nothing", async () => {
    const file = [
      "date,ticker,exchange_operating_mic,qty,price,account,currency",
      "2025-06-01,AAPL,xnas,-7,170,Brokerage,USD",
      "2025-06-01,AAPL,XNAS,1,170,Checking,USD",
      "2025-06-02,AAPL,XNAS,1,170,Brokerage,EUR",
      "2025-06-03,NEW,,-1,10,Brokerage,USD",
      "2025-06-03,AAPL,XNAS,0,10,Brokerage,USD",
    ].join("\n");
    const before = await counts();
    const preflight = await cli.post("/imports/preflight", { type: "TradeImport", raw_file_content: file }, headers);
    expect(preflight.body.data.valid).toBe(false);
    expect(preflight.body.data.row_errors).toEqual([
      { row_number: 1, errors: ["Qty: selling 7 AAPL on 2025-06-01 is more than the 6 held"] },
      { row_number: 2, errors: ['Account "Checking" is not an investment or crypto account; trades go to those'] },
      { row_number: 3, errors: ["Currency EUR is not the account's (USD)"] },
      { row_number: 4, errors: ["Qty: selling 1 NEW on 2025-06-03 is more than the 0 held"] },
      { row_number: 5, errors: ['Qty "0" must not be zero, with at most 10 decimals'] },
    ]);
    const refused = await cli.post("/imports", { type: "TradeImport", raw_file_content: file, publish: "true" }, headers);
    expect(refused.status).toBe(422);
    expect(await counts()).toEqual(before);
    // Selling what is held, on the day it is bought (buys of a day come first), is fine. A ticker on another exchange is another security.
    const sameDay = await cli.post(
      "/imports/preflight",
      {
        type: "TradeImport",
        account_id: brokerageId,
        raw_file_content: "date,ticker,exchange_operating_mic,qty,price\n2025-06-05,AAPL,XNAS,-8,1\n2025-06-05,AAPL,XNAS,2,1\n",
      },
      headers,
    );
    expect(sameDay.body.data).toMatchObject({ valid: true, stats: { importable_count: 2 } });
  });
});

/** A generated trade file: separator, formats, signage and buys and sells (some beyond what is held), a row repeated. */
const tradeFileArbitrary = fc.record({
  separator: fc.constantFrom(",", ";", "\t", "|"),
  dateStyle: fc.constantFrom("iso", "us", "eu"),
  decimalComma: fc.boolean(),
  bom: fc.boolean(),
  lineEnd: fc.constantFrom("\n", "\r\n"),
  inflowsNegative: fc.boolean(),
  rows: fc.array(
    fc.record({
      day: fc.integer({ min: 1, max: 28 }),
      ticker: fc.constantFrom("AAA", "BBB"),
      qty: fc.integer({ min: -5, max: 10 }).filter((qty) => qty !== 0),
      cents: fc.integer({ min: 1, max: 100_000 }),
      repeat: fc.boolean(),
    }),
    { minLength: 1, maxLength: 10 },
  ),
});
type TradeFile = typeof tradeFileArbitrary extends fc.Arbitrary<infer T> ? T : never;

function tradeCsv(file: TradeFile): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const lines = [["Date", "Ticker", "Quantity", "Price"].join(file.separator)];
  for (const row of file.rows) {
    const date =
      file.dateStyle === "iso"
        ? `2025-03-${pad(row.day)}`
        : file.dateStyle === "us"
          ? `03/${pad(row.day)}/2025`
          : `${pad(row.day)}/03/2025`;
    const qty = String(file.inflowsNegative ? -row.qty : row.qty);
    const price = (row.cents / 100).toFixed(2).replace(".", file.decimalComma ? "," : ".");
    const line = [date, row.ticker, qty, `"${price}"`].join(file.separator);
    lines.push(line);
    if (row.repeat) lines.push(line);
  }
  return (file.bom ? "\ufeff" : "") + lines.join(file.lineEnd) + file.lineEnd;
}

describe("any generated trade file: preflight's report is what publish writes; a refused file writes nothing; twice writes once", () => {
  test("property over separators, formats, signage, sells beyond what is held and repeated rows", async () => {
    await fc.assert(
      fc.asyncProperty(tradeFileArbitrary, async (file) => {
        const account = await createAccount(app.runtime.services, user, { name: `Generated ${Math.random()}`, accountType: "investment" });
        const settings = {
          type: "TradeImport",
          account_id: account.id,
          number_format: file.decimalComma ? "1.234,56" : "1,234.56",
          signage_convention: file.inflowsNegative ? "inflows_negative" : "inflows_positive",
        };
        const content = tradeCsv(file);
        const before = await counts();
        const preflight = (await cli.post("/imports/preflight", { ...settings, raw_file_content: content }, headers)).body.data;
        expect(await counts()).toEqual(before);
        // What the file means, worked out here: each day's buys before its sells, never below zero.
        const rows = file.rows.flatMap((row) => (row.repeat ? [row, row] : [row]));
        let oversold = false;
        for (const ticker of ["AAA", "BBB"]) {
          let held = 0;
          for (const day of [...new Set(rows.map((row) => row.day))].sort((a, b) => a - b)) {
            const todays = rows.filter((row) => row.ticker === ticker && row.day === day);
            held += todays.reduce((sum, row) => sum + row.qty, 0);
            if (held < 0) oversold = true;
          }
        }
        expect(preflight.valid).toBe(!oversold);
        const created = await cli.post("/imports", { ...settings, raw_file_content: content, publish: "true" }, headers);
        const after = await counts();
        if (preflight.valid) {
          expect(created.status).toBe(201);
          expect(preflight.stats.importable_count).toBe(rows.length);
          expect(created.body.data.stats.imported_count).toBe(preflight.stats.importable_count);
          expect(after.trades - before.trades).toBe(rows.length);
          const held = await heldQuantities(account.id);
          expect(held.fromPositions).toEqual(held.fromTrades);
          const again = await cli.post("/imports", { ...settings, raw_file_content: content, publish: "true" }, headers);
          expect(again.body.data.stats).toMatchObject({ imported_count: 0, duplicate_count: rows.length });
          expect((await counts()).trades).toBe(after.trades);
        } else {
          expect(created.status).toBe(422);
          expect(after).toEqual(before);
        }
      }),
      { numRuns: 15 },
    );
  });
});
