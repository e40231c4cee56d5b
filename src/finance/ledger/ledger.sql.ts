/**
 * The ledger's write-side statements (docs/ledger.md, "Storage"). The table `ledger_days` holds what
 * happened on each day of an account (money in and out, the valuation, the holdings' value); the
 * view `balances` (migration 0016) derives every start and end balance from it when read.
 */

import { INVESTED_ACCOUNT_TYPES, MOVING_ACCOUNT_TYPES, sqlList as list } from "./account-kinds";
import { derivation, monthOf } from "./derive.sql";

export { INVESTED_ACCOUNT_TYPES, MOVING_ACCOUNT_TYPES } from "./account-kinds";

/**
 * Locks the accounts $1 (an id array) for the rest of the transaction, in id order, and tells whether
 * each is bank-fed (has a current anchor, so it is derived backwards). FOR NO KEY UPDATE: ledger
 * writers of one account take turns, while inserting a transaction into it (whose foreign key takes
 * FOR KEY SHARE on the account) does not wait, so a write that locks after writing its rows cannot
 * deadlock with another doing the same.
 */
export const LOCK_ACCOUNTS = `
  SELECT a.id, EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = a.id AND v.kind = 'current_anchor') AS reverse
    FROM accounts a WHERE a.id = ANY($1::uuid[]) ORDER BY a.id FOR NO KEY UPDATE OF a`;

/** Rebuilds from the first day there is. */
export const FULL_HISTORY = "-infinity";

/**
 * The seam for holdings: the market value of an account's ($1) holdings on each day it is known.
 * A provider's snapshots (`holdings`, one per sync day) feed it, and so does a manual account's value
 * per day computed from its trades and prices (`portfolio_days`, a row on each day a trade or a price
 * changes it; src/finance/investments/positions.sql.ts), whose writer tells the ledger from which day
 * they changed (LedgerService.holdingsChanged). An account has one kind or the other, never both: once
 * a provider reports an account's holdings its computed days count no more (and its next trade write
 * clears them). A day row holds the newest value on or before its day.
 */
export const HOLDINGS_BY_DAY = `
  SELECT date, sum(value) AS value FROM holdings WHERE account_id = $1 GROUP BY date
  UNION ALL
  SELECT date, value FROM portfolio_days WHERE account_id = $1 AND NOT EXISTS (SELECT 1 FROM holdings WHERE account_id = $1)`;

/**
 * One account's ($1) entries summed per day from one table of entries (transactions, trades; `days` a
 * condition on `date`): positive is money out. Two aggregates, not one over both tables: feeding the
 * 100,000 rows of ten years through a UNION ALL cost more than aggregating them.
 */
const dayTotals = (table: string, days: string) => `
  SELECT date, sum(amount) AS total FROM ${table} WHERE account_id = $1 AND ${days} GROUP BY date`;

/** A source day's columns, from a row `k` of `joined`, with its holdings value computed by `holdings`. */
const sourceColumns = (holdings: string) => `
  k.date, coalesce(k.flow, 0) AS flow, k.valuation, k.valuation_kind, ${holdings} AS holdings`;

/**
 * What the account's day rows must hold on the days `days` selects, from the sources: transactions and
 * trades (a trade's amount is the cash it moves, signed as a transaction's), valuations, holdings (an
 * investment's only). `days` is a condition on `date`. The sources are full-joined by day (a hash or
 * merge join whatever the statistics say: a full join has no nested-loop plan).
 *
 * A day's holdings value is the newest report on or before it. `from`, when the days are every day
 * from it on (a rebuild), carries the reports forward with a window over the days (a running count of
 * the days reported names each report's run), seeded by the newest report before `from`: one pass,
 * where a lookup per day over ten years of daily reports was quadratic. Without it (two days apart, a
 * refresh) each day looks its report up. An account that holds no investments (not `invested`) has no
 * holdings value: a rebuild of it takes the branch without those two windows (a one-time filter on the
 * account's kind picks the branch; the other is never run): they cost a tenth of a plain account's
 * rebuild (two sorts of its days), for nothing.
 */
