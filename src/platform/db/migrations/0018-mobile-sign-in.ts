import type { MigrationContext } from "./context";

/**
 * Sure's mobile app signing in every way it can:
 * - refresh rotation with a grace window: the pair a refresh token was exchanged for is kept sealed
 *   (SecretBox) on the old token, so a concurrent request presenting it within the window gets the
 *   same pair; it is cleared when the window has passed;
 * - TOTP two-factor: the secret sealed on the user, the last time step used (no replay), and the
 *   recovery codes as SHA-256 hashes, each usable once;
 * - SSO from the app: the browser round trip ends at the app's deep link with a one-time code (its
 *   hash stored), bound to the device that started it; `sso_login_requests` carries that device.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE auth_tokens ADD COLUMN successor_sealed text;

    ALTER TABLE auth_sessions ADD COLUMN device jsonb;

    ALTER TABLE users
      ADD COLUMN otp_secret_sealed text,
      ADD COLUMN otp_enabled_at timestamptz,
      ADD COLUMN otp_last_step bigint;

    CREATE TABLE user_recovery_codes (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      code_hash bytea NOT NULL UNIQUE,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX user_recovery_codes_user_idx ON user_recovery_codes (user_id);

    ALTER TABLE sso_login_requests DROP CONSTRAINT IF EXISTS sso_login_requests_purpose_check;
    ALTER TABLE sso_login_requests ADD CONSTRAINT sso_login_requests_purpose_check CHECK (purpose IN ('login', 'link', 'test', 'mobile'));
    ALTER TABLE sso_login_requests ADD COLUMN device jsonb;

    -- One-time codes handed to the app's deep link: 'tokens' carries a sealed token pair for
    -- sso_exchange; 'link' carries the sealed identity for sso_link / sso_create_account.
    CREATE TABLE mobile_sso_codes (
      code_hash bytea PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('tokens', 'link')),
      provider_id uuid REFERENCES sso_providers (id) ON DELETE CASCADE,
      user_id uuid REFERENCES users (id) ON DELETE CASCADE,
      device jsonb NOT NULL,
      payload_sealed text NOT NULL,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX mobile_sso_codes_expiry_idx ON mobile_sso_codes (expires_at);
  `);
}
