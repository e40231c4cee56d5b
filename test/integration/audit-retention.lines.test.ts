/**
 * The archive writer renders lines with ARCHIVE_LINE_FAST (one concat() of pieces, for speed); every
 * other reader and writer of archive lines (verification's monthLines, archives written before) used
 * ARCHIVE_LINE (json_build_object). For any event a hostile client could have caused to be recorded,
 * both must give the same bytes, or archives would stop matching their manifests' SHA-256.
 */
import fc from "fast-check";
import type { Sequelize } from "sequelize";
import { ARCHIVE_LINE, ARCHIVE_LINE_FAST } from "../../src/audit/retention/retention.repository";
import { readRows } from "../../src/platform/common/sql";
import { createSequelize } from "../../src/platform/db/database";
import { anyJson, hostileText } from "../helpers/hostile-values";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

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

const EVENT = `(SELECT $1::uuid AS id, $2::timestamptz AS occurred_at, $3::text AS event_type, $4::text AS severity, $5::uuid AS user_id,
  $6::text AS user_email, $7::text AS provider, $8::text AS action, $9::text AS resource_type, $10::text AS resource_id,
  $11::text AS resource_label, $12::inet AS ip_address, $13::text AS user_agent, $14::text AS session_id, $15::text AS request_id,
  $16::jsonb AS changes, $17::text AS error) AS e`;
const LINK = `(SELECT $18::bigint AS seq, $19::bytea AS prev_hash, $20::bytea AS hash) AS c`;

const text = fc.option(hostileText, { nil: null });
// jsonb refuses the escapes \u0000 (PostgreSQL text cannot hold NUL) and of lone surrogates: no event can carry them.
const changes = fc.option(
  anyJson.filter((value) => !/\\u(0000|d[89a-f])/i.test(JSON.stringify(value ?? null))),
  { nil: null },
);
const event = fc.tuple(
  fc.uuid(),
  fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true }),
  hostileText,
  hostileText,
  fc.option(fc.uuid(), { nil: null }),
  text,
  text,
  text,
  text,
  text,
  text,
  fc.constantFrom(null, "10.1.2.3", "192.168.1.5/24", "::1", "2001:db8::ff00:42:8329", "::ffff:10.0.0.1"),
  text,
  text,
  text,
  changes,
  text,
  fc.bigInt({ min: 1n, max: 2n ** 62n }),
  fc.option(fc.uint8Array({ minLength: 32, maxLength: 32 }), { nil: null }),
  fc.uint8Array({ minLength: 32, maxLength: 32 }),
);

test("the fast line rendering gives json_build_object's bytes exactly, for any event", async () => {
  await fc.assert(
    fc.asyncProperty(event, async (values) => {
      const bind = values.map((value, index) => {
        if (value instanceof Uint8Array) return Buffer.from(value);
        if (typeof value === "bigint") return value.toString();
        if (index === 15 && value !== null) return JSON.stringify(value);
        return value;
      });
      const [row] = await readRows<{ slow: string; fast: string }>(
        sequelize,
        `SELECT ${ARCHIVE_LINE} AS slow, ${ARCHIVE_LINE_FAST} AS fast FROM ${EVENT}, ${LINK}`,
        bind,
      );
      expect(row.fast).toBe(row.slow);
    }),
    { numRuns: 100 },
  );
}, 60_000);
