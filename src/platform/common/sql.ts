import { createHash } from "node:crypto";
import type { ClientBase } from "pg";
import { escapeLiteral, prepareValue } from "pg/lib/utils";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DatabaseError, type Options, QueryTypes, type Sequelize, type Transaction } from "sequelize";

/**
 * Adds `value` to a statement's bind parameters and returns its placeholder ($1, $2 …): the one way
 * SQL built from optional filters gets its parameters. Values never enter the SQL text, but for
 * copyOut's, which pg's own serialiser and escaping write into it (COPY takes no parameters).
 */
export function bindParam(bind: unknown[], value: unknown): string {
  bind.push(value);
  return `$${bind.length}`;
}

/** Runs a parameterised SELECT ($1, $2 … bind parameters) and returns plain rows. */
export function selectRows<Row extends object>(
  sequelize: Sequelize,
  sql: string,
  bind: unknown[],
  transaction?: Transaction,
): Promise<Row[]> {
  return sequelize.query<Row>(sql, { bind, type: QueryTypes.SELECT, transaction });
}

/**
 * A read on a request's hot path (authentication, a page and its relations): one pooled connection
 * queried directly, without Sequelize's per-statement work (options cloning, hooks, a stack trace
 * captured per query), which cost more CPU than the statement's own round trip. Read-only statements
 * only; inside a transaction it is selectRows. Everything else stays as selectRows does it: the same
 * pool, the statement logged, NUL in text escaped as Sequelize escapes it, errors wrapped in
 * Sequelize's DatabaseError (so asDomainError reads the SQLSTATE from `parent` either way).
 */
export async function readRows<Row extends object>(
  sequelize: Sequelize,
  sql: string,
  bind: unknown[],
  transaction?: Transaction,
): Promise<Row[]> {
  if (transaction) return selectRows<Row>(sequelize, sql, bind, transaction);
  const values = prepareDirectQuery(sequelize, sql, bind);
  const connection = await sequelize.connectionManager.getConnection({ type: "read" });
  try {
    return (await (connection as unknown as ClientBase).query(sql, values)).rows as Row[];
  } catch (error) {
    throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
  } finally {
    void sequelize.connectionManager.releaseConnection(connection);
  }
}

/**
 * readRows as a prepared statement: each pooled connection parses and plans `sql` once (named after a
 * hash of its text) and later runs only execute it. For a hot read whose planning costs more than its
 * execution (a statement over views, several windows: the ledger's balance pages and series), or that
 * a route runs on every request (a transaction by id and its relations: parsed and planned on every
 * GET, they took the service ~15% more CPU per request and twice the latency; docs/benchmarks.md).
 * Only for statements whose best plan does not depend on the values: from its sixth run PostgreSQL
 * may settle on a generic plan. Inside a transaction it is runPrepared on the transaction's connection.
 */
export async function readPrepared<Row extends object>(
  sequelize: Sequelize,
  sql: string,
  bind: unknown[],
  transaction?: Transaction,
): Promise<Row[]> {
  if (transaction) return runPrepared<Row>(sequelize, sql, bind, transaction);
  const values = prepareDirectQuery(sequelize, sql, bind);
  const connection = await sequelize.connectionManager.getConnection({ type: "read" });
  try {
    return (await (connection as unknown as ClientBase).query({ name: statementName(sql), text: sql, values })).rows as Row[];
  } catch (error) {
    throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
  } finally {
    void sequelize.connectionManager.releaseConnection(connection);
  }
}

/**
 * A statement of a write on the write's transaction, as a prepared statement on the transaction's
 * connection (named as readPrepared names it): for a statement that runs on every write and whose
 * planning costs more than its execution (the ledger's refresh of a day and its lock, each a few
 * CTEs). Returns the rows; errors are wrapped as Sequelize wraps them.
 */
