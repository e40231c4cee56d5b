import type { MigrationContext } from "./context";

/**
 * SSO with OpenID Connect (issue 5): the identity providers an administrator configures, the
 * identities (connected accounts) that tie a provider's subject to a user, the short-lived state of
 * authorization requests in flight, and the ID token of each SSO session for RP-initiated logout.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE sso_providers (
      id uuid PRIMARY KEY,
      slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$'),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      issuer text NOT NULL,
      client_id text NOT NULL,
      client_secret_encrypted text NOT NULL,
      scopes text[] NOT NULL,
      claim_mapping jsonb NOT NULL,
      role_mappings jsonb NOT NULL DEFAULT '[]',
      default_role text NOT NULL DEFAULT 'member' CHECK (default_role IN ('admin', 'auditor', 'member')),
      jit_provisioning boolean NOT NULL DEFAULT false,
      allowed_domains text[] NOT NULL DEFAULT '{}',
      provisioning_family_id uuid REFERENCES families (id) ON DELETE SET NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE sso_identities (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      provider_id uuid NOT NULL REFERENCES sso_providers (id) ON DELETE CASCADE,
      subject text NOT NULL,
      email text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_login_at timestamptz,
      UNIQUE (provider_id, subject)
    );
    CREATE INDEX sso_identities_user_idx ON sso_identities (user_id);

    -- One row per authorization request in flight: looked up by the hash of its state, bound to the
    -- browser that started it by the hash of a cookie, used once, dropped after a few minutes.
    CREATE TABLE sso_login_requests (
      state_hash bytea PRIMARY KEY,
      browser_hash bytea,
      provider_id uuid NOT NULL REFERENCES sso_providers (id) ON DELETE CASCADE,
      purpose text NOT NULL CHECK (purpose IN ('login', 'link', 'test')),
      user_id uuid REFERENCES users (id) ON DELETE CASCADE,
      nonce text NOT NULL,
      code_verifier_encrypted text NOT NULL,
      return_to text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX sso_login_requests_expiry_idx ON sso_login_requests (expires_at);

    CREATE TABLE sso_sessions (
      session_id uuid PRIMARY KEY REFERENCES auth_sessions (id) ON DELETE CASCADE,
      provider_id uuid REFERENCES sso_providers (id) ON DELETE SET NULL,
      id_token_encrypted text NOT NULL
    );
  `);
}
