import { randomUUID } from "node:crypto";
import { Sequelize } from "sequelize";
import { up } from "../../src/platform/db/migrations/0015-ledger";
import { up as upDays } from "../../src/platform/db/migrations/0016-ledger-days";
import { up as upDayWrites } from "../../src/platform/db/migrations/0033-ledger-day-writes";
import { up as upDayRows } from "../../src/platform/db/migrations/0037-ledger-day-rows";
import { oracle } from "../helpers/ledger-oracle";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/**
 * The migration that introduced the ledger, run over data as it was before it: balances were stored
 * figures. Every account must keep today's figure, now derived from an opening anchor (and, for a
 * bank-fed account, a current anchor), with a balance row for each day something happened.
 */
let database: TestDatabase;
let sequelize: Sequelize;
beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = new Sequelize(database.url, { logging: false });
});
afterAll(async () => {
  await sequelize.close();
  await database.close();
});

test("existing accounts keep today's balances, now derived from anchors the migration dated as upstream", async () => {
  const family = randomUUID();
  const [checking, card, house, fed] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const connection = randomUUID();
  await sequelize.query(`
    DROP VIEW balances; DROP TABLE ledger_days; DROP TABLE valuations; ALTER TABLE accounts DROP COLUMN cash_balance;
    INSERT INTO families (id, name) VALUES ('${family}', 'Before the ledger');
    INSERT INTO accounts (id, family_id, name, account_type, classification, currency, balance) VALUES
      ('${checking}', '${family}', 'Checking', 'depository', 'asset', 'USD', 6281.42),
      ('${card}', '${family}', 'Card', 'credit_card', 'liability', 'USD', 310.10),
      ('${house}', '${family}', 'House', 'property', 'asset', 'USD', 400000),
      ('${fed}', '${family}', 'Bank-fed', 'depository', 'asset', 'USD', 950.00);
    INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name) VALUES
      (gen_random_uuid(), '${family}', '${checking}', '2020-05-04', 100.00, 'USD', 'Old expense'),
      (gen_random_uuid(), '${family}', '${checking}', CURRENT_DATE - 3, -2500.00, 'USD', 'Salary'),
      (gen_random_uuid(), '${family}', '${card}', CURRENT_DATE - 10, 310.10, 'USD', 'Groceries'),
      (gen_random_uuid(), '${family}', '${house}', CURRENT_DATE - 30, 1200, 'USD', 'Roof'),
      (gen_random_uuid(), '${family}', '${fed}', CURRENT_DATE - 5, 50.00, 'USD', 'Imported');
    INSERT INTO bank_connections (id, family_id, provider, name, credentials, include_pending) VALUES
      ('${connection}', '${family}', 'simplefin', 'Bank', 'sealed', false);
    INSERT INTO bank_provider_accounts (id, family_id, connection_id, account_id, external_id, name, currency, balance, balance_date) VALUES
      (gen_random_uuid(), '${family}', '${connection}', '${fed}', 'ext-1', 'Bank-fed', 'USD', 950.00, CURRENT_DATE - 1);
  `);

  await up({ sequelize, queryInterface: sequelize.getQueryInterface() });
  const [stored] = (await sequelize.query(`SELECT id, account_id AS "accountId", date::text AS date FROM balances`)) as [
    Array<{ id: string; accountId: string; date: string }>,
    unknown,
  ];
  await upDays({ sequelize, queryInterface: sequelize.getQueryInterface() });

  const [balances] = (await sequelize.query(`SELECT id, balance::text AS balance FROM accounts WHERE family_id = '${family}'`)) as [
    Array<{ id: string; balance: string }>,
    unknown,
  ];
  expect(Object.fromEntries(balances.map((row) => [row.id, row.balance]))).toEqual({
    [checking]: "6281.4200",
    [card]: "310.1000",
    [house]: "400000.0000",
    [fed]: "950.0000",
  });
  const [anchors] = (await sequelize.query(
    `SELECT account_id AS "accountId", kind, date::text AS date, amount::text AS amount,
            (CURRENT_DATE - interval '2 years')::date::text AS "twoYearsAgo", CURRENT_DATE::text AS today
       FROM valuations WHERE family_id = '${family}' ORDER BY account_id, kind`,
  )) as [Array<Record<string, string>>, unknown];
  const of = (id: string, kind: string) => anchors.find((row) => row.accountId === id && row.kind === kind)!;
  const { twoYearsAgo, today } = anchors[0];
  // The oldest transaction is older than two years: the anchor is the day before it.
  expect(of(checking, "opening_anchor")).toMatchObject({ date: "2020-05-03", amount: "3881.4200" });
  expect(of(card, "opening_anchor")).toMatchObject({ date: twoYearsAgo, amount: "0.0000" });
  expect(of(house, "opening_anchor")).toMatchObject({ date: twoYearsAgo, amount: "400000.0000" });
  expect(of(fed, "current_anchor")).toMatchObject({ date: today, amount: "950.0000" });
  expect(anchors.filter((row) => row.kind === "current_anchor")).toHaveLength(1);

  const expected = await oracle(database.url, family);
  const [rows] = (await sequelize.query(
    `SELECT account_id AS "accountId", date::text AS date, round(end_balance, 2)::text AS balance FROM balances b
      JOIN accounts a ON a.id = b.account_id WHERE a.family_id = '${family}' ORDER BY account_id, date`,
  )) as [Array<{ accountId: string; date: string; balance: string }>, unknown];
  // The view holds the days with something; the oracle has every calendar day from each one's on.
  const rowDays = new Set(rows.map((row) => `${row.accountId} ${row.date}`));
  expect(rows).toEqual(
    expected.days
      .filter((day) => rowDays.has(`${day.accountId} ${day.date}`))
      .map(({ accountId, date, balance }) => ({ accountId, date, balance })),
  );
  expect(rows.filter((row) => row.accountId === fed).map((row) => row.balance)).toEqual(["1000.00", "950.00", "950.00"]);
  // 0016 keeps each day's row id, and the accounts' balances, now with their cash part.
  const [kept] = (await sequelize.query(`SELECT id, account_id AS "accountId", date::text AS date FROM ledger_days`)) as [
    Array<{ id: string; accountId: string; date: string }>,
    unknown,
  ];
  const byDay = (list: Array<{ id: string; accountId: string; date: string }>) =>
    list.map((row) => `${row.accountId} ${row.date} ${row.id}`).sort();
  expect(byDay(kept)).toEqual(byDay(stored));
  // 0033 gives each day the id its account and day make, and leaves every figure as it was.
  await sequelize.query(
    "DROP TRIGGER accounts_forget_ledger_days ON accounts; DROP FUNCTION ledger_days_forget_accounts(); DROP FUNCTION ledger_day_id(uuid, date);",
  );
  await sequelize.query(
    "ALTER TABLE ledger_days ADD UNIQUE (id), ADD FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE",
  );
  await upDayWrites({ sequelize, queryInterface: sequelize.getQueryInterface() });
  const [renamed] = (await sequelize.query(
    `SELECT count(*) FILTER (WHERE id = ledger_day_id(account_id, date))::int AS derived, count(*)::int AS total FROM ledger_days`,
  )) as [Array<{ derived: number; total: number }>, unknown];
  expect(renamed[0]).toEqual({ derived: kept.length, total: kept.length });
  const [again] = (await sequelize.query(
    `SELECT account_id AS "accountId", date::text AS date, round(end_balance, 2)::text AS balance FROM balances b
      JOIN accounts a ON a.id = b.account_id WHERE a.family_id = '${family}' ORDER BY account_id, date`,
  )) as [Array<{ accountId: string; date: string; balance: string }>, unknown];
  expect(again).toEqual(rows);
  // 0037 stops storing the id (the view computes it, the same) and the family index: figures unchanged.
  const [named] = (await sequelize.query(
    `SELECT id, account_id AS "accountId", date::text AS date FROM ledger_days WHERE family_id = '${family}'`,
  )) as [Array<{ id: string; accountId: string; date: string }>, unknown];
  await upDayRows({ sequelize, queryInterface: sequelize.getQueryInterface() });
  const [computed] = (await sequelize.query(
    `SELECT id, account_id AS "accountId", date::text AS date FROM balances b WHERE family_id = '${family}'`,
  )) as [Array<{ id: string; accountId: string; date: string }>, unknown];
  expect(byDay(computed)).toEqual(byDay(named));
  const [columns] = (await sequelize.query(
    `SELECT (SELECT count(*) FROM information_schema.columns WHERE table_name = 'ledger_days' AND column_name = 'id')::int AS id,
            (SELECT count(*) FROM pg_indexes WHERE tablename = 'ledger_days')::int AS indexes`,
  )) as [Array<{ id: number; indexes: number }>, unknown];
  expect(columns[0]).toEqual({ id: 0, indexes: 1 });
  const [third] = (await sequelize.query(
    `SELECT account_id AS "accountId", date::text AS date, round(end_balance, 2)::text AS balance FROM balances b
      JOIN accounts a ON a.id = b.account_id WHERE a.family_id = '${family}' ORDER BY account_id, date`,
  )) as [Array<{ accountId: string; date: string; balance: string }>, unknown];
  expect(third).toEqual(rows);
  const [after] = (await sequelize.query(
    `SELECT id, balance::text AS balance, cash_balance::text AS cash FROM accounts WHERE family_id = '${family}'`,
  )) as [Array<{ id: string; balance: string; cash: string }>, unknown];
  expect(Object.fromEntries(after.map((row) => [row.id, [row.balance, row.cash]]))).toEqual({
    [checking]: ["6281.4200", "6281.4200"],
    [card]: ["310.1000", "310.1000"],
    [house]: ["400000.0000", "400000.0000"],
    [fed]: ["950.0000", "950.0000"],
  });
});