export async function runPrepared<Row extends object>(
  sequelize: Sequelize,
  sql: string,
  bind: unknown[],
  transaction: Transaction,
): Promise<Row[]> {
  const values = prepareDirectQuery(sequelize, sql, bind);
  // Sequelize keeps the transaction's pg client as `connection` (not in its typings).
  const connection = (transaction as unknown as { connection: ClientBase }).connection;
  try {
    return (await connection.query({ name: statementName(sql), text: sql, values })).rows as Row[];
  } catch (error) {
    throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
  }
}

/**
 * One statement of runPipelined. `plannedEachTime`: sent unnamed, so PostgreSQL plans it for its
 * values on every run, where a prepared statement settles on a generic plan from its sixth run: for a
 * rare, heavy statement whose best plan depends on how many rows its values select (an account's
 * whole history: an index or the whole table), a plan for the values is worth the millisecond.
 */
export type PipelinedStatement = { sql: string; bind: unknown[]; plannedEachTime?: boolean };

/**
 * Statements of a write sent together on the write's transaction, each prepared as runPrepared
 * prepares it: one round trip instead of one per statement. PostgreSQL still runs them one after
 * the other, each with its own snapshot, so a statement that waited for a lock is followed by one
 * that sees what the lock's holder committed. The connection is pipelined (node-postgres' pipeline
 * mode) only while they run. Returns each statement's rows; the first error is thrown once all have
 * answered (after an error the rest fail too: the transaction is aborted).
 */
export async function runPipelined(
  sequelize: Sequelize,
  statements: ReadonlyArray<PipelinedStatement>,
  transaction: Transaction,
): Promise<unknown[][]> {
  const connection = (transaction as unknown as { connection: ClientBase & { pipeline: boolean } }).connection;
  connection.pipeline = true;
  let answers: PromiseSettledResult<{ rows: unknown[] }>[];
  try {
    answers = await Promise.allSettled(
      statements.map(({ sql, bind, plannedEachTime }) =>
        connection.query({
          ...(plannedEachTime ? {} : { name: statementName(sql) }),
          text: sql,
          values: prepareDirectQuery(sequelize, sql, bind),
        }),
      ),
    );
  } finally {
    connection.pipeline = false;
  }
  const failed = answers.find((answer): answer is PromiseRejectedResult => answer.status === "rejected");
  if (failed) throw new DatabaseError(failed.reason as ConstructorParameters<typeof DatabaseError>[0]);
  return answers.map((answer) => (answer as PromiseFulfilledResult<{ rows: unknown[] }>).value.rows);
}

const statementName = (sql: string) => `p_${createHash("sha1").update(sql).digest("hex").slice(0, 24)}`;

/** What Sequelize does before a statement that a direct query must do too: log it, escape NUL in text. */
function prepareDirectQuery(sequelize: Sequelize, sql: string, bind: unknown[]): unknown[] {
  // Sequelize's typings leave out `options`, which its own query() reads for this logging hook.
  const { logging } = (sequelize as Sequelize & { options: Pick<Options, "logging"> }).options;
  if (typeof logging === "function") logging(`Executing (default): ${sql}`);
  return bind.map(escapeNul);
}

/** NUL in text (and in arrays of text) written as Sequelize writes it: PostgreSQL text cannot hold it. */
function escapeNul(value: unknown): unknown {
  if (typeof value === "string") return value.replace(/\0/g, "\\0");
  return Array.isArray(value) ? value.map(escapeNul) : value;
}

/**
 * Streams `COPY (select) TO STDOUT (format)` from one pooled connection: the bytes PostgreSQL writes,
 * as they arrive, pulled (so a slow consumer slows the server down instead of buffering). COPY takes
 * no bind parameters, so each $n is replaced by its value as a literal, serialised as pg serialises a
 * parameter and escaped by pg's escapeLiteral. A consumer that stops early gets its connection closed
 * (a COPY cannot be interrupted and the connection reused).
 */
