import { QueryTypes } from "sequelize";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Recurring detection on crafted series, as of a fixed day (2026-06-20: the window starts 2026-03-20,
 * the newest occurrence must be on or after 2026-05-06). A group is one account, merchant (or name when
 * there is none), amount to the cent and currency; three or more whose days of month cluster are a
 * pattern. The pure rules (cadence, expected day, next date) are test/unit/planning.recurring-detect.test.ts.
 */
const AS_OF = "2026-06-20";
let app: TestApp;
let user: TestUser;
let accountId: string;

type Detected = { name: string | null; merchant: string | null; amount: string; day: number; last: string; next: string; count: number };

async function insert(rows: Array<{ date: string; amount: string; name: string; merchantId?: string }>): Promise<void> {
  for (const row of rows)
    await app.runtime.sequelize.query(
      `INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, merchant_id)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, 'USD', $5, $6)`,
      { bind: [user.familyId, accountId, row.date, row.amount, row.name, row.merchantId ?? null] },
    );
}

const series = (name: string, amounts: string[], dates: string[], merchantId?: string) =>
  dates.map((date, index) => ({ date, amount: amounts[index % amounts.length], name, merchantId }));

async function detected(): Promise<Detected[]> {
  return app.runtime.sequelize.query<Detected>(
    `SELECT r.name, m.name AS merchant, r.amount::text AS amount, r.expected_day_of_month AS day, r.last_occurrence_date::text AS last,
            r.next_expected_date::text AS next, r.occurrence_count AS count
       FROM recurring_transactions r LEFT JOIN merchants m ON m.id = r.merchant_id
      WHERE r.family_id = $1 AND NOT r.manual ORDER BY coalesce(r.name, m.name)`,
    { bind: [user.familyId], type: QueryTypes.SELECT },
  );
}

beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services);
  accountId = (await createAccount(app.runtime.services, user)).id;
  const phoneco = await app.runtime.services.merchants.create(user.actor, { name: "Phoneco" });
  const mondays = Array.from({ length: 13 }, (_, week) => new Date(Date.UTC(2026, 2, 23 + 7 * week)).toISOString().slice(0, 10));
  await insert([
    // Monthly, the same amount, about the same day: a pattern.
    ...series("Streamly", ["15.99"], ["2026-04-05", "2026-05-04", "2026-06-06"]),
    // Monthly, amounts differing below the cent: one group at 30.00.
    ...series("Water", ["30.001", "30.004", "29.996"], ["2026-04-15", "2026-05-15", "2026-06-15"]),
    // Monthly, the amount drifting by more than a cent: two groups, neither of three.
    ...series("Power", ["60.00", "60.00", "61.50"], ["2026-04-10", "2026-05-10", "2026-06-10"]),
    // By merchant, whatever the names.
    ...series("PHONECO 1", ["25.00"], ["2026-04-28"], phoneco.id),
    ...series("PHONECO 2", ["25.00"], ["2026-05-29"], phoneco.id),
    ...series("PHONECO 3", ["25.00"], ["2026-06-01"], phoneco.id),
    // Income is a pattern too (money in, negative).
    ...series("Salary", ["-3000.00"], ["2026-03-25", "2026-04-25", "2026-05-25"]),
    // Weekly, one amount: upstream's rule reads it as monthly (the deviation of the distances is small).
    ...series("Coffee club", ["5.00"], mondays),
    // Yearly: one occurrence in the window.
    ...series("Insurance", ["400.00"], ["2025-06-01", "2026-06-01"]),
    // Irregular: three on the 10th and one on the 25th (deviation 6.5).
    ...series("Bakery", ["4.50"], ["2026-04-10", "2026-05-10", "2026-06-10", "2026-06-25"]),
    // Regular but stale: the newest is before 2026-05-06.
    ...series("Old gym", ["40.00"], ["2026-03-25", "2026-04-01", "2026-04-25"]),
    // Before the window: only two of these count.
    ...series("Magazine", ["7.00"], ["2026-03-01", "2026-04-01", "2026-05-01"]),
  ]);
});
afterAll(() => app.stop());

test("detects the monthly series, to the cent, by merchant or name, and no other", async () => {
  expect(await app.runtime.services.recurring.detect(user.actor, AS_OF)).toBe(5);
  expect(await detected()).toEqual([
    { name: "Coffee club", merchant: null, amount: "5.0000", day: 18, last: "2026-06-15", next: "2026-07-18", count: 13 },
    { name: null, merchant: "Phoneco", amount: "25.0000", day: 29, last: "2026-06-01", next: "2026-07-29", count: 3 },
    { name: "Salary", merchant: null, amount: "-3000.0000", day: 25, last: "2026-05-25", next: "2026-06-25", count: 3 },
    { name: "Streamly", merchant: null, amount: "15.9900", day: 5, last: "2026-06-06", next: "2026-07-05", count: 3 },
    { name: "Water", merchant: null, amount: "30.0000", day: 15, last: "2026-06-15", next: "2026-07-15", count: 3 },
  ]);
});

test("detecting again refreshes the same rows and keeps the status a client set", async () => {
  const before = await app.runtime.services.recurring.list(user.actor, { status: null }, 1, 100);
  const streamly = before.items.find((row) => row.name === "Streamly")!;
  await app.runtime.services.recurring.update(user.actor, streamly.id, { status: "inactive", nextExpectedDate: "2030-01-01" });
  expect(await app.runtime.services.recurring.detect(user.actor, AS_OF)).toBe(5);
  const after = await app.runtime.services.recurring.list(user.actor, { status: null }, 1, 100);
  expect(after.items.map((row) => row.id).sort()).toEqual(before.items.map((row) => row.id).sort());
  expect(await app.runtime.services.recurring.get(user.actor, streamly.id)).toMatchObject({
    status: "inactive",
    nextExpectedDate: "2026-07-05",
  });
});

test("a hand-entered row for a detected pattern is left alone, and no detected row is added beside it", async () => {
  const other = await createUser(app.runtime.services);
  const account = await createAccount(app.runtime.services, other);
  const manual = await app.runtime.services.recurring.create(other.actor, {
    name: "Gym",
    amount: "40.00",
    accountId: account.id,
    expectedDayOfMonth: 3,
    lastOccurrenceDate: "2026-01-03",
    nextExpectedDate: "2026-02-03",
  });
  for (const date of ["2026-04-03", "2026-05-03", "2026-06-03"])
    await app.runtime.sequelize.query(
      `INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name) VALUES (gen_random_uuid(), $1, $2, $3, 40, 'USD', 'Gym')`,
      { bind: [other.familyId, account.id, date] },
    );
  expect(await app.runtime.services.recurring.detect(other.actor, AS_OF)).toBe(0);
  const { items } = await app.runtime.services.recurring.list(other.actor, { status: null }, 1, 100);
  expect(items).toHaveLength(1);
  expect(items[0]).toMatchObject({ id: manual.id, manual: true, lastOccurrenceDate: "2026-01-03", nextExpectedDate: "2026-02-03" });
});
