import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { adminUrl, databaseUrl, TEMPLATE_DATABASE } from "./database-urls";

export type TestDatabase = { name: string; url: string; drop(): Promise<void> };

async function withAdmin<T>(work: (client: Client) => Promise<T>): Promise<T> {
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
  const name = `fg_test_${process.env.JEST_WORKER_ID ?? "0"}_${randomBytes(4).toString("hex")}`;
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
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