const sourceDays = (days: string, from: string | null = null) => `
  account AS (SELECT family_id, account_type IN (${list(INVESTED_ACCOUNT_TYPES)}) AS invested FROM accounts WHERE id = $1),
  transacted AS (${dayTotals("transactions", days)}),
  traded AS (${dayTotals("trades", days)}),
  entries AS (
    SELECT coalesce(m.date, t.date) AS date, -(coalesce(m.total, 0) + coalesce(t.total, 0)) AS flow
      FROM transacted m FULL JOIN traded t ON t.date = m.date
  ),
  marks AS (SELECT date, amount, kind FROM valuations WHERE account_id = $1 AND ${days}),
  reports AS MATERIALIZED (SELECT r.date, r.value FROM (${HOLDINGS_BY_DAY}) r WHERE (SELECT invested FROM account)),
  -- Named twice below, by two branches of which one runs: inlined, not copied into a tuplestore first.
  joined AS NOT MATERIALIZED (
    SELECT coalesce(e.date, v.date, h.date) AS date, e.flow, v.amount AS valuation, v.kind AS valuation_kind,
           h.value AS reported
      FROM entries e
      FULL JOIN marks v ON v.date = e.date
      FULL JOIN (SELECT date, value FROM reports WHERE ${days}) h ON h.date = coalesce(e.date, v.date)
  ),
  source AS (${
    from
      ? `
    SELECT ${sourceColumns("NULL::numeric")} FROM joined k WHERE NOT (SELECT invested FROM account)
    UNION ALL
    SELECT ${sourceColumns(`coalesce(first_value(k.reported) OVER (PARTITION BY k.reported_run ORDER BY k.date),
                                     (SELECT r.value FROM reports r WHERE r.date < ${from} ORDER BY r.date DESC LIMIT 1))`)}
      FROM (SELECT j.*, count(j.reported) OVER (ORDER BY j.date) AS reported_run FROM joined j) k WHERE (SELECT invested FROM account)`
      : `
    SELECT ${sourceColumns(`CASE WHEN (SELECT invested FROM account)
                                 THEN (SELECT r.value FROM reports r WHERE r.date <= k.date ORDER BY r.date DESC LIMIT 1) END`)}
      FROM joined k`
  }
  )`;

/** A liability's balance moves against its flows (money in lowers what is owed). */
const LIABILITY_SIGN = "CASE WHEN a.classification = 'liability' THEN -1 ELSE 1 END";

/** What a day row holds beyond its key: the day's net flow, its valuation, its holdings' value. */
const FIGURES = ["flow", "valuation", "valuation_kind", "holdings"] as const;

const UPSERT_DAYS = (from: string) => `
  INSERT INTO ledger_days (family_id, account_id, date, ${FIGURES.join(", ")})
  SELECT (SELECT family_id FROM account), $1, date, ${FIGURES.join(", ")} FROM ${from}
  ON CONFLICT (account_id, date) DO UPDATE
    SET ${FIGURES.map((name) => `${name} = EXCLUDED.${name}`).join(", ")}, updated_at = now()
    WHERE (${FIGURES.map((name) => `ledger_days.${name}`).join(", ")}) IS DISTINCT FROM (${FIGURES.map((name) => `EXCLUDED.${name}`).join(", ")})`;

/**
 * Rebuilds the account's day rows from $2 on (FULL_HISTORY for all of them): rows of days that no
 * longer have anything go, a day whose figures differ from its row gets them, a day without a row
 * gets one. The months from $2's on get their flows summed again (`ledger_months`, derive.sql.ts). Rebuilding an account whose rows are right reads and compares, and writes nothing; new
 * days are plain inserts (no speculative insertion), in key order. The source days and the rows there
 * are compared by a full join (never a nested loop, whose plan could turn quadratic while the table's
 * statistics still say it is empty, as right after a bulk import). A bank sync, an account's
 * creation, a change of type: never a single write.
 *
 * An account with no rows from $2 on (a new account, a first rebuild) has nothing to compare: its
 * source days are its new rows as they are. One probe of the key tells (`existing`); when it finds
 * none, every reader of `diff` is cut off by a one-time filter, so the comparison (a materialised
 * copy of every day, its full join and its scans for rows to remove or update) never runs: it wrote
 * exactly the source days anyway, and cost up to 5% of a ten-year rebuild's CPU (docs/benchmarks.md).
 */
