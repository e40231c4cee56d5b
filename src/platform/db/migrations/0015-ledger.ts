import type { MigrationContext } from "./context";
import { FULL_HISTORY, recomputeStatement } from "../../../finance/ledger/ledger.sql";

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
