import { Client } from "pg";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { adminUrl, databaseUrl, TEMPLATE_DATABASE } from "./helpers/database-urls";

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
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const sequelize = createSequelize({ url: databaseUrl(TEMPLATE_DATABASE), poolMax: 2 });
  initModels(sequelize);
  await migrateToLatest(sequelize);
  await sequelize.close();
}