export async function* copyOut(
  sequelize: Sequelize,
  select: string,
  bind: unknown[],
  format: "binary" | "csv" | "text",
  transaction?: Transaction,
): AsyncGenerator<Buffer> {
  const sql = `COPY (${withValuesWritten(select, bind)}) TO STDOUT (FORMAT ${format})`;
  prepareDirectQuery(sequelize, sql, []);
  // Within `transaction` (several COPYs reading one snapshot), on its connection, which stays the transaction's.
  const own = !transaction;
  const connection = (transaction
    ? (transaction as Transaction & { connection: unknown }).connection
    : await sequelize.connectionManager.getConnection({ type: "read" })) as unknown as ClientBase;
  let finished = false;
  try {
    const stream = connection.query(copyTo(sql));
    // The loop below sees the stream's errors; this keeps one raised after the consumer stopped early
    // (the connection is closed under a running COPY then) from being thrown with no listener.
    stream.on("error", () => undefined);
    for await (const chunk of stream) yield chunk as Buffer;
    finished = true;
  } catch (error) {
    throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
  } finally {
    if (!own) {
      // A COPY stopped early cannot be interrupted: the transaction's connection is closed, and the transaction fails with it.
      if (!finished) (connection as ClientBase & { end(): Promise<void> }).end().catch(() => undefined);
    } else if (finished) void sequelize.connectionManager.releaseConnection(connection as never);
    else await sequelize.connectionManager.destroyConnection(connection as never).catch(() => undefined);
  }
}

/**
 * `sql` with each $n replaced by its value as a literal, serialised as pg serialises a parameter and
 * escaped by pg's escapeLiteral: for statements that take no parameters (COPY), or that must travel
 * with others in one round trip (a simple query's several statements).
 */
function withValuesWritten(sql: string, bind: unknown[]): string {
  return sql.replace(/\$(\d+)/g, (placeholder, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= bind.length) throw new Error(`No value for ${placeholder}`);
    const value = prepareValue(escapeNul(bind[index]));
    if (typeof value !== "string" && value !== null) throw new Error(`${placeholder} cannot be written as text`);
    return value === null ? "NULL" : escapeLiteral(value);
  });
}

/** A value as COPY's text format writes it: \\N for NULL, arrays as PostgreSQL literals, NUL as Sequelize writes it. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  // Most fields are plain text: nothing to serialise, and usually nothing to escape.
  if (typeof value === "string" && !COPY_SPECIAL.test(value)) return value;
  const text = prepareValue(escapeNul(value));
  if (text === null) return "\\N";
  return String(text).replace(/[\\\n\r\t]/g, (char) => COPY_ESCAPES[char]);
}
const COPY_SPECIAL = /[\\\n\r\t\0]/;
const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** How much COPY text is gathered before it is sent. */
const COPY_CHUNK_CHARS = 64 * 1024;

/**
 * Writes rows into `target` (`table (columns)`) with COPY FROM STDIN on the transaction's own
 * connection, so they are part of it: the cheapest way to load many rows (no statement per batch to
 * parse, no bind arrays to build). `fieldsOf` gives each row's values in the columns' order; text,
 * numbers, dates as text, arrays as PostgreSQL arrays, null as NULL. The rows may be produced as they
 * are sent (an async iterable is pulled as PostgreSQL takes the text): one COPY for a whole file,
 * its rows never all held, the producer's work overlapping the server's. An error of the producer
 * aborts the COPY (CopyFail) and is thrown as it is; the transaction is then failed.
 */
