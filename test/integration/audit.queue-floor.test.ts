/**
 * The chain sequencer's queue floor (migration 0044, docs/audit-log.md): a run starts its scan of
 * audit_unchained above a position at or below which no entry can exist any more, so it does not step
 * over every entry taken since the last VACUUM. The floor must never pass an entry that a transaction
 * still open holds: that event would commit below the scan and never be linked.
 */
import { Client } from "pg";
import type { Transaction } from "sequelize";
import { runInAuditContext } from "../../src/platform/common/audit-context";
import type { AuditEventInput } from "../../src/audit/log/audit.service";
import { adminUrl } from "../helpers/database-urls";
import { eventually } from "../helpers/eventually";
import { startTestApp, type TestApp } from "../helpers/test-app";

/** FLOOR_LOOK_GAP in the migration: how far the floor lags before another database's transactions stop holding it. */
const FLOOR_LOOK_GAP = 10_000;

// A floor waits for transactions of every database on the server (test files run side by side).
jest.setTimeout(120_000);

let app: TestApp;
let superuser: Client;
beforeAll(async () => {
  app = await startTestApp();
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
});
afterAll(async () => {
  await superuser.end();
  await app.stop();
});

const context = { ipAddress: "10.1.2.3", userAgent: "jest", requestId: "req-floor", sessionId: null };

function record(action: string, transaction?: Transaction) {
  const { sequelize, services } = app.runtime;
  const input = { type: "user.updated", action, user: null } as AuditEventInput;
  return runInAuditContext(context, () =>
    transaction ? services.audit.record(transaction, input) : sequelize.transaction((own) => services.audit.record(own, input)),
  );
}

type Head = { below: number; mark: number | null };

async function head(): Promise<Head> {
  const { rows } = await superuser.query(`SELECT queue_below::float8 AS below, queue_mark::float8 AS mark FROM audit_chain_head`);
  return rows[0];
}

/** The last queue position handed out. */
async function lastPosition(): Promise<number> {
  const { rows } = await superuser.query(`SELECT last_value::float8 AS last FROM audit_unchained_position_seq`);
  return rows[0].last;
}

async function linkedIds(): Promise<string[]> {
  await app.runtime.services.audit.chainCommitted();
  const { rows } = await superuser.query(`SELECT event_id AS id FROM audit_chain ORDER BY seq`);
  return rows.map((row) => row.id);
}

/** Sequencer runs until the floor reaches `position` (each run marks, a later one settles the mark). */
function floorReaches(position: number) {
  return eventually(
    async () => {
      await app.runtime.services.audit.chainCommitted();
      const now = await head();
      if (now.below < position) throw new Error(`the floor is at ${JSON.stringify(now)}, below ${position}; ${await whatHoldsIt()}`);
    },
    { timeout: 30_000, what: `the queue floor at ${position}` },
  );
}

/**
 * Moves the queue's positions past the gap, as 10 000 events recorded meanwhile would, and returns the
 * last position skipped. Beyond the gap only this database's transactions hold the floor, so a test can
 * wait for the floor to move whatever test files of other databases are doing on the same server.
 */
async function jumpPastGap(): Promise<number> {
  const skippedTo = (await lastPosition()) + FLOOR_LOOK_GAP + 1;
  await superuser.query(`SELECT setval('audit_unchained_position_seq', $1)`, [skippedTo]);
  return skippedTo;
}

/** The transactions a mark waits for, as the server lists them: why a floor did not move, when it did not. */
async function whatHoldsIt(): Promise<string> {
  const { rows } = await superuser.query(`
    SELECT h.queue_mark_bound::text AS bound, x::text AS running,
           (SELECT json_agg(json_build_object('db', a.datname, 'pid', a.pid, 'state', a.state, 'query', left(a.query, 80)))
              FROM pg_stat_activity a WHERE a.backend_xid = x::xid) AS held_by
      FROM audit_chain_head h, pg_snapshot_xip(pg_current_snapshot()) AS x
     WHERE x < h.queue_mark_bound`);
  return `running below the bound: ${JSON.stringify(rows)}`;
}

