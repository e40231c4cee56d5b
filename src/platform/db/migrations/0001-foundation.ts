import type { MigrationContext } from "./context";

/**
 * Families own everything money-related; composite foreign keys on (family_id, id) make it impossible,
 * even for a buggy query, to attach a transaction to another family's account, category or merchant.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE families (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      currency char(3) NOT NULL DEFAULT 'USD',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE users (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      email text NOT NULL,
      name text,
      role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'auditor', 'member')),
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'deleted')),
      ai_enabled boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX users_email_key ON users (lower(email));
    CREATE INDEX users_family_idx ON users (family_id);

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      key_hash bytea NOT NULL UNIQUE,
      display_prefix text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('read', 'read_write')),
      last_used_at timestamptz,
      expires_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX api_keys_user_idx ON api_keys (user_id);

    CREATE TABLE accounts (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      name text NOT NULL,
      account_type text NOT NULL CHECK (account_type IN ('depository', 'investment', 'crypto', 'property',
        'vehicle', 'other_asset', 'credit_card', 'loan', 'other_liability')),
      classification text NOT NULL CHECK (classification IN ('asset', 'liability')),
      currency char(3) NOT NULL,
      balance numeric(19, 4) NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, id)
    );
    CREATE INDEX accounts_family_name_idx ON accounts (family_id, name);

    CREATE TABLE categories (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      parent_id uuid,
      name text NOT NULL,
      classification text NOT NULL CHECK (classification IN ('income', 'expense')),
      color text NOT NULL CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
      icon text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, id),
      FOREIGN KEY (family_id, parent_id) REFERENCES categories (family_id, id) ON DELETE SET NULL (parent_id)
    );
    CREATE UNIQUE INDEX categories_family_name_key ON categories (family_id, lower(name));

    CREATE TABLE merchants (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      name text NOT NULL,
      color text CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
      logo_url text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, id)
    );
    CREATE UNIQUE INDEX merchants_family_name_key ON merchants (family_id, lower(name));
    CREATE INDEX merchants_family_order_idx ON merchants (family_id, name, id);

    CREATE TABLE tags (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      name text NOT NULL,
      color text NOT NULL CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, id)
    );
    CREATE UNIQUE INDEX tags_family_name_key ON tags (family_id, lower(name));

    CREATE TABLE transactions (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL,
      account_id uuid NOT NULL,
      date date NOT NULL,
      amount numeric(19, 4) NOT NULL CHECK (abs(amount) < 1000000000000),
      currency char(3) NOT NULL,
      name text NOT NULL,
      notes text,
      category_id uuid,
      merchant_id uuid,
      pending boolean NOT NULL DEFAULT false,
      external_id text,
      source text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (family_id, account_id) REFERENCES accounts (family_id, id) ON DELETE CASCADE,
      FOREIGN KEY (family_id, category_id) REFERENCES categories (family_id, id) ON DELETE SET NULL (category_id),
      FOREIGN KEY (family_id, merchant_id) REFERENCES merchants (family_id, id) ON DELETE SET NULL (merchant_id)
    );
    CREATE INDEX transactions_family_recent_idx ON transactions (family_id, date DESC, created_at DESC, id DESC);
    CREATE INDEX transactions_account_recent_idx ON transactions (account_id, date DESC);
    CREATE INDEX transactions_category_idx ON transactions (category_id) WHERE category_id IS NOT NULL;
    CREATE INDEX transactions_merchant_idx ON transactions (merchant_id) WHERE merchant_id IS NOT NULL;
    CREATE UNIQUE INDEX transactions_external_key
      ON transactions (account_id, coalesce(source, ''), external_id) WHERE external_id IS NOT NULL;

    CREATE TABLE transaction_tags (
      transaction_id uuid NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
      tag_id uuid NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
      PRIMARY KEY (transaction_id, tag_id)
    );
    CREATE INDEX transaction_tags_tag_idx ON transaction_tags (tag_id);

    CREATE TABLE transfers (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      outflow_transaction_id uuid NOT NULL UNIQUE REFERENCES transactions (id) ON DELETE CASCADE,
      inflow_transaction_id uuid NOT NULL UNIQUE REFERENCES transactions (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (outflow_transaction_id <> inflow_transaction_id)
    );
  `);
}
