import { Client } from "pg";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { adminUrl, databaseUrl, runOfDatabase, TEMPLATE_DATABASE } from "./helpers/database-urls";

/**
 * Runs once per `jest` run: builds a template database with every migration applied. Each test file
 * then clones it (CREATE DATABASE … TEMPLATE), which takes milliseconds and isolates files entirely.
 */
export default async function globalSetup(): Promise<void> {
  const admin = new Client({ connectionString: adminUrl() });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`Tests need PostgreSQL at ${adminUrl()} (set TEST_DATABASE_URL): ${(error as Error).message}`, { cause: error });
  }
  // Databases left by runs that ended without their teardown (interrupted): their jest process is gone.
  const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, 'fg_test_')");
  for (const { datname } of rows) {
    const run = runOfDatabase(datname);
    if (run !== null && !isRunning(run)) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  }
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const sequelize = createSequelize({ url: databaseUrl(TEMPLATE_DATABASE), poolMax: 2 });
  initModels(sequelize);
  await migrateToLatest(sequelize);
  await sequelize.close();
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user's holds that pid, alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