/**
 * Runs the sequencer `runs` times while `holder` keeps a transaction open, and checks the floor stayed
 * below `position` throughout.
 */
async function floorStaysBelow(position: number, runs: number): Promise<void> {
  for (let run = 0; run < runs; run += 1) {
    await app.runtime.services.audit.chainCommitted();
    expect((await head()).below).toBeLessThan(position);
  }
}

/** A transaction that records one event and stays open until released; resolves once it has recorded. */
async function openRecording(action: string) {
  const { sequelize } = app.runtime;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let recorded!: (value: { id: string; position: number }) => void;
  const recordedIn = new Promise<{ id: string; position: number }>((resolve) => (recorded = resolve));
  const done = sequelize.transaction(async (transaction) => {
    const event = await record(action, transaction);
    const [[entry]] = (await sequelize.query(`SELECT position::float8 AS position FROM audit_unchained WHERE event_id = $1`, {
      bind: [event.id],
      transaction,
    })) as [Array<{ position: number }>, unknown];
    recorded({ id: event.id, position: entry.position });
    await held;
    return event;
  });
  const entry = await recordedIn;
  return { ...entry, release, done };
}

test("the floor follows the linked entries up when no transaction of this database holds one", async () => {
  for (let i = 0; i < 3; i += 1) await record(`quiet-${i}`);
  const skippedTo = await jumpPastGap();
  await record("after-jump");
  await floorReaches(skippedTo);
  expect(Number((await superuser.query(`SELECT count(*) FROM audit_unchained`)).rows[0].count)).toBe(0);
});

test("an event recorded in a transaction still open holds the floor below it, whatever is linked meanwhile, and is linked when it commits", async () => {
  // Marked while nothing newer has committed: the case a snapshot taken after the mark misses (its list of
  // running transactions stops at the newest one that has ended).
  const slow = await openRecording("slow-first");
  await floorStaysBelow(slow.position, 2);
  // Marked again after later events committed and were linked.
  const later: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    later.push((await record(`after-slow-${i}`)).id);
    await floorStaysBelow(slow.position, 2);
  }
  expect((await linkedIds()).slice(-3)).toEqual(later);

  slow.release();
  await slow.done;
  expect((await linkedIds()).slice(-1)).toEqual([slow.id]);
  expect(Number((await superuser.query(`SELECT count(*) FROM audit_unchained`)).rows[0].count)).toBe(0);
  const skippedTo = await jumpPastGap();
  await record("after-jump");
  await floorReaches(skippedTo);
  expect((await app.runtime.services.audit.verify()).ok).toBe(true);
});

test(`a transaction of another database holds the floor only until it lags ${FLOOR_LOOK_GAP} positions; one of this database holds it always`, async () => {
  const elsewhere = new Client({ connectionString: adminUrl() });
  const here = new Client({ connectionString: app.database.url });
  await Promise.all([elsewhere.connect(), here.connect()]);
  try {
    // Both take a transaction id and keep it, as a long report or a stuck session would.
    await elsewhere.query(`BEGIN; SELECT pg_current_xact_id()`);
    await record("before-gap");
    const near = await lastPosition();
    await floorStaysBelow(near, 3);

    // Far behind: the other database's transaction no longer counts, and the floor passes the stretch. (It
    // may stop just short of the newest entry: once it is that close, the other transaction counts again.)
    const firstJump = await jumpPastGap();
    await record("past-gap");
    await floorReaches(firstJump);

    // A transaction of this database counts however far behind the floor is.
    await here.query(`BEGIN; SELECT pg_current_xact_id()`);
    const secondJump = await jumpPastGap();
    await record("held-here");
    await floorStaysBelow(secondJump, 3);
    await here.query(`COMMIT`);
    await floorReaches(secondJump);
  } finally {
    await Promise.all([elsewhere.end(), here.end()]);
  }
  expect((await app.runtime.services.audit.verify()).ok).toBe(true);
});
