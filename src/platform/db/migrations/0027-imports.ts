import type { MigrationContext } from "./context";

/**
 * File imports (docs/imports.md), as upstream's transaction imports: an `imports` row per uploaded
 * file with its column mapping and formats, and its data rows in `import_rows`, both as written in the
 * file and as read (date, signed amount, currency, account), with each row's problems. Publishing
 * writes the rows without problems into `transactions`, keyed by a fingerprint in `external_id` (source
 * `import`), so the unique index of external ids makes a second import of the same rows write nothing;
 * a row finds its transaction again by that fingerprint.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE imports (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      account_id uuid,
      type text NOT NULL DEFAULT 'TransactionImport',
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'importing', 'complete', 'failed')),
      config jsonb NOT NULL,
      file_name text,
      byte_size bigint NOT NULL DEFAULT 0,
      rows_count integer NOT NULL DEFAULT 0,
      invalid_rows_count integer NOT NULL DEFAULT 0,
      imported_count integer,
      duplicate_count integer,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      UNIQUE (family_id, id),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE SET NULL (account_id)
    );
    CREATE INDEX imports_family_recent_idx ON imports (family_id, created_at DESC, id DESC);

    CREATE TABLE import_rows (
      import_id uuid NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
      row_number integer NOT NULL,
      account text,
      date text,
      amount text,
      currency text,
      name text,
      category text,
      tags text,
      notes text,
      problems text[] NOT NULL DEFAULT '{}',
      account_id uuid,
      entry_date date,
      signed_amount numeric(19, 4),
      currency_code char(3),
      PRIMARY KEY (import_id, row_number)
    );
  `);
}
