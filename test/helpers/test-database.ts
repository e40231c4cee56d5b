import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { adminUrl, databaseUrl, RUN_DATABASE_PREFIX, TEMPLATE_DATABASE } from "./database-urls";

export type TestDatabase = {
  name: string;
  url: string;
  /** Ends every connection to it. The run's global teardown drops it (test/global-teardown.ts says why not here). */
  close(): Promise<void>;
};

/** `work` on a connection to the server's admin database, closed after. */
export async function withAdmin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of its own, cloned from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${RUN_DATABASE_PREFIX}${process.env.JEST_WORKER_ID ?? "0"}_${randomBytes(4).toString("hex")}`;
  await withAdmin(async (client) => {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
    // A commit need not wait for the disk here: only a crash of the machine's PostgreSQL server could lose
    // one, and no test of this suite crashes it (the fault suite kills servers of its own). On CI's disk a
    // flush costs about 4 ms, and the suite commits tens of thousands of times.
    await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  return {
    name,
    url: databaseUrl(name),
    close: () =>
      withAdmin((client) =>
        client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]),
      ).then(() => undefined),
  };
}
