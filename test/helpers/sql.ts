import { Client } from "pg";
import type { Sequelize } from "sequelize";

/**
 * The two ways a test reads or writes the database behind the app's back, each taking `$1`-style
 * parameters. Both take the app lazily because a test file creates it in `beforeAll`.
 */

/**
 * A statement on a connection of its own, outside the app's pool, ORM and prepared statements: what a
 * test's oracle reads with, so a result it checks is never shaped by the code under test.
 */
export function sqlOnOwnConnection(databaseUrl: () => string) {
  return async function sql<Row = Record<string, unknown>>(statement: string, values: unknown[] = []): Promise<Row[]> {
    const connection = new Client({ connectionString: databaseUrl() });
    await connection.connect();
    try {
      return (await connection.query(statement, values)).rows as Row[];
    } finally {
      await connection.end();
    }
  };
}

/** A statement through the app's own Sequelize: for setting rows up and counting them. */
export function sqlThroughApp(sequelize: () => Sequelize) {
  return async function sql<Row = Record<string, unknown>>(statement: string, values: unknown[] = []): Promise<Row[]> {
    const [rows] = await sequelize().query(statement, { bind: values });
    return rows as Row[];
  };
}
