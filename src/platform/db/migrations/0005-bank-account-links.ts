import type { MigrationContext } from "./context";

/**
 * Linking provider accounts to existing accounts (issue 6, item 1): a connection may be told not to
 * create accounts for provider accounts it sees for the first time (they wait, unlinked, to be linked
 * by hand), and one account is fed by at most one provider account.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE bank_connections ADD COLUMN auto_create_accounts boolean NOT NULL DEFAULT true;
    CREATE UNIQUE INDEX bank_provider_accounts_one_per_account ON bank_provider_accounts (account_id) WHERE account_id IS NOT NULL;
  `);
}
