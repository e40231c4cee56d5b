/**
 * countWithin counts a statement's rows through a cursor in two steps, each under what is left of
 * the deadline: a count that finishes is exact, one that runs out of time answers the rows it moved
 * over before the step that was cut (a lower bound), and either way the connection goes back to the
 * pool clean (no transaction, no cursor, no statement_timeout left on it).
 */
import fc from "fast-check";
import type { Sequelize } from "sequelize";
import { countWithin, readRows } from "../../src/platform/common/sql";
import { createSequelize } from "../../src/platform/db/database";
import { hostileText } from "../helpers/hostile-values";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

let database: TestDatabase;
let sequelize: Sequelize;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection: what a count leaves on it, the next statement sees.
  sequelize = createSequelize({ url: database.url, poolMax: 1 });
});

afterAll(async () => {
  await sequelize?.close();
  await database?.close();
});

const inSeconds = (seconds: number) => performance.now() + seconds * 1000;

async function connectionState() {
  const [row] = await readRows<{ timeout: string; cursors: number; inTransaction: boolean }>(
    sequelize,
    `SELECT current_setting('statement_timeout') AS timeout, (SELECT count(*)::int FROM pg_cursors) AS cursors,
            now() <> statement_timestamp() AS "inTransaction"`,
    [],
  );
  return row;
}

test("a count that finishes is exact, at every size around its two steps (a quarter of its reach, then the rest), and stops at its reach", async () => {
  const sql = "SELECT g FROM generate_series(1, $1::int) AS g WHERE g > $2::int";
  for (const rows of [0, 1, 249, 250, 251, 999, 1000, 1001, 5000]) {
    expect(await countWithin(sequelize, sql, [rows + 7, 7], { upTo: 1000, deadline: inSeconds(30) })).toEqual({
      counted: Math.min(rows, 1000),
      complete: true,
    });
  }
  expect(await countWithin(sequelize, sql, [10_007, 7], { upTo: 10_001, deadline: inSeconds(30) })).toEqual({
    counted: 10_000,
    complete: true,
  });
  expect(await connectionState()).toEqual({ timeout: "0", cursors: 0, inTransaction: false });
});

test("values written into the cursor's text (the first round trip's statements take no parameters) compare exactly as bound ones", async () => {
  await fc.assert(
    fc.asyncProperty(hostileText, fc.array(hostileText, { maxLength: 3 }), async (word, words) => {
      const sql = "SELECT g FROM generate_series(1, 3) AS g WHERE $1::text = $2::text AND $3::text[] = $4::text[]";
      const within = { upTo: 10, deadline: inSeconds(30) };
      expect(await countWithin(sequelize, sql, [word, word, words, words], within)).toEqual({ counted: 3, complete: true });
      expect(await countWithin(sequelize, sql, [word, `${word}'`, words, words], within)).toEqual({ counted: 0, complete: true });
    }),
    { numRuns: 100 },
  );
});

test("a count cut by its deadline answers the steps it finished, a lower bound, and leaves the connection clean", async () => {
  // Rows past 300 take a second each: the first step (250 rows) finishes, the second (rows 251-1000) is cut.
  const slowPast300 = `SELECT g FROM generate_series(1, 1000) AS g WHERE g <= 300 OR pg_sleep(1) IS NOT NULL`;
  const started = performance.now();
  const count = await countWithin(sequelize, slowPast300, [], { upTo: 1000, deadline: inSeconds(0.5) });
  expect(count).toEqual({ counted: 250, complete: false });
  // The cut step stopped at the deadline, not a second of sleep later.
  expect(performance.now() - started).toBeLessThan(5000);
  expect(await connectionState()).toEqual({ timeout: "0", cursors: 0, inTransaction: false });
});

test("counts cut at every point of their steps leave the one pooled connection usable", async () => {
  // A timer that fires just as a step ends reaches the connection's next statement (the count's
  // ROLLBACK, or the pool's next user): before countWithin settled it, one count in about 2 000 here
  // left its connection in an aborted transaction, and every later statement on it failed.
  let cut = 0;
  for (let i = 0; i < 1500; i++) {
    const count = await countWithin(sequelize, "SELECT g FROM generate_series(1, 3000) AS g WHERE md5(g::text) <> ''", [], {
      upTo: 3000,
      deadline: performance.now() + 1 + (i % 9) * 0.5,
    });
    if (!count.complete) cut++;
    expect(await readRows(sequelize, "SELECT 1 AS one", [])).toEqual([{ one: 1 }]);
  }
  expect(cut).toBeGreaterThan(0);
  expect(await connectionState()).toEqual({ timeout: "0", cursors: 0, inTransaction: false });
});

test("a deadline already past counts nothing and runs nothing", async () => {
  expect(await countWithin(sequelize, "SELECT 1 / 0", [], { upTo: 10, deadline: performance.now() - 1 })).toEqual({
    counted: 0,
    complete: false,
  });
});

test("an error other than the deadline is thrown as a DatabaseError, and the connection is still usable", async () => {
  await expect(
    countWithin(sequelize, "SELECT 1 / (g - 600) FROM generate_series(1, 1000) AS g", [], { upTo: 1000, deadline: inSeconds(30) }),
  ).rejects.toMatchObject({
    name: "SequelizeDatabaseError",
    parent: { code: "22012" },
  });
  expect(await connectionState()).toEqual({ timeout: "0", cursors: 0, inTransaction: false });
});
