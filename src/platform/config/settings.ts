import path from "node:path";
import { z } from "zod";
import { auditSettings } from "./audit-settings";
import { projectRoot } from "./project-root";
import { setting } from "./settings-doc";
import { booleanFlag, encryptionKey, outboundAllowlist, postgresUrl, redisUrl, trustProxy } from "./setting-values";

/**
 * Every setting of the service: how it is parsed, and what it means. config.ts parses process.env with
 * this schema once, at boot; docs/settings.md is generated from it (`npm run contracts`), so a setting
 * added here without its meaning fails the build of that page, and one added without regenerating the
 * page fails the drift test.
 */
export const settings = z.object({
  PORT: setting(z.coerce.number().int().min(0).max(65535).default(3000), "Server", "HTTP port. `0` picks a free port."),
  HOST: setting(z.string().min(1).default("0.0.0.0"), "Server", "Interface to listen on."),
  PUBLIC_URL: setting(
    z.url().optional(),
    "Server",
    "Base URL people reach the service at: printed at start, and the base of SSO redirect URIs. " +
      "Unset: `http://localhost:PORT`, or `http://HOST:PORT` if `HOST` is not `0.0.0.0`.",
  ),
  DATABASE_URL: setting(
    postgresUrl.optional(),
    "Database",
    "PostgreSQL server. Unset: an embedded PostgreSQL under `DATA_DIR` (see [the database](operating.md#the-database)).",
    { range: "`postgres://` or `postgresql://` URL" },
  ),
  DATABASE_POOL_MAX: setting(z.coerce.number().int().min(2).max(200).default(10), "Database", "Size of the database connection pool."),
  DATABASE_STATEMENT_TIMEOUT_MS: setting(
    z.coerce.number().int().min(0).default(30000),
    "Database",
    "PostgreSQL `statement_timeout` of the service's connections (requests and jobs; migrations run without it). " +
      "A statement running longer is cancelled and the request answers `503 query_timeout`. `0`: no limit.",
  ),
  DATA_DIR: setting(
    z.string().min(1).default(path.join(projectRoot, ".data")),
    "Database",
    "Folder for the embedded PostgreSQL (its data files in `postgres/` and its generated password) and the generated keys.",
    { default: "`<project>/.data`" },
  ),
  EMBEDDED_POSTGRES_PORT: setting(
    z.coerce.number().int().min(0).max(65535).default(54320),
    "Database",
    "Port of the embedded PostgreSQL (loopback only). When it is taken, the next free one of the following 9 is used, " +
      "and the start banner and `db url` say which. `0` picks any free port.",
  ),
  REDIS_URL: setting(
    redisUrl.optional(),
    "Queues",
    "Redis for the BullMQ queues, the event bus and the rate-limit counters. Unset: all of them use PostgreSQL. " +
      "Required when the API and the workers run as [several processes](operating.md#several-api-and-worker-processes).",
    { range: "`redis://` or `rediss://` URL" },
  ),
  REDIS_PREFIX: setting(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only")
      .default("fg"),
    "Queues",
    "Prefix of every queue and rate-limit key.",
    { range: "letters, digits, `_` and `-`" },
  ),
  LOG_LEVEL: setting(
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    "Logs and metrics",
    "At `info`, one line per request (see [logs](operating.md#logs)); `debug` adds the client address and user agent. " +
      "CLI data commands log to stderr, at `warn` when this is left at `info`.",
  ),
  LOG_FORMAT: setting(
    z.enum(["auto", "json", "pretty"]).default("auto"),
    "Logs and metrics",
    "`pretty` (readable, coloured lines), `json` (one JSON object per line, for log collectors) or `auto`: pretty on a terminal, JSON otherwise.",
  ),
  RATE_LIMIT_REQUESTS: setting(
    z.coerce.number().int().min(0).default(1000),
    "Server",
    "Requests allowed per API key or token per window; unauthenticated requests count per client IP. `0` turns rate limiting off.",
  ),
  RATE_LIMIT_WINDOW_SECONDS: setting(
    z.coerce.number().int().min(1).default(3600),
    "Server",
    "Length of the fixed rate-limit window, in seconds.",
  ),
  RATE_LIMIT_CONSOLE_REQUESTS: setting(
    z.coerce.number().int().min(1).default(20000),
    "Server",
    "Requests allowed per signed-in admin console session (its session cookie) per window: a budget of its own, so reading " +
      "the console never spends an API key's or token's. See [the console](console.md#rate-limit-the-console-has-a-budget-of-its-own).",
  ),
  TRUST_PROXY: setting(
    trustProxy.default(["loopback"]),
    "Server",
    "Express `trust proxy`: whose `X-Forwarded-For` to believe. Sets the client IP used in logs, in the audit log and for " +
      "unauthenticated rate limiting.",
    {
      default: "`loopback`",
      range: "`true`, `false`, a hop count (`1`), or comma-separated addresses, CIDR ranges and `loopback`, `linklocal`, `uniquelocal`",
    },
  ),
  SHUTDOWN_TIMEOUT_MS: setting(
    z.coerce.number().int().min(100).default(10000),
    "Server",
    "After SIGTERM or SIGINT, how long to wait for requests and jobs to drain; still running after that, the process exits with status 1.",
  ),
  METRICS_TOKEN: setting(
    z.string().min(16, "must be at least 16 characters").optional(),
    "Logs and metrics",
    "A bearer token for `GET /metrics`. Unset: only clients on this machine, connected directly, may read it " +
      "(see [metrics](operating.md#metrics)).",
    { range: "16 characters or more" },
  ),
  METRICS_PORT: setting(
    z.coerce.number().int().min(0).max(65535).optional(),
    "Logs and metrics",
    "A worker-only process (`finance-gateway worker`) serves `GET /metrics` on `HOST:METRICS_PORT`; unset, it opens no port. " +
      "API processes serve `/metrics` on `PORT`.",
  ),
  GRAPHQL_LANDING_PAGE: setting(
    booleanFlag.default(true),
    "GraphQL",
    "Serve the bundled GraphiQL explorer on `GET /graphql` to a browser (see [GraphQL](graphql.md#the-explorer)).",
  ),
  GRAPHQL_MAX_COST: setting(
    z.coerce.number().int().min(0).default(50000),
    "GraphQL",
    "Largest estimated cost of one GraphQL operation with credentials (see [limits on hostile clients](security.md#limits-on-hostile-clients)). " +
      "`0` turns the GraphQL operation limits off (to measure them; never in production).",
  ),
  JOB_LOCK_MS: setting(
    z.coerce.number().int().min(500).default(30000),
    "Queues",
    "How long a running job's lock lasts without renewal. A worker that dies mid-job loses its lock; another worker takes the job over after about this long.",
  ),
  ASSISTANT_PROVIDER: setting(
    z.enum(["builtin", "openai"]).optional(),
    "Assistant",
    "`builtin` (offline, no model server) or `openai` (any OpenAI-compatible chat-completions server; see [the assistant](assistant.md)).",
    { default: "`openai` when `OPENAI_BASE_URL` or `OPENAI_API_KEY` is set, else `builtin`" },
  ),
  OPENAI_BASE_URL: setting(
    z.url().optional(),
    "Assistant",
    "Base URL of the model server, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), `http://localhost:1234/v1` (LM Studio). " +
      "Unset with `openai`: the OpenAI SDK's default (api.openai.com).",
  ),
  OPENAI_API_KEY: setting(
    z.string().optional(),
    "Assistant",
    "Key sent to the model server. Local servers that need none may leave it unset.",
  ),
  ASSISTANT_MODEL: setting(
    z.string().min(1).optional(),
    "Assistant",
    "Default model for replies with `openai`. With `builtin` the model is always `builtin`.",
    { default: "`gpt-4o-mini`" },
  ),
  ASSISTANT_MODELS: setting(
    z.string().optional(),
    "Assistant",
    "Comma-separated models a client may choose with `model`; the default model is always allowed. Any other `model` is a 422.",
  ),
  ASSISTANT_STREAM: setting(
    booleanFlag.default(true),
    "Assistant",
    "Stream replies from the model server; subscribers of `chatEvents` receive the text as it arrives (`PARTIAL` events).",
  ),
  ASSISTANT_TIMEOUT_MS: setting(
    z.coerce.number().int().min(100).default(60000),
    "Assistant",
    'Timeout of one request to the model server. A timeout counts as "temporarily unavailable" and is retried.',
  ),
  ASSISTANT_MAX_TOOL_ROUNDS: setting(
    z.coerce.number().int().min(1).max(20).default(5),
    "Assistant",
    "Rounds of model requests per reply. The last round offers no tools, so the model must answer.",
  ),
  ASSISTANT_MAX_ATTEMPTS: setting(
    z.coerce.number().int().min(1).max(10).default(3),
    "Assistant",
    "Attempts per reply. Rate limits (429), server errors (5xx) and timeouts are retried; other errors fail the reply at once.",
  ),
  ASSISTANT_RETRY_DELAY_MS: setting(
    z.coerce.number().int().min(0).default(2000),
    "Assistant",
    "First retry delay; it doubles at each further attempt.",
  ),
  ASSISTANT_REPLY_TIMEOUT_SECONDS: setting(
    z.coerce.number().int().min(1).default(300),
    "Assistant",
    "The watchdog (every minute) marks replies still pending after this long as failed.",
  ),
  ENCRYPTION_KEY: setting(
    encryptionKey.optional(),
    "Secrets",
    "AES-256-GCM key for secrets at rest (bank-provider API keys, SimpleFIN access URLs, SSO client secrets, streaming and alert credentials). " +
      "Unset: generated once into `DATA_DIR/encryption-key` (mode 0600) and reused; every process must see the same key " +
      "(see [backup and restore](operating.md#backup-and-restore)).",
    { range: "base64 of exactly 32 bytes (`openssl rand -base64 32`)" },
  ),
  ALLOW_INSECURE_UPSTREAMS: setting(
    booleanFlag.default(false),
    "Bank connections",
    "Allow plain-`http` bank-provider URLs and SSO issuers (test fakes and local try-outs only). Loopback and private addresses also need " +
      "an outbound exception (`OUTBOUND_ALLOW_PRIVATE` or `OUTBOUND_ALLOWLIST`); see [bank connections](bank-connections.md#try-it-without-a-bank).",
  ),
  BANK_SYNC_INTERVAL_HOURS: setting(
    z.coerce
      .number()
      .min(0.01)
      .max(24 * 30)
      .default(24),
    "Bank connections",
    "How often each bank connection is refreshed automatically (the refresh job checks every 10 minutes).",
  ),
  BANK_INCLUDE_PENDING: setting(
    booleanFlag.default(true),
    "Bank connections",
    "Default of a new connection's include-pending setting (each connection can change it).",
  ),
  BANK_HISTORY_DAYS: setting(
    z.coerce.number().int().min(1).max(3650).default(730),
    "Bank connections",
    "How much history a connection's first sync imports, in days.",
  ),
  SIMPLEFIN_DAILY_REQUEST_BUDGET: setting(
    z.coerce.number().int().min(1).max(1000).default(24),
    "Bank connections",
    "Requests per SimpleFIN connection per UTC day; the refresh skips connections that spent it and a sync stops at it (resuming from its saved cursor).",
  ),
  LUNCHFLOW_BASE_URL: setting(
    z.url().default("https://lunchflow.app/api/v1"),
    "Bank connections",
    "Default Lunch Flow API base URL (a connection may name its own).",
  ),
  BANK_UPSTREAM_TIMEOUT_MS: setting(
    z.coerce.number().int().min(100).default(30000),
    "Bank connections",
    "Timeout of one bank-provider request.",
  ),
  BANK_RETRY_BASE_MS: setting(
    z.coerce.number().int().min(1).default(1000),
    "Bank connections",
    "First backoff delay of a retried provider request (exponential, with jitter; 3 attempts in all).",
  ),
  API_KEY_CACHE_MS: setting(
    z.coerce.number().int().min(0).max(60000).default(5000),
    "Sign-in",
    "How long an API process remembers a key that authenticated, in milliseconds, so a client's requests do not each read the key " +
      "and its owner. Revocation, suspension, deletion and role changes made through the service reach every process at once " +
      "whatever this is; it bounds only a change written into the database behind the service's back. `0`: every request reads the key.",
  ),
  ACCESS_TOKEN_TTL_SECONDS: setting(
    z.coerce.number().int().min(30).max(86400).default(900),
    "Sign-in",
    "Lifetime of a bearer access token, in seconds. A refresh token gets a new one.",
  ),
  SESSION_TTL_SECONDS: setting(
    z.coerce.number().int().min(300).default(604800),
    "Sign-in",
    "Absolute lifetime of a signed-in session and its refresh tokens, in seconds. Expired sessions are ended by a job every 5 minutes " +
      "and recorded as `auth.session.expired`.",
  ),
  LOGIN_MAX_FAILURES: setting(
    z.coerce.number().int().min(1).max(100).default(5),
    "Sign-in",
    "Failed local logins in a row that lock the account.",
  ),
  LOGIN_LOCKOUT_SECONDS: setting(
    z.coerce.number().int().min(1).default(900),
    "Sign-in",
    "How long a locked account refuses local logins, even with the right password.",
  ),
  REFRESH_REUSE_GRACE_SECONDS: setting(
    z.coerce.number().int().min(0).max(300).default(30),
    "Sign-in",
    "How long a refresh token that was just exchanged still answers with the same new pair (two screens of an app refreshing " +
      "at once both stay signed in). Presented again after this window, it revokes its whole session as a leaked token " +
      "(`auth.token.revoked`). 0 turns the leeway off. See [sign-in tokens](users.md#refresh-tokens).",
  ),
  MFA_REQUIRED_FOR_ADMINS: setting(
    booleanFlag.default(false),
    "Sign-in",
    "Administrators must have two-factor (TOTP) sign-in: an administrator without it is refused at a password sign-in " +
      "until they enrol (see [two-factor sign-in](users.md#two-factor-sign-in)).",
  ),
  MOBILE_SSO_REDIRECT_URIS: setting(
    z.string().min(1).default("sureapp://oauth/callback"),
    "Sign-in",
    "Comma-separated deep links the mobile app's SSO may return to (exact match, no open redirect); the first is the default. " +
      "Upstream's app registers `sureapp://oauth/callback`.",
  ),
  MOBILE_SSO_PROVIDER_ALIASES: setting(
    z.string().default(""),
    "Sign-in",
    "Upstream's provider names the mobile app asks for, mapped to our SSO providers' slugs: `google_oauth2=google,openid_connect=corp`. " +
      "A name not listed is looked up as a slug.",
  ),
  ...auditSettings,
  OUTBOUND_ALLOW_PRIVATE: setting(
    booleanFlag.default(false),
    "Outbound requests",
    "Let user-supplied URLs and hosts (webhooks, SIEM destinations, bank providers, SSO issuers: every upstream under the " +
      "[outbound guard](security.md#outbound-requests)) reach loopback, private, link-local, CGNAT and unique-local addresses. " +
      "For tests and private deployments; the unspecified address and multicast stay refused.",
  ),
  OUTBOUND_ALLOWLIST: setting(
    outboundAllowlist.default([]),
    "Outbound requests",
    "Exceptions to the outbound guard's address check: host names (`siem.corp.example`, `*.hooks.internal`), addresses and CIDR ranges " +
      "(`10.20.0.0/16`, `[fd00::5]`). A listed host name is trusted whatever it resolves to.",
    { default: "empty", range: "comma-separated host names, addresses and CIDR ranges" },
  ),
  OUTBOUND_CONNECT_TIMEOUT_MS: setting(
    z.coerce.number().int().min(50).max(120000).default(5000),
    "Outbound requests",
    "Time an outbound connection has to be established (TCP, and TLS for https).",
  ),
  OUTBOUND_TIMEOUT_MS: setting(
    z.coerce.number().int().min(100).max(600000).default(30000),
    "Outbound requests",
    "Time an outbound request has from start to the last byte of its answer.",
  ),
  OUTBOUND_MAX_RESPONSE_BYTES: setting(
    z.coerce
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(1024 * 1024),
    "Outbound requests",
    "Largest answer body an outbound request reads; a larger one fails the request.",
  ),
  IMPORT_MAX_BYTES: setting(
    z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(20 * 1024 * 1024),
    "Imports",
    "Largest file a [file import](imports.md) or its preflight reads; a larger upload is refused with `413` naming this limit.",
  ),
  IMPORT_MAX_ROWS: setting(
    z.coerce.number().int().min(1).max(10_000_000).default(100_000),
    "Imports",
    "Most data rows one [file import](imports.md) may hold; a file with more is refused with `422` naming this limit.",
  ),
  // Set by npm for the scripts it runs (`npm start`, `npx …`): not a setting, see Config.launchedByNpm.
  npm_lifecycle_event: z.string().optional(),
});

export type Settings = z.infer<typeof settings>;