export async function copyIn<Row>(
  sequelize: Sequelize,
  transaction: Transaction,
  target: string,
  rows: Iterable<Row> | AsyncIterable<Row>,
  fieldsOf: (row: Row) => ReadonlyArray<unknown>,
): Promise<void> {
  if (Array.isArray(rows) && rows.length === 0) return;
  const sql = `COPY ${target} FROM STDIN`;
  prepareDirectQuery(sequelize, sql, []);
  const connection = (transaction as Transaction & { connection: ClientBase }).connection;
  let producerError: { error: unknown } | null = null;
  async function* text(): AsyncGenerator<string> {
    let chunk = "";
    try {
      for await (const row of rows) {
        const fields = fieldsOf(row);
        let line = "";
        for (let index = 0; index < fields.length; index += 1) line += (index === 0 ? "" : "\t") + copyField(fields[index]);
        chunk += `${line}\n`;
        if (chunk.length >= COPY_CHUNK_CHARS) {
          yield chunk;
          chunk = "";
        }
      }
    } catch (error) {
      producerError = { error };
      throw error;
    }
    if (chunk !== "") yield chunk;
  }
  try {
    await pipeline(Readable.from(text()), connection.query(copyFrom(sql)));
  } catch (error) {
    if (producerError) throw (producerError as { error: unknown }).error;
    throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
  }
}

/** SQLSTATE lock_not_available: what lock_timeout raises. */
const LOCK_NOT_AVAILABLE = "55P03";

/**
 * Makes the rest of `transaction` wait at most `ms` for any lock (PostgreSQL's lock_timeout, for this
 * transaction only). For a statement that needs a table's exclusive lock: while it waits behind a long
 * read, every later reader and writer of the table queues behind it, so it should rather give up.
 */
export async function limitLockWait(sequelize: Sequelize, transaction: Transaction, ms: number): Promise<void> {
  await selectRows(
    sequelize,
    "SELECT set_config('lock_timeout', $1, true) AS lock_timeout",
    [`${Math.max(1, Math.trunc(ms))}ms`],
    transaction,
  );
}

/** Whether `error` is a lock wait given up under limitLockWait. */
export function isLockTimeout(error: unknown): boolean {
  return (error as { parent?: { code?: unknown } } | null)?.parent?.code === LOCK_NOT_AVAILABLE;
}

/** SQLSTATE query_canceled: what statement_timeout raises. */
const QUERY_CANCELED = "57014";

/**
 * A read that is worth having only if it is quick (a count beside a page): runs like readRows, but
 * under a statement_timeout of `budgetMs` on its connection, and answers null when the budget runs out.
 */
export async function readRowsWithin<Row extends object>(
  sequelize: Sequelize,
  sql: string,
  bind: unknown[],
  budgetMs: number,
): Promise<Row[] | null> {
  const values = prepareDirectQuery(sequelize, sql, bind);
  const connection = (await sequelize.connectionManager.getConnection({ type: "read" })) as unknown as ClientBase;
  let clean = false;
  try {
    await connection.query(`SET statement_timeout = ${Math.max(1, Math.trunc(budgetMs))}`);
    try {
      return (await connection.query(sql, values)).rows as Row[];
    } catch (error) {
      if ((error as { code?: string }).code === QUERY_CANCELED) return null;
      throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
    } finally {
      clean = await settleTimeout(connection, "RESET statement_timeout");
    }
  } finally {
    await returnConnection(sequelize, connection, clean);
  }
}

/**
 * Ends a statement timeout's reach on `connection` with `sql` (RESET, or the ROLLBACK of a transaction
 * that SET LOCAL it), then a SELECT 1. A timeout that fires just as a statement ends is not dropped:
 * PostgreSQL 15 delivers it to the connection's next statement, which may be this cleanup (an
 * interrupted ROLLBACK leaves the transaction open) or, after it, whatever the pool runs next. So the
 * cleanup is retried, and its SELECT 1 takes a cancel still pending. False when the connection is still
 * not clean after three tries, or broke: it must not go back to the pool.
 */
async function settleTimeout(connection: ClientBase, sql: string): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await connection.query(`${sql}; SELECT 1`);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code !== QUERY_CANCELED) return false;
    }
  }
  return false;
}

/** Gives a connection back to the pool when `clean`, else closes it (the pool opens a new one when needed). */
async function returnConnection(sequelize: Sequelize, connection: ClientBase, clean: boolean): Promise<void> {
  if (clean) void sequelize.connectionManager.releaseConnection(connection as never);
  else await sequelize.connectionManager.destroyConnection(connection as never).catch(() => undefined);
}

