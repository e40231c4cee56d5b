/**
 * copyOut writes its values into the COPY statement as literals (COPY takes no parameters): for any
 * text a hostile client can send, and arrays of it, the rows are exactly those the same statement
 * returns with bind parameters. And a consumer that stops early leaves nothing behind: no error thrown
 * later, the pool still answers, the server runs no leftover COPY.
 */
import fc from "fast-check";
import type { Sequelize } from "sequelize";
import { copyOut, readRows } from "../../src/platform/common/sql";
import { CopyBinaryDecoder, fieldText } from "../../src/platform/db/copy-binary";
import { createSequelize } from "../../src/platform/db/database";
import { hostileText } from "../helpers/hostile-values";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";
import { eventually } from "../helpers/eventually";

let database: TestDatabase;
let sequelize: Sequelize;

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = createSequelize({ url: database.url, poolMax: 2 });
});

afterAll(async () => {
  await sequelize?.close();
  await database?.close();
});

const SELECT = "SELECT $1::text AS word, $2::text[]::text AS words, $3::timestamptz::text AS at, $4::int::text AS n";

async function copied(bind: unknown[]): Promise<string[]> {
  const decoder = new CopyBinaryDecoder(4);
  const rows: string[][] = [];
  for await (const chunk of copyOut(sequelize, SELECT, bind, "binary")) {
    const tuples = decoder.decode(chunk);
    for (let row = 0; row < tuples.rows; row++) rows.push([0, 1, 2, 3].map((field) => fieldText(tuples, row, field)));
  }
  decoder.finish();
  expect(rows).toHaveLength(1);
  return rows[0];
}

test("values written into COPY's text come back exactly as bind parameters give them", async () => {
  await fc.assert(
    fc.asyncProperty(hostileText, fc.array(hostileText, { maxLength: 4 }), async (word, words) => {
      const bind = [word, words, new Date("2024-01-31T23:59:59.999Z"), 42];
      const [expected] = await readRows<Record<string, string | number>>(sequelize, SELECT, bind);
      expect(await copied(bind)).toEqual([expected.word, expected.words, expected.at, expected.n]);
    }),
    { numRuns: 150 },
  );
  // A placeholder inside a value stays text: replacement happens once, over the statement only.
  expect((await copied(["$2 $1 '$3'", ["$1"], new Date(0), 1]))[0]).toBe("$2 $1 '$3'");
}, 60_000);

test("a consumer that stops after the first chunk: the connection is closed, nothing is thrown later, the pool answers", async () => {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on("uncaughtException", record);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      for await (const chunk of copyOut(sequelize, "SELECT repeat('x', 200) FROM generate_series(1, $1::int)", [500_000], "binary")) {
        expect(chunk.length).toBeGreaterThan(0);
        break;
      }
    }
    // Once the server has ended the COPYs (their connections closed), whatever closing them could throw has been thrown.
    await eventually(async () => {
      const [row] = await readRows<{ copies: string }>(
        sequelize,
        "SELECT count(*) AS copies FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY%' AND state = 'active'",
        [],
      );
      expect(Number(row.copies)).toBe(0);
    });
    expect(uncaught).toEqual([]);
  } finally {
    process.off("uncaughtException", record);
  }
});