export const REBUILD_DAYS = `
  WITH ${sourceDays("date >= $2::date", "$2::date")},
  existing AS (SELECT EXISTS (SELECT 1 FROM ledger_days WHERE account_id = $1 AND date >= $2::date) AS rows),
  diff AS MATERIALIZED (
    SELECT coalesce(s.date, d.date) AS date, s.date IS NOT NULL AS sourced, d.date IS NOT NULL AS present,
           ${FIGURES.map((name) => `s.${name}`).join(", ")},
           (${FIGURES.map((name) => `s.${name}`).join(", ")}) IS DISTINCT FROM (${FIGURES.map((name) => `d.${name}`).join(", ")}) AS differs
      FROM source s FULL JOIN (SELECT * FROM ledger_days WHERE account_id = $1 AND date >= $2::date) d ON d.date = s.date
  ),
  removed AS (
    DELETE FROM ledger_days d
     WHERE (SELECT rows FROM existing) AND d.account_id = $1 AND d.date = ANY (ARRAY(SELECT date FROM diff WHERE NOT sourced))
  ),
  months AS (
    SELECT month, sum(flow) AS flow FROM (
      SELECT ${monthOf("date")} AS month, flow FROM source
      UNION ALL
      SELECT ${monthOf("date")}, flow FROM ledger_days WHERE account_id = $1 AND date >= ${monthOf("$2::date")} AND date < $2::date
    ) x GROUP BY month
  ),
  months_removed AS (
    DELETE FROM ledger_months m
     WHERE m.account_id = $1 AND m.month >= ${monthOf("$2::date")} AND NOT EXISTS (SELECT 1 FROM months x WHERE x.month = m.month)
  ),
  months_written AS (
    INSERT INTO ledger_months AS m (account_id, month, flow) SELECT $1, month, flow FROM months
    ON CONFLICT (account_id, month) DO UPDATE SET flow = EXCLUDED.flow WHERE m.flow IS DISTINCT FROM EXCLUDED.flow
  ),
  updated AS (
    UPDATE ledger_days d SET ${FIGURES.map((name) => `${name} = f.${name}`).join(", ")}, updated_at = now()
      FROM diff f WHERE (SELECT rows FROM existing) AND d.account_id = $1 AND d.date = f.date AND f.sourced AND f.present AND f.differs
  )
  INSERT INTO ledger_days (family_id, account_id, date, ${FIGURES.join(", ")})
  SELECT (SELECT family_id FROM account), $1, date, ${FIGURES.join(", ")} FROM (
    SELECT date, ${FIGURES.join(", ")} FROM diff WHERE (SELECT rows FROM existing) AND sourced AND NOT present
    UNION ALL
    SELECT date, ${FIGURES.join(", ")} FROM source WHERE NOT (SELECT rows FROM existing)
  ) fresh ORDER BY date`;

/**
 * Refreshes the account's row of the day $2 from the sources, and moves the account's balance by what
 * its flows changed, when $3 (the write touched no valuation or holdings) and the day is after the
 * account's newest anchor (a bank-fed account's opening anchor is no anchor): a day on or before it is
 * absorbed by the anchor, as the view derives. The day's month (`ledger_months`) moves by the same
 * change of flows, before any sign. One statement, one row per table: what makes a write in the middle
 * of long history cheap. One day, not two or an array: every lookup is then an equality on a whole key
 * (the day's row, its month, the account), a single index probe whatever the statistics say. Over
 * `date IN ($2, $3)` the prepared statement's generic plan scanned every day row of the account when
 * the table's statistics were stale (analyzed while empty), and an array made PostgreSQL re-plan it on
 * every write. A write touching two days sends two, in the same round trip.
 */
export const REFRESH_DAY = `
  WITH ${sourceDays("date = $2::date")},
  old AS (SELECT flow FROM ledger_days WHERE account_id = $1 AND date = $2::date),
  removed AS (
    DELETE FROM ledger_days d WHERE d.account_id = $1 AND d.date = $2::date AND NOT EXISTS (SELECT 1 FROM source)
  ),
  written AS (${UPSERT_DAYS("source")}),
  change AS (SELECT coalesce((SELECT sum(flow) FROM source), 0) - coalesce((SELECT flow FROM old), 0) AS flow),
  months AS (
    INSERT INTO ledger_months AS m (account_id, month, flow) SELECT $1, ${monthOf("$2::date")}, flow FROM change
    ON CONFLICT (account_id, month) DO UPDATE SET flow = m.flow + EXCLUDED.flow WHERE EXCLUDED.flow <> 0
  ),
  anchor AS (
    SELECT max(date) AS date FROM valuations
     WHERE account_id = $1
       AND (kind <> 'opening_anchor' OR NOT EXISTS (SELECT 1 FROM valuations c WHERE c.account_id = $1 AND c.kind = 'current_anchor'))
  )
  UPDATE accounts a
     SET balance = a.balance + c.flow * ${LIABILITY_SIGN}, cash_balance = coalesce(a.cash_balance, 0) + c.flow * ${LIABILITY_SIGN}
    FROM change c
   WHERE a.id = $1 AND $3::boolean AND c.flow <> 0 AND a.account_type IN (${list(MOVING_ACCOUNT_TYPES)})
     AND $2::date > coalesce((SELECT date FROM anchor), '-infinity'::date)`;

/**
 * Sets the account's balance (and its cash part) to its newest day's end, as the view derives it (only
 * that day is derived, derive.sql.ts); 0 without days.
 */
export const SET_BALANCE = `
  WITH ${derivation({
    accounts: "a.id = $1",
    keep: "SELECT $1::uuid AS account_id, max(d.date) AS date FROM ledger_days d WHERE d.account_id = $1",
  })}
  UPDATE accounts a SET balance = coalesce(n.end_balance, 0), cash_balance = coalesce(n.end_cash_balance, 0)
    FROM (SELECT 1) one
    LEFT JOIN (SELECT b.end_balance, b.end_cash_balance FROM derived b WHERE b.kept) n ON true
   WHERE a.id = $1
     AND (a.balance, a.cash_balance) IS DISTINCT FROM (coalesce(n.end_balance, 0)::numeric(19, 4), coalesce(n.end_cash_balance, 0)::numeric(19, 4))`;
