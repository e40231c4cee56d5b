import type { MigrationContext } from "./context";

/**
 * The ledger (docs/ledger.md): valuations anchor each account's history, and `balances` holds its
 * end-of-day balance on every day something happened to it. Until now an account's balance was a
 * stored figure written directly; from here on it is derived, and `accounts.balance` is only the
 * newest row of `balances`, written by the ledger's recompute.
 *
 * Existing accounts keep today's figures: each gets an opening anchor dated as upstream dates one (the
 * earlier of the day before its oldest transaction and two years ago) whose amount is the stored
 * balance less every transaction's effect, so walking forward through the transactions lands on the
 * stored balance again. An account fed by a bank provider that reported a balance also gets a current
 * anchor holding that balance, dated today or on its newest transaction, whichever is later.
 *
 * A write in the middle of an account's history rewrites every later row's figures (never an indexed
 * column), so `balances` leaves half of each page free: the new versions stay on their page (HOT
 * updates, no new index entries) and are pruned as pages are read, and autovacuum visits it early.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE valuations (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      date date NOT NULL,
      amount numeric(19, 4) NOT NULL CHECK (abs(amount) < 1000000000000),
      currency char(3) NOT NULL,
      kind text NOT NULL CHECK (kind IN ('opening_anchor', 'current_anchor', 'reconciliation')),
      name text NOT NULL,
      notes text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE,
      UNIQUE (account_id, date)
    );
    CREATE UNIQUE INDEX valuations_one_opening_anchor ON valuations (account_id) WHERE kind = 'opening_anchor';
    CREATE UNIQUE INDEX valuations_one_current_anchor ON valuations (account_id) WHERE kind = 'current_anchor';
    CREATE INDEX valuations_family_recent_idx ON valuations (family_id, date DESC, created_at DESC, id DESC);

    CREATE TABLE balances (
      id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      date date NOT NULL,
      start_balance numeric(19, 4) NOT NULL,
      end_balance numeric(19, 4) NOT NULL,
      inflows numeric(19, 4) NOT NULL,
      outflows numeric(19, 4) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (account_id, date)
    ) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0);

    INSERT INTO valuations (id, family_id, account_id, date, amount, currency, kind, name)
    SELECT gen_random_uuid(), a.family_id, a.id,
           least(coalesce((SELECT min(t.date) FROM transactions t WHERE t.account_id = a.id) - 1, 'infinity'::date),
                 (CURRENT_DATE - interval '2 years')::date),
           a.balance - CASE WHEN a.account_type IN ('depository', 'credit_card', 'investment', 'crypto', 'loan')
                            THEN coalesce((SELECT sum(-t.amount) FROM transactions t WHERE t.account_id = a.id), 0)
                                 * CASE WHEN a.classification = 'liability' THEN -1 ELSE 1 END
                            ELSE 0 END,
           a.currency, 'opening_anchor',
           CASE WHEN a.account_type IN ('property', 'vehicle') THEN 'Original purchase price'
                WHEN a.account_type = 'loan' THEN 'Original principal'
                WHEN a.account_type IN ('investment', 'crypto', 'other_asset') THEN 'Opening account value'
                ELSE 'Opening balance' END
      FROM accounts a;

    INSERT INTO valuations (id, family_id, account_id, date, amount, currency, kind, name)
    SELECT gen_random_uuid(), a.family_id, a.id,
           greatest(CURRENT_DATE, (SELECT max(t.date) FROM transactions t WHERE t.account_id = a.id)),
           a.balance, a.currency, 'current_anchor',
           CASE WHEN a.account_type IN ('property', 'vehicle') THEN 'Current market value'
                WHEN a.account_type = 'loan' THEN 'Current loan balance'
                WHEN a.account_type IN ('investment', 'crypto', 'other_asset') THEN 'Current account value'
                ELSE 'Current balance' END
      FROM accounts a
     WHERE EXISTS (SELECT 1 FROM bank_provider_accounts p WHERE p.account_id = a.id AND p.balance IS NOT NULL);
  `);
  const [accounts] = (await sequelize.query(
    `SELECT a.id, EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = a.id AND v.kind = 'current_anchor') AS reverse FROM accounts a`,
  )) as [Array<{ id: string; reverse: boolean }>, unknown];
  for (const account of accounts) {
    await sequelize.query(recomputeStatement(account.reverse ? "reverse" : "forward"), { bind: [account.id, FULL_HISTORY] });
  }
}

const FULL_HISTORY = "-infinity";

/**
 * The ledger's recompute statement as it stood when this migration was written (the service's own is
 * src/finance/ledger/ledger.sql.ts): a migration keeps doing what it did, whatever the service becomes.
 */
