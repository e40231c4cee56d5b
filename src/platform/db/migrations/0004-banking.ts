import type { MigrationContext } from "./context";

/**
 * Bank-data sync. Imported transactions are ordinary rows of `transactions` (source = provider,
 * external_id = the provider's id, or a content key for pending rows that come without one); two
 * columns remember what the provider last said, so a re-sync can skip unchanged rows without writing
 * and a name the user changed is never overwritten.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE transactions
      ADD COLUMN provider_name text,
      ADD COLUMN provider_fingerprint text;

    CREATE TABLE bank_connections (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      provider text NOT NULL CHECK (provider IN ('lunchflow', 'simplefin')),
      name text NOT NULL,
      credentials text NOT NULL,
      base_url text,
      status text NOT NULL DEFAULT 'good' CHECK (status IN ('good', 'requires_update', 'failed')),
      include_pending boolean NOT NULL,
      debug_logging boolean NOT NULL DEFAULT false,
      last_error text,
      last_sync_at timestamptz,
      synced_until timestamptz,
      sync_state jsonb NOT NULL DEFAULT '{}',
      requests_day date,
      requests_today integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, id)
    );
    CREATE INDEX bank_connections_family_idx ON bank_connections (family_id, created_at);

    CREATE TABLE bank_provider_accounts (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      connection_id uuid NOT NULL,
      account_id uuid,
      external_id text NOT NULL,
      name text NOT NULL,
      institution text,
      currency char(3) NOT NULL,
      currency_url text,
      balance numeric(19, 4),
      available_balance numeric(19, 4),
      balance_date date,
      holdings_supported boolean,
      holdings_total_value numeric(19, 4),
      holdings_currency char(3),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (connection_id, external_id),
      FOREIGN KEY (family_id, connection_id) REFERENCES bank_connections (family_id, id) ON DELETE CASCADE,
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE SET NULL (account_id)
    );
    CREATE INDEX bank_provider_accounts_account_idx ON bank_provider_accounts (account_id);

    CREATE TABLE account_balances (
      account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      date date NOT NULL,
      balance numeric(19, 4) NOT NULL,
      available_balance numeric(19, 4),
      currency char(3) NOT NULL,
      PRIMARY KEY (account_id, date)
    );

    CREATE TABLE securities (
      id uuid PRIMARY KEY,
      key text NOT NULL UNIQUE,
      ticker text,
      name text,
      isin text,
      figi text,
      cusip text,
      currency char(3),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE holdings (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      security_id uuid NOT NULL REFERENCES securities (id),
      date date NOT NULL,
      quantity numeric(28, 10) NOT NULL,
      price numeric(28, 10),
      value numeric(19, 4) NOT NULL,
      cost_basis numeric(19, 4),
      currency char(3) NOT NULL,
      UNIQUE (account_id, security_id, date),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE
    );

    CREATE TABLE bank_sync_runs (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      connection_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'syncing', 'completed', 'failed')),
      trigger text NOT NULL CHECK (trigger IN ('manual', 'scheduled')),
      created_count integer NOT NULL DEFAULT 0,
      updated_count integer NOT NULL DEFAULT 0,
      skipped_count integer NOT NULL DEFAULT 0,
      request_count integer NOT NULL DEFAULT 0,
      errors jsonb NOT NULL DEFAULT '[]',
      started_at timestamptz,
      heartbeat_at timestamptz,
      finished_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (family_id, connection_id) REFERENCES bank_connections (family_id, id) ON DELETE CASCADE
    );
    CREATE INDEX bank_sync_runs_connection_idx ON bank_sync_runs (connection_id, created_at DESC);
  `);
}
