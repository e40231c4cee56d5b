import type { MigrationContext } from "./context";

/**
 * The ledger's storage, reworked for speed (docs/ledger.md, "Storage"). 0015 stored each day's END
 * balance, so a write in the middle of ten years of history rewrote every later day. From here on:
 *
 * - `ledger_days` holds, per account and day that has something, only what happened THAT day: the
 *   transactions' money in and out (and how many there are), the day's valuation (amount and kind)
 *   and, on an investment account, the holdings' market value at the end of the day (the newest
 *   report on or before it; a day with a report has a row). A write on day D
 *   rewrites one row, in the write's transaction.
 * - `balances` becomes a view deriving every start and end balance from those rows at read time, with
 *   window functions over one account's rows (at most ~3,650 for ten years). Filters on the account
 *   or the family reach the table through the view (they are its window partition), so reading one
 *   account's history touches only that account's rows.
 *
 * The rows of `balances` keep their ids (a day row takes the id of the balance row of its day).
 * `accounts.cash_balance` is new: the part of the balance that is cash (an investment's balance less
 * its holdings), kept with `balance` by the ledger.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE ledger_days (
      id uuid NOT NULL UNIQUE,
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      date date NOT NULL,
      inflows numeric(19, 4) NOT NULL DEFAULT 0,
      outflows numeric(19, 4) NOT NULL DEFAULT 0,
      entries integer NOT NULL DEFAULT 0,
      valuation numeric(19, 4),
      valuation_kind text,
      holdings numeric(19, 4),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, date),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE
    );
    CREATE INDEX ledger_days_family_idx ON ledger_days (family_id, account_id, date);
    CREATE INDEX IF NOT EXISTS holdings_account_date_idx ON holdings (account_id, date);

    ALTER TABLE accounts ADD COLUMN cash_balance numeric(19, 4);

    INSERT INTO ledger_days (id, family_id, account_id, date, inflows, outflows, entries, valuation, valuation_kind, holdings, created_at, updated_at)
    SELECT coalesce(b.id, gen_random_uuid()), a.family_id, d.account_id, d.date,
           coalesce(t.inflows, 0), coalesce(t.outflows, 0), coalesce(t.entries, 0), v.amount, v.kind,
           CASE WHEN a.account_type IN ('investment', 'crypto')
                THEN (SELECT sum(x.value) FROM holdings x WHERE x.account_id = d.account_id
                         AND x.date = (SELECT max(y.date) FROM holdings y WHERE y.account_id = d.account_id AND y.date <= d.date)) END,
           coalesce(b.created_at, now()), coalesce(b.updated_at, now())
      FROM (SELECT account_id, date FROM transactions UNION SELECT account_id, date FROM valuations
            UNION SELECT account_id, date FROM holdings) d
      JOIN accounts a ON a.id = d.account_id
      LEFT JOIN (SELECT account_id, date, sum(greatest(-amount, 0)) AS inflows, sum(greatest(amount, 0)) AS outflows, count(*) AS entries
                   FROM transactions GROUP BY account_id, date) t ON t.account_id = d.account_id AND t.date = d.date
      LEFT JOIN valuations v ON v.account_id = d.account_id AND v.date = d.date
      LEFT JOIN (SELECT account_id, date, sum(value) AS value FROM holdings GROUP BY account_id, date) h
             ON h.account_id = d.account_id AND h.date = d.date
      LEFT JOIN balances b ON b.account_id = d.account_id AND b.date = d.date
     WHERE t.entries IS NOT NULL OR v.amount IS NOT NULL OR (h.value IS NOT NULL AND a.account_type IN ('investment', 'crypto'));

    DROP TABLE balances;
    ${BALANCES_VIEW}

    UPDATE accounts a SET balance = coalesce(n.end_balance, 0), cash_balance = coalesce(n.end_cash_balance, 0)
      FROM accounts x LEFT JOIN LATERAL (
        SELECT b.end_balance, b.end_cash_balance FROM balances b
         WHERE b.family_id = x.family_id AND b.account_id = x.id ORDER BY b.date DESC LIMIT 1) n ON true
     WHERE x.id = a.id;
  `);
}

/**
 * The view, as this migration defines it (a later change to the derivation is a later migration).
 *
 * Per account, with `net` a day's money in less money out times the account's sign (+1 an asset, −1 a
 * liability, 0 an account that only valuations move) and `running` the sum of `net` up to the day:
 * the cash at the end of a day is `running + k`, where `k` is fixed between anchors. At an anchor
 * (any valuation on a manual account; a current anchor or reconciliation on a bank-fed one, which
 * has a current anchor) `k = valuation − holdings − running`, so the day ends at the valuation. A
 * manual account's day takes `k` of the newest anchor on or before it (0 before the first); a
 * bank-fed account's the next anchor on or after it, or after the newest anchor that one's: the
 * anchors' `k` in date order is one array per account, indexed by how many anchors came before.
 * `holdings` is stored already carried forward (an investment's value at the end of the day, from
 * the newest report on or before it). Every window has the same order (the account's days by date),
 * so the rows are read in index order and never sorted again.
 */
