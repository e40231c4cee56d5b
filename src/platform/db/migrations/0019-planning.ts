import type { MigrationContext } from "./context";

/**
 * Household planning (docs/planning.md): monthly budgets with per-category allocations, recurring
 * transactions (detected from history or entered by hand), and categorisation rules with their
 * conditions, actions and runs. Budget actuals are not stored: they are read from `transactions`
 * with the shared money rules each time.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE budgets (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      start_date date NOT NULL,
      end_date date NOT NULL CHECK (end_date >= start_date),
      currency char(3) NOT NULL,
      budgeted_spending numeric(19, 4) CHECK (budgeted_spending >= 0 AND budgeted_spending < 1000000000000),
      expected_income numeric(19, 4) CHECK (expected_income >= 0 AND expected_income < 1000000000000),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, start_date),
      UNIQUE (family_id, id)
    );

    CREATE TABLE budget_categories (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      budget_id uuid NOT NULL,
      category_id uuid NOT NULL,
      budgeted_spending numeric(19, 4) NOT NULL DEFAULT 0 CHECK (budgeted_spending >= 0 AND budgeted_spending < 1000000000000),
      currency char(3) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (budget_id, category_id),
      FOREIGN KEY (family_id, budget_id) REFERENCES budgets (family_id, id) ON DELETE CASCADE,
      FOREIGN KEY (family_id, category_id) REFERENCES categories (family_id, id) ON DELETE CASCADE
    );
    CREATE INDEX budget_categories_category_idx ON budget_categories (category_id);

    CREATE TABLE recurring_transactions (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      account_id uuid,
      merchant_id uuid,
      name text,
      amount numeric(19, 4) NOT NULL CHECK (abs(amount) < 1000000000000),
      currency char(3) NOT NULL,
      expected_day_of_month integer NOT NULL CHECK (expected_day_of_month BETWEEN 1 AND 31),
      last_occurrence_date date NOT NULL,
      next_expected_date date NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
      occurrence_count integer NOT NULL DEFAULT 0 CHECK (occurrence_count >= 0),
      manual boolean NOT NULL DEFAULT true,
      expected_amount_min numeric(19, 4),
      expected_amount_max numeric(19, 4),
      expected_amount_avg numeric(19, 4),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (merchant_id IS NOT NULL OR name IS NOT NULL),
      FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE,
      FOREIGN KEY (merchant_id) REFERENCES merchants (id) ON DELETE CASCADE
    );
    -- One detected pattern per account, merchant or name, amount and currency (upstream's lookup key).
    CREATE UNIQUE INDEX recurring_transactions_pattern_key ON recurring_transactions
      (family_id, account_id, merchant_id, name, amount, currency) NULLS NOT DISTINCT WHERE NOT manual;
    CREATE INDEX recurring_transactions_family_idx ON recurring_transactions (family_id, status, next_expected_date);

    CREATE TABLE rules (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      name text,
      resource_type text NOT NULL DEFAULT 'transaction' CHECK (resource_type IN ('transaction')),
      active boolean NOT NULL DEFAULT true,
      effective_date date,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX rules_family_idx ON rules (family_id, created_at, id);

    CREATE TABLE rule_conditions (
      id uuid PRIMARY KEY,
      rule_id uuid NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
      parent_id uuid REFERENCES rule_conditions (id) ON DELETE CASCADE,
      position integer NOT NULL,
      condition_type text NOT NULL,
      operator text NOT NULL,
      value text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX rule_conditions_rule_idx ON rule_conditions (rule_id, position);

    CREATE TABLE rule_actions (
      id uuid PRIMARY KEY,
      rule_id uuid NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
      position integer NOT NULL,
      action_type text NOT NULL,
      value text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX rule_actions_rule_idx ON rule_actions (rule_id, position);

    CREATE TABLE rule_runs (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      rule_id uuid REFERENCES rules (id) ON DELETE SET NULL,
      rule_name text,
      execution_type text NOT NULL CHECK (execution_type IN ('manual', 'scheduled')),
      status text NOT NULL CHECK (status IN ('pending', 'success', 'failed')),
      transactions_queued integer NOT NULL DEFAULT 0,
      transactions_processed integer NOT NULL DEFAULT 0,
      transactions_modified integer NOT NULL DEFAULT 0,
      pending_jobs_count integer NOT NULL DEFAULT 0,
      executed_at timestamptz NOT NULL,
      error_message text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX rule_runs_family_idx ON rule_runs (family_id, executed_at DESC, id);
  `);
}
