import type { MigrationContext } from "./context";

/**
 * A manual investment account's first whole recompute costs what its rows cost, not what checking
 * them costs (docs/benchmarks.md, "Investments benchmark"). Writing 20,000 positions into an empty
 * table spent more than half its time in the foreign keys' per-row triggers (one query per row for the
 * account, one for the security), as the ledger's day rows did before 0033. Both tables are derived,
 * and their only writer makes the keys' checks redundant:
 *
 * - the trades' service writes positions and day values under the account's row lock, for an account
 *   it read in the family, with the family read from that row; a position's security is one the
 *   account's trades name, and those trades keep their own foreign key to `securities` (which nothing
 *   deletes: securities are shared reference data);
 * - what the account keys also did, removing an account's positions and day values with the account,
 *   a statement-level trigger on `accounts` now does, once per statement (as 0033's does for the
 *   ledger's days).
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE positions DROP CONSTRAINT positions_family_id_account_id_fkey;
    ALTER TABLE positions DROP CONSTRAINT positions_security_id_fkey;
    ALTER TABLE portfolio_days DROP CONSTRAINT portfolio_days_family_id_account_id_fkey;

    CREATE FUNCTION positions_forget_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM positions x USING gone g WHERE x.account_id = g.id;
      DELETE FROM portfolio_days d USING gone g WHERE d.account_id = g.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER accounts_forget_positions AFTER DELETE ON accounts
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION positions_forget_accounts();
  `);
}