export const BALANCES_VIEW = `
    CREATE VIEW balances AS
    SELECT id, family_id, account_id, date, inflows, outflows, net, created_at, updated_at,
           start_cash + start_holdings AS start_balance,
           end_cash + end_holdings AS end_balance,
           start_cash AS start_cash_balance, end_cash AS end_cash_balance,
           start_holdings AS start_holdings_value, end_holdings AS end_holdings_value
      FROM (
        SELECT e.*,
               CASE WHEN reverse THEN end_cash - net
                    WHEN valuation IS NOT NULL AND lag(end_cash) OVER w IS NULL THEN end_cash
                    ELSE coalesce(lag(end_cash) OVER w, 0) END AS start_cash,
               CASE WHEN NOT reverse AND valuation IS NOT NULL AND lag(end_cash) OVER w IS NULL THEN end_holdings
                    ELSE coalesce(lag(end_holdings) OVER w, 0) END AS start_holdings
          FROM (
            SELECT r.*,
                   running + coalesce(CASE WHEN reverse THEN coalesce(ks[anchors_before + 1], ks[cardinality(ks)]) ELSE ks[anchors_upto] END, 0)
                     AS end_cash
              FROM (
                SELECT c.*,
                       count(*) FILTER (WHERE anchor) OVER w AS anchors_upto,
                       count(*) FILTER (WHERE anchor) OVER w - CASE WHEN anchor THEN 1 ELSE 0 END AS anchors_before,
                       array_agg(valuation - end_holdings - running) FILTER (WHERE anchor)
                         OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ks
                  FROM (
                    SELECT d.id, d.family_id, d.account_id, d.date, d.created_at, d.updated_at, d.valuation,
                           d.inflows * abs(s.sign) AS inflows, d.outflows * abs(s.sign) AS outflows,
                           (d.inflows - d.outflows) * s.sign AS net,
                           sum((d.inflows - d.outflows) * s.sign) OVER w AS running,
                           CASE WHEN s.invested THEN coalesce(d.holdings, 0) ELSE 0 END AS end_holdings,
                           m.reverse,
                           d.valuation IS NOT NULL AND (NOT m.reverse OR d.valuation_kind <> 'opening_anchor') AS anchor
                      FROM ledger_days d
                      JOIN (SELECT a.id,
                                   CASE WHEN a.account_type NOT IN ('depository', 'credit_card', 'investment', 'crypto', 'loan') THEN 0
                                        WHEN a.classification = 'liability' THEN -1 ELSE 1 END AS sign,
                                   a.account_type IN ('investment', 'crypto') AS invested
                              FROM accounts a) s ON s.id = d.account_id
                      JOIN (SELECT a.id, EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = a.id AND v.kind = 'current_anchor') AS reverse
                              FROM accounts a) m ON m.id = d.account_id
                    WINDOW w AS (PARTITION BY d.family_id, d.account_id ORDER BY d.date)
                  ) c
                WINDOW w AS (PARTITION BY family_id, account_id ORDER BY date)
              ) r
          ) e
        WINDOW w AS (PARTITION BY family_id, account_id ORDER BY date)
      ) x;`;
