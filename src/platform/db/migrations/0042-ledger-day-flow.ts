import type { MigrationContext } from "./context";

/**
 * A day row keeps the day's net flow, not its money in and money out (docs/ledger.md, "Storage").
 *
 * Everything a balance needs is the net (`flow`: money in less money out, before the account's sign):
 * the running sums, the months, the anchors' offsets. The two halves were stored only for display,
 * and computing the second of them cost a full recompute a second numeric sum over every entry of the
 * account (a fifth of a ten-year rebuild's time, docs/benchmarks.md). A read that shows a day's money
 * in and out (`GET /balances`, a page of at most 100 days) now sums that day's entries itself, by the
 * entries' (account, date) indexes; so does the count of entries, which nothing read.
 *
 * The view is 0037's, reading `flow`, without the two columns (its readers take them per shown day).
 */
/** The view as this migration defines it. */
const BALANCES_VIEW = `
    CREATE VIEW balances AS
    SELECT id, family_id, account_id, date, net, created_at, updated_at,
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
                    SELECT ledger_day_id(d.account_id, d.date) AS id, d.family_id, d.account_id, d.date, d.created_at, d.updated_at, d.valuation,
                           d.flow * s.sign AS net,
                           sum(d.flow * s.sign) OVER w AS running,
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

export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    DROP VIEW balances;
    ALTER TABLE ledger_days ADD COLUMN flow numeric(19, 4) NOT NULL DEFAULT 0;
    UPDATE ledger_days SET flow = inflows - outflows WHERE inflows <> outflows;
    ALTER TABLE ledger_days DROP COLUMN inflows, DROP COLUMN outflows, DROP COLUMN entries;
    ${BALANCES_VIEW}
  `);
}
