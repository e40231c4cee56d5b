import type { MigrationContext } from "./context";

/**
 * Writing an account's day rows costs what the rows cost, not what checking them costs
 * (docs/ledger.md, "Storage"). A full recompute of ten years writes ~3,650 rows; two of the table's
 * per-row costs went to things a derived table does not need:
 *
 * - The foreign key to `accounts`: PostgreSQL checks it row by row, by a trigger that runs a query
 *   (about 40% of the insert). The ledger's writes take the account's row lock first and read the
 *   family from that row in the same statement, so a day row cannot name a missing or other family's
 *   account; what the key also did, removing an account's days with the account, a statement-level
 *   trigger on `accounts` now does, once per statement.
 * - A random id with a unique index: a day's id is now its account's id with the day's number (days
 *   since 1970-01-01) XOR-ed into the id's last 32 bits (`ledger_day_id`). It names the day for
 *   `GET /balances/{id}` with no index (the account is found by the id's first 96 bits, the day by
 *   the last 32) and stays the same when the row is written again: a recompute no longer gives the
 *   same day a new id. The ledger's two inserts (src/finance/ledger/ledger.sql.ts) are the only writers
 *   of day rows and both give the id so; a CHECK saying it cost a sixth of the insert (the function,
 *   called once more per row).
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE FUNCTION ledger_day_id(account uuid, day date) RETURNS uuid
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT (left(replace(account::text, '-', ''), 24)
                    || lpad(to_hex(('x' || right(account::text, 8))::bit(32)::int # (day - DATE '1970-01-01')), 8, '0'))::uuid $$;

    ALTER TABLE ledger_days DROP CONSTRAINT ledger_days_family_id_account_id_fkey;
    ALTER TABLE ledger_days DROP CONSTRAINT ledger_days_id_key;
    DELETE FROM ledger_days d WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = d.account_id AND a.family_id = d.family_id);
    UPDATE ledger_days SET id = ledger_day_id(account_id, date);

    CREATE FUNCTION ledger_days_forget_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM ledger_days d USING gone g WHERE d.account_id = g.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER accounts_forget_ledger_days AFTER DELETE ON accounts
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ledger_days_forget_accounts();
  `);
}
