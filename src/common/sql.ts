import type { ClientBase } from "pg";
import { DatabaseError, type Options, QueryTypes, type Sequelize, type Transaction } from "sequelize";

/**
 * Adds `value` to a statement's bind parameters and returns its placeholder ($1, $2 …): the one way
 * SQL built from optional filters gets its parameters. Values never enter the SQL text.
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

/** What Sequelize does before a statement that a direct query must do too: log it, escape NUL in text. */
function prepareDirectQuery(sequelize: Sequelize, sql: string, bind: unknown[]): unknown[] {
  // Sequelize's typings leave out `options`, which its own query() reads for this logging hook.
  const { logging } = (sequelize as Sequelize & { options: Pick<Options, "logging"> }).options;
  if (typeof logging === "function") logging(`Executing (default): ${sql}`);
  return bind.map((value) => (typeof value === "string" ? value.replace(/\0/g, "\\0") : value));
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
  try {
    await connection.query(`SET statement_timeout = ${Math.max(1, Math.trunc(budgetMs))}`);
    try {
      return (await connection.query(sql, values)).rows as Row[];
    } catch (error) {
      if ((error as { code?: string }).code === QUERY_CANCELED) return null;
      throw new DatabaseError(error as ConstructorParameters<typeof DatabaseError>[0]);
    } finally {
      await connection.query("RESET statement_timeout");
    }
  } finally {
    void sequelize.connectionManager.releaseConnection(connection as never);
  }
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
