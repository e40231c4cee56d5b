import type { MigrationContext } from "./context";

/**
 * Investments as upstream models them (docs/investments.md): securities (shared by every family, as
 * upstream's), their prices per day, and trades. A trade is an entry on an investment account: its
 * amount (signed quantity × price + fee; positive is cash out, as a transaction's) moves the account's
 * cash in the ledger, and its quantity moves the holding.
 *
 * - `securities` (0004, keyed by the provider's most specific identifier) gains upstream's fields: kind,
 *   exchange, offline flag. A security named by ticker (and exchange) is keyed `ticker:<TICKER>|<MIC>`.
 * - `security_prices`: one price per security per day (upstream's `security_prices`), from the API,
 *   from a provider's reported holdings, or imported; `provisional` as upstream.
 * - `trades`: the family's trades; `qty` signed (negative sells), `price` per unit, `fee`, `amount`.
 * - `holdings.source`: `provider` (a bank sync's snapshot) or `trades` (computed from a manual
 *   account's trades at each day its quantities or prices change), so neither is counted twice.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE securities
      ADD COLUMN kind text NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'cash')),
      ADD COLUMN exchange_operating_mic text,
      ADD COLUMN exchange_mic text,
      ADD COLUMN exchange_acronym text,
      ADD COLUMN exchange_name text,
      ADD COLUMN country_code text,
      ADD COLUMN offline boolean NOT NULL DEFAULT false,
      ADD COLUMN offline_reason text,
      ADD COLUMN website_url text,
      ADD COLUMN logo_url text,
      ADD COLUMN first_provider_price_on date;
    CREATE INDEX securities_ticker_idx ON securities (lower(ticker), exchange_operating_mic);

    CREATE TABLE security_prices (
      id uuid PRIMARY KEY,
      security_id uuid NOT NULL REFERENCES securities (id) ON DELETE CASCADE,
      date date NOT NULL,
      price numeric(28, 10) NOT NULL CHECK (price >= 0),
      currency char(3) NOT NULL,
      provisional boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (security_id, date, currency)
    );
    CREATE INDEX security_prices_date_idx ON security_prices (date DESC, created_at DESC);

    CREATE TABLE trades (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      security_id uuid NOT NULL REFERENCES securities (id),
      date date NOT NULL,
      qty numeric(28, 10) NOT NULL CHECK (qty <> 0),
      price numeric(28, 10) NOT NULL CHECK (price > 0),
      fee numeric(19, 4) NOT NULL DEFAULT 0 CHECK (fee >= 0),
      amount numeric(19, 4) NOT NULL,
      currency char(3) NOT NULL,
      name text NOT NULL,
      notes text,
      investment_activity_label text,
      category_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE,
      FOREIGN KEY (family_id, category_id) REFERENCES categories (family_id, id) ON DELETE SET NULL (category_id)
    );
    CREATE INDEX trades_family_date_idx ON trades (family_id, date DESC, created_at DESC);
    CREATE INDEX trades_account_idx ON trades (account_id, security_id, date);
    CREATE INDEX trades_account_date_idx ON trades (account_id, date);

    ALTER TABLE holdings ADD COLUMN source text NOT NULL DEFAULT 'provider' CHECK (source IN ('provider', 'trades'));
    CREATE INDEX holdings_security_idx ON holdings (security_id);
  `);
}
