import type { MigrationContext } from "./context";

/**
 * Holdings from trades stored small (docs/investments.md, "Holdings from trades"). The truth is the
 * trades and the prices; what is kept of them is:
 *
 * - `positions`: one row per security per day its quantity changes (a day it is traded) in a manual
 *   investment account: the quantity held at the end of that day, the cost basis (average cost) and
 *   the newest trade price (what values the holding while the security has no price). A holding on any
 *   day is the newest position on or before it, valued at the newest price on or before it.
 * - `portfolio_days`: the account's holdings value on each day something changes it (a trade or a
 *   price of a security it has traded), which the ledger reads as it reads a provider's snapshots.
 *
 * Until now a whole snapshot of every held security was written on each such day (`holdings` rows
 * with source `trades`: 720,000 rows for 20,000 trades in 200 securities over ten years). Those rows
 * become positions (the days a trade changed the security) and day values, then go; `holdings` keeps
 * what bank providers report.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE positions (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      security_id uuid NOT NULL REFERENCES securities (id),
      date date NOT NULL,
      quantity numeric(28, 10) NOT NULL CHECK (quantity >= 0),
      cost_basis numeric(19, 4) NOT NULL,
      trade_price numeric(28, 10) NOT NULL,
      currency char(3) NOT NULL,
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE
    );
    -- Newest first within a security: one descent finds a security's newest position on or before a day,
    -- and the next security's (positions.sql.ts, positionsOn).
    -- A family's positions are found through its accounts (this key), not by an index of their own: one
    -- index less to maintain on the 20,000 rows a whole recompute writes.
    CREATE UNIQUE INDEX positions_account_security_date_key ON positions (account_id, security_id, date DESC);

    CREATE TABLE portfolio_days (
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      date date NOT NULL,
      value numeric(19, 4) NOT NULL,
      PRIMARY KEY (account_id, date),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE
    );

    INSERT INTO positions (id, family_id, account_id, security_id, date, quantity, cost_basis, trade_price, currency)
    SELECT h.id, h.family_id, h.account_id, h.security_id, h.date, h.quantity, h.cost_basis,
           (SELECT t.price FROM trades t WHERE t.account_id = h.account_id AND t.security_id = h.security_id AND t.date = h.date
             ORDER BY t.qty < 0 DESC, t.created_at DESC, t.id DESC LIMIT 1),
           h.currency
      FROM holdings h
     WHERE h.source = 'trades'
       AND EXISTS (SELECT 1 FROM trades t WHERE t.account_id = h.account_id AND t.security_id = h.security_id AND t.date = h.date);

    INSERT INTO portfolio_days (family_id, account_id, date, value)
    SELECT family_id, account_id, date, sum(value) FROM holdings WHERE source = 'trades' GROUP BY family_id, account_id, date;

    DELETE FROM holdings WHERE source = 'trades';
    ALTER TABLE holdings DROP CONSTRAINT holdings_source_check;
    ALTER TABLE holdings ADD CONSTRAINT holdings_source_check CHECK (source = 'provider');
  `);
}
