import type { MigrationContext } from "./context";

/**
 * Staging a file costs what its rows cost (docs/benchmarks.md, "Imports benchmark"). `import_rows`
 * had a foreign key to `imports`, which PostgreSQL checks row by row, by a trigger that runs a query:
 * for a file of 100,000 rows, 100,000 lookups of the same import, more than half of the server's work
 * in the `COPY` that stages the file. The rows of an import are written by one writer only
 * (ImportRepository.insertRows), in the database transaction that inserted their import, so they
 * cannot name a missing import; what the key also did, removing an import's rows with the import
 * (and with its family), a statement-level trigger on `imports` now does, once per statement, as
 * migration 0033 did for the ledger's day rows.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE import_rows DROP CONSTRAINT import_rows_import_id_fkey;
    DELETE FROM import_rows r WHERE NOT EXISTS (SELECT 1 FROM imports i WHERE i.id = r.import_id);

    CREATE FUNCTION import_rows_forget_imports() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM import_rows r USING gone g WHERE r.import_id = g.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER imports_forget_import_rows AFTER DELETE ON imports
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION import_rows_forget_imports();
  `);
}
