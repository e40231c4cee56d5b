import type { MigrationContext } from "./context";

/**
 * An export or report request keeps the credential it came through (`requested_session`: the caller's
 * sign-in session id, or `api_key:<key id>`), as its audit events name it. The worker that writes the
 * file, and the schedule that removes it after its expiry, record their events on the requester's
 * behalf long after the request: they take user and credential from the row, as a request's events take
 * them from its caller. Null for requests made before this column existed.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`ALTER TABLE audit_exports ADD COLUMN requested_session text;`);
}
