import { RUN_DATABASE_PREFIX, TEMPLATE_DATABASE } from "./helpers/database-urls";
import { withAdmin } from "./helpers/test-database";

/** Dropped a few at a time: each DROP DATABASE waits for a checkpoint, and concurrent ones share it. */
const DROPS_AT_ONCE = 4;

/**
 * Drops this run's databases, the files' clones and the template. A file only ends the connections to
 * its clone (TestDatabase.close): DROP DATABASE makes PostgreSQL checkpoint, which flushes every other
 * file's writes to disk and made each file's end wait for it, 150 times a run.
 */
export default async function globalTeardown(): Promise<void> {
  const names = await withAdmin(async (client) => {
    const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [
      RUN_DATABASE_PREFIX,
    ]);
    return rows.map((row) => row.datname);
  });
  const queue = [...names, TEMPLATE_DATABASE];
  await Promise.all(
    Array.from({ length: DROPS_AT_ONCE }, () =>
      withAdmin(async (client) => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift())
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
    ),
  );
}