/** What countWithin counted: every row (`complete`), or those it reached before its deadline, a lower bound. */
export type BoundedCount = { counted: number; complete: boolean };

/** Less time than this left, a bounded count takes no further step: a timer of a millisecond or less mostly cuts the step anyway. */
const MIN_COUNT_STEP_MS = 2;

/**
 * Counts the rows `select` selects, up to `upTo`, until `deadline` (a performance.now() time): through
 * a cursor moved over in two steps (MOVE: no row crosses the wire), the first quarter of `upTo` and
 * then the rest, each under a statement_timeout of what is left. When time runs out in the second
 * step, the first is a lower bound: a page whose count cannot finish still says "at least 250", where
 * a timed-out count(*) would know nothing. The planner is told the whole result will be read
 * (cursor_tuple_fraction = 1), so the cursor gets the plan a count(*) would, not one tuned for the
 * first rows.
 *
 * Round trips are what a cursor adds to a count(*): the transaction, the cursor and the first step
 * go in one (the values written into the text, as a simple query's statements take no parameters),
 * and the transaction is ended after the count is returned, before the connection goes back to the pool.
 */
export async function countWithin(
  sequelize: Sequelize,
  select: string,
  bind: unknown[],
  { upTo, deadline }: { upTo: number; deadline: number },
): Promise<BoundedCount> {
  if (!Number.isInteger(upTo) || upTo < 1) throw new Error(`countWithin counts up to a positive integer, got ${upTo}`);
  const timeLeft = () => Math.trunc(deadline - performance.now());
  if (timeLeft() < MIN_COUNT_STEP_MS) return { counted: 0, complete: false };
  const cursor = `${withValuesWritten(select, bind)} LIMIT ${upTo}`;
  prepareDirectQuery(sequelize, cursor, []);
  const connection = (await sequelize.connectionManager.getConnection({ type: "read" })) as unknown as ClientBase;
  const first = Math.ceil(upTo / 4);
  let counted = 0;
  try {
    counted = movedBy(
      await connection.query(`BEGIN READ ONLY; SET LOCAL cursor_tuple_fraction = 1; SET LOCAL statement_timeout = ${Math.max(1, timeLeft())};
        DECLARE bounded_count NO SCROLL CURSOR FOR ${cursor}; MOVE FORWARD ${first} FROM bounded_count`),
    );
    if (counted < first || counted === upTo) return { counted, complete: true };
    const left = timeLeft();
    if (left < MIN_COUNT_STEP_MS) return { counted, complete: false };
    counted += movedBy(await connection.query(`SET LOCAL statement_timeout = ${left}; MOVE FORWARD ${upTo - first} FROM bounded_count`));
    return { counted, complete: true };
  } catch (error) {
    if ((error as { code?: string }).code === QUERY_CANCELED) return { counted, complete: false };
    throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
  } finally {
    void settleTimeout(connection, "ROLLBACK")
      .then((clean) => returnConnection(sequelize, connection, clean))
      .catch(() => undefined);
  }
}

/** The rows the last statement of a simple query's several (a MOVE) moved over. */
function movedBy(results: unknown): number {
  const all = results as Array<{ rowCount: number | null }>;
  return all[all.length - 1].rowCount ?? 0;
}

/** Orders batch results like DataLoader keys, with null for keys that matched nothing. */
export function alignToKeys<Row extends { id: string }>(keys: readonly string[], rows: Row[]): (Row | null)[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return keys.map((key) => byId.get(key) ?? null);
}

/** Groups batch results under their DataLoader keys, in row order, with an empty list for keys that matched nothing. */
export function groupToKeys<Row>(keys: readonly string[], rows: Row[], keyOf: (row: Row) => string): Row[][] {
  const groups = new Map<string, Row[]>(keys.map((key) => [key, []]));
  for (const row of rows) groups.get(keyOf(row))?.push(row);
  return keys.map((key) => groups.get(key)!);
}

/** Escapes LIKE wildcards so user text is matched literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