const MOVING_ACCOUNT_TYPES = ["depository", "credit_card", "investment", "crypto", "loan"] as const;

function recomputeStatement(mode: "forward" | "reverse"): string {
  const moving = MOVING_ACCOUNT_TYPES.map((type) => `'${type}'`).join(", ");
  const anchorOf = mode === "reverse" ? "CASE WHEN kind <> 'opening_anchor' THEN amount END" : "amount";
  const series =
    mode === "forward"
      ? `segments AS (
           SELECT d.*, count(d.valuation) OVER (ORDER BY d.date) AS segment FROM days d
         ),
         series AS (
           SELECT date, inflows, outflows, net, valuation,
                  CASE WHEN segment = 0 THEN coalesce((SELECT end_balance FROM prior), 0) ELSE max(valuation) OVER (PARTITION BY segment) END
                    + sum(CASE WHEN valuation IS NULL THEN net ELSE 0 END) OVER (PARTITION BY segment ORDER BY date) AS end_balance
             FROM segments
         ),
         computed AS (
           SELECT date, inflows, outflows, end_balance,
                  coalesce(lag(end_balance) OVER (ORDER BY date), (SELECT end_balance FROM prior), valuation, 0) AS start_balance
             FROM series
         )`
      : `segments AS (
           SELECT d.*, count(d.valuation) OVER (ORDER BY d.date DESC) AS segment FROM days d
         ),
         newest_anchor AS (
           SELECT valuation FROM days WHERE valuation IS NOT NULL ORDER BY date DESC LIMIT 1
         ),
         series AS (
           SELECT date, inflows, outflows, net,
                  CASE WHEN segment = 0
                    THEN (SELECT valuation FROM newest_anchor) + sum(net) OVER (PARTITION BY segment ORDER BY date)
                    ELSE max(valuation) OVER (PARTITION BY segment)
                      - coalesce(sum(net) OVER (PARTITION BY segment ORDER BY date DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
                  END AS end_balance
             FROM segments
         ),
         computed AS (
           SELECT date, inflows, outflows, end_balance, end_balance - net AS start_balance FROM series
         )`;
  return `
    WITH account AS (
      SELECT CASE WHEN classification = 'liability' THEN -1 ELSE 1 END AS factor, account_type IN (${moving}) AS moves
        FROM accounts WHERE id = $1
    ),
    prior AS (
      SELECT end_balance FROM balances WHERE account_id = $1 AND date < $2::date ORDER BY date DESC LIMIT 1
    ),
    entries AS (
      SELECT date, sum(greatest(-amount, 0)) AS inflows, sum(greatest(amount, 0)) AS outflows, NULL::numeric AS valuation
        FROM transactions WHERE account_id = $1 AND date >= $2::date GROUP BY date
      UNION ALL
      SELECT date, 0, 0, ${anchorOf} FROM valuations WHERE account_id = $1 AND date >= $2::date
    ),
    days AS (
      SELECT e.date,
             CASE WHEN a.moves THEN sum(e.inflows) ELSE 0 END AS inflows,
             CASE WHEN a.moves THEN sum(e.outflows) ELSE 0 END AS outflows,
             CASE WHEN a.moves THEN (sum(e.inflows) - sum(e.outflows)) * a.factor ELSE 0 END AS net,
             max(e.valuation) AS valuation
        FROM entries e CROSS JOIN account a
       GROUP BY e.date, a.moves, a.factor
    ),
    ${series},
    removed AS (
      DELETE FROM balances b WHERE b.account_id = $1 AND b.date >= $2::date AND b.date NOT IN (SELECT date FROM computed)
    ),
    written AS (
      INSERT INTO balances (id, account_id, date, start_balance, end_balance, inflows, outflows)
      SELECT gen_random_uuid(), $1, date, start_balance, end_balance, inflows, outflows FROM computed
      ON CONFLICT (account_id, date) DO UPDATE
        SET start_balance = EXCLUDED.start_balance, end_balance = EXCLUDED.end_balance,
            inflows = EXCLUDED.inflows, outflows = EXCLUDED.outflows, updated_at = now()
        WHERE (balances.start_balance, balances.end_balance, balances.inflows, balances.outflows)
              IS DISTINCT FROM (EXCLUDED.start_balance, EXCLUDED.end_balance, EXCLUDED.inflows, EXCLUDED.outflows)
    ),
    newest AS (
      SELECT coalesce((SELECT end_balance FROM computed ORDER BY date DESC LIMIT 1), (SELECT end_balance FROM prior), 0) AS balance
    )
    UPDATE accounts SET balance = newest.balance FROM newest WHERE id = $1 AND accounts.balance IS DISTINCT FROM newest.balance`;
}
