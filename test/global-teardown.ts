import { Client } from "pg";
import { adminUrl, TEMPLATE_DATABASE } from "./helpers/database-urls";

export default async function globalTeardown(): Promise<void> {
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
  await admin.end();
}
