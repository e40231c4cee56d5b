import path from "node:path";
import type { OutboundPolicy } from "../outbound/outbound.guard";
import { settingDoc } from "../common/docs-pages";
import { settings, type Settings } from "./settings";
import type { ChannelBudgets } from "./setting-values";

/**
 * Every setting of the service, parsed once at boot. This module is the only reader of process.env:
 * everything else receives a Config. The settings themselves, and what each means, are declared in
 * settings.ts (docs/settings.md is generated from there).
 */
export type Config = Readonly<{
  port: number;
  host: string;
  publicUrl?: string;
  databaseUrl?: string;
  databasePoolMax: number;
  /** PostgreSQL statement_timeout of the service's connections (requests and jobs; not migrations); 0: none. */
  databaseStatementTimeoutMs: number;
  dataDir: string;
  /** Port of the embedded PostgreSQL (0: any free port); the next free one when it is taken. */
  embeddedPostgresPort: number;
  redisUrl?: string;
  redisPrefix: string;
  logLevel: Settings["LOG_LEVEL"];
  /** auto: pretty lines on a terminal, JSON lines otherwise. */
  logFormat: Settings["LOG_FORMAT"];
  /**
   * Run by npm (`npm start`, `npx finance-gateway`): npm's shell dies on SIGTERM without passing it on,
   * so the service also stops when its parent process goes away.
   */
  launchedByNpm: boolean;
  /** Requests per API key or token per window; 0 turns rate limiting off. */
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  /** A signed-in console session's own budget per window (see transports/http/rate-limit.ts). */
  rateLimitConsoleRequests: number;
  trustProxy: boolean | number | string[];
  shutdownTimeoutMs: number;
  /**
   * /metrics: with a token, any client presenting it as a bearer token; without, loopback clients only
   * (not through a proxy). A worker-only process serves /metrics on its own port when one is set.
   */
  metrics: Readonly<{ token?: string; workerPort?: number }>;
  graphqlLandingPage: boolean;
  /** Largest estimated cost of one GraphQL operation with credentials; 0 turns the operation limits off. */
  graphqlMaxCost: number;
  /** How long a job's lock lasts without renewal: a crashed worker's job is taken over after about this long. */
  jobLockMs: number;
  assistant: AssistantConfig;
  /** base64 of 32 bytes; unset: generated once into DATA_DIR/encryption-key. */
  encryptionKey?: string;
  /** Plain-http and loopback bank-provider URLs (the test fakes); never in production. */
  allowInsecureUpstreams: boolean;
  bankSyncIntervalHours: number;
  /** Default of a new connection's include-pending setting. */
  bankIncludePending: boolean;
  bankHistoryDays: number;
  simplefinDailyRequestBudget: number;
  lunchflowBaseUrl: string;
  bankUpstreamTimeoutMs: number;
  bankRetryBaseMs: number;
  /** How long an API process remembers a key that authenticated (eviction events end it sooner). */
  apiKeyCacheMs: number;
  /** Lifetime of a bearer access token; a refresh token gets a new one. */
  accessTokenTtlSeconds: number;
  /** Absolute lifetime of a signed-in session (and of its refresh tokens). */
  sessionTtlSeconds: number;
  /** Failed local logins in a row that lock an account, and for how long. */
  loginMaxFailures: number;
  loginLockoutSeconds: number;
  /** How long a just-exchanged refresh token still answers with the same new pair. */
  refreshReuseGraceSeconds: number;
  /** Administrators must sign in with a second factor. */
  mfaRequiredForAdmins: boolean;
  /** The mobile app's SSO: allowed deep links (the first is the default) and upstream's provider names → our slugs. */
  mobileSso: Readonly<{ redirectUris: string[]; providerAliases: Record<string, string> }>;
  /** Monthly audit partitions kept created ahead of the current month. */
  auditPartitionsAhead: number;
  /** OpenID Connect client: discovery cache, JWKS refetch limit, clock skew and timeout (issuers obey allowInsecureUpstreams). */
  /** How long an audit page may spend counting its total (up to 10 000) before reporting a lower bound. */
  auditCountBudgetMs: number;
  exports: ExportConfig;
  auditHistogramBudgetMs: number;
  sso: Readonly<{ discoveryTtlMs: number; jwksCooldownMs: number; clockToleranceSeconds: number; timeoutSeconds: number }>;
  /** Audit streaming (src/audit/streaming): how often workers look for work, a turn's lease, turns at once, retry waits, log retention. */
  streaming: Readonly<{ pollMs: number; leaseMs: number; concurrency: number; retryScheduleMs: number[]; deliveryLogDays: number }>;
  /** Audit retention (src/audit/retention): archive storage, checkpoint signing and publishing, tier settings a new instance starts with. */
  retention: RetentionConfig;
  /** Alerts (src/audit/alerts): how often the dispatcher looks for due deliveries, its retry waits, the country database's folder. */
  alerts: Readonly<{ pollMs: number; retryScheduleMs: number[]; geoDirectory: string | null; limits: AlertLimits }>;
  /** The outbound guard's policy (src/platform/outbound): which addresses user-supplied URLs may reach, timeouts, response cap. */
  outbound: OutboundPolicy;
  /** File imports: the largest file read and the most data rows one import holds. */
  imports: Readonly<{ maxBytes: number; maxRows: number }>;
}>;

/** Alert storm limits (docs/alerts.md, "Storm limits"): a rule's cool-down and firing cap, each channel kind's send budget. */
export type AlertLimits = Readonly<{
  cooldownSeconds: number;
  firingCap: number;
  capWindowSeconds: number;
  channelBudgets: Readonly<ChannelBudgets>;
  budgetWindowSeconds: number;
}>;

export type AssistantConfig = Readonly<{
  /** builtin needs no network; openai speaks to any OpenAI-compatible chat-completions server. */
  provider: "builtin" | "openai";
  baseUrl?: string;
  apiKey?: string;
  defaultModel: string;
  /** Models a client may ask for; the default model is always one of them. */
  allowedModels: string[];
  stream: boolean;
  timeoutMs: number;
  maxToolRounds: number;
  maxAttempts: number;
  retryDelayMs: number;
  replyTimeoutSeconds: number;
}>;

export type ExportConfig = Readonly<{
  /** Where export and report files are written (every API and worker process must see the same folder). */
  dir: string;
  /** How long a finished file stays downloadable before the cleanup job removes it. */
  retentionMs: number;
  /** Lifetime of a signed download URL. */
  urlTtlSeconds: number;
  /** Events read per database round trip while exporting. */
  batchRows: number;
  /** Detail rows a report lists per table (its totals always count everything). */
  reportMaxRows: number;
}>;

export type RetentionConfig = Readonly<{
  /** Database window and tiers until an administrator changes them (`AUDIT_RETENTION_TIERS`: `default[,pattern=tier…]`). */
  databaseDays?: number;
  tiers?: string;
  /** Archive folder (the default store) and the local folder archives are written in before they are stored. */
  archiveDir: string;
  stagingDir: string;
  s3: Readonly<{
    bucket: string;
    prefix: string;
    endpoint?: string;
    region: string;
    accessKeyId?: string;
    secretAccessKey?: string;
    forcePathStyle: boolean;
  }> | null;
  /** The checkpoint signing key (Go signed-note private key text), or the file it is generated in. */
  checkpointKey?: string;
  checkpointKeyFile: string;
  checkpointOrigin: string;
  /** A file each new checkpoint is appended to. */
  checkpointFile?: string;
  /** Bounds of archive reading: the longest line, and the archive bytes one API request may read. */
  maxLineBytes: number;
  requestBytes: number;
}>;

export const BUILTIN_MODEL = "builtin";

function assistantConfig(s: Settings): AssistantConfig {
  // A model server named by URL or key means the operator wants it; otherwise the offline assistant answers.
  const provider = s.ASSISTANT_PROVIDER ?? (s.OPENAI_BASE_URL || s.OPENAI_API_KEY ? "openai" : "builtin");
  const defaultModel = provider === "builtin" ? BUILTIN_MODEL : (s.ASSISTANT_MODEL ?? "gpt-4o-mini");
  const listed = (s.ASSISTANT_MODELS ?? "")
    .split(",")
    .map((model) => model.trim())
    .filter(Boolean);
  return {
    provider,
    baseUrl: s.OPENAI_BASE_URL,
    apiKey: s.OPENAI_API_KEY,
    defaultModel,
    allowedModels: provider === "builtin" ? [BUILTIN_MODEL] : [...new Set([defaultModel, ...listed])],
    stream: s.ASSISTANT_STREAM,
    timeoutMs: s.ASSISTANT_TIMEOUT_MS,
    maxToolRounds: s.ASSISTANT_MAX_TOOL_ROUNDS,
    maxAttempts: s.ASSISTANT_MAX_ATTEMPTS,
    retryDelayMs: s.ASSISTANT_RETRY_DELAY_MS,
    replyTimeoutSeconds: s.ASSISTANT_REPLY_TIMEOUT_SECONDS,
  };
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = settings.safeParse(present);
  if (!parsed.success) {
    // Each problem names its setting and where the setting is described, so the message says how to fix it.
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join(".");
      return `${name}: ${issue.message} (see ${settingDoc(name)})`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const s = parsed.data;
  return Object.freeze({
    port: s.PORT,
    host: s.HOST,
    publicUrl: s.PUBLIC_URL,
    databaseUrl: s.DATABASE_URL,
    databasePoolMax: s.DATABASE_POOL_MAX,
    databaseStatementTimeoutMs: s.DATABASE_STATEMENT_TIMEOUT_MS,
    dataDir: path.resolve(s.DATA_DIR),
    embeddedPostgresPort: s.EMBEDDED_POSTGRES_PORT,
    redisUrl: s.REDIS_URL,
    redisPrefix: s.REDIS_PREFIX,
    logLevel: s.LOG_LEVEL,
    logFormat: s.LOG_FORMAT,
    launchedByNpm: s.npm_lifecycle_event !== undefined,
    rateLimitRequests: s.RATE_LIMIT_REQUESTS,
    rateLimitWindowSeconds: s.RATE_LIMIT_WINDOW_SECONDS,
    rateLimitConsoleRequests: s.RATE_LIMIT_CONSOLE_REQUESTS,
    trustProxy: s.TRUST_PROXY,
    shutdownTimeoutMs: s.SHUTDOWN_TIMEOUT_MS,
    metrics: Object.freeze({ token: s.METRICS_TOKEN, workerPort: s.METRICS_PORT }),
    graphqlLandingPage: s.GRAPHQL_LANDING_PAGE,
    graphqlMaxCost: s.GRAPHQL_MAX_COST,
    jobLockMs: s.JOB_LOCK_MS,
    assistant: Object.freeze(assistantConfig(s)),
    encryptionKey: s.ENCRYPTION_KEY,
    allowInsecureUpstreams: s.ALLOW_INSECURE_UPSTREAMS,
    bankSyncIntervalHours: s.BANK_SYNC_INTERVAL_HOURS,
    bankIncludePending: s.BANK_INCLUDE_PENDING,
    bankHistoryDays: s.BANK_HISTORY_DAYS,
    simplefinDailyRequestBudget: s.SIMPLEFIN_DAILY_REQUEST_BUDGET,
    lunchflowBaseUrl: s.LUNCHFLOW_BASE_URL,
    bankUpstreamTimeoutMs: s.BANK_UPSTREAM_TIMEOUT_MS,
    bankRetryBaseMs: s.BANK_RETRY_BASE_MS,
    apiKeyCacheMs: s.API_KEY_CACHE_MS,
    accessTokenTtlSeconds: s.ACCESS_TOKEN_TTL_SECONDS,
    sessionTtlSeconds: s.SESSION_TTL_SECONDS,
    loginMaxFailures: s.LOGIN_MAX_FAILURES,
    loginLockoutSeconds: s.LOGIN_LOCKOUT_SECONDS,
    refreshReuseGraceSeconds: s.REFRESH_REUSE_GRACE_SECONDS,
    mfaRequiredForAdmins: s.MFA_REQUIRED_FOR_ADMINS,
    mobileSso: Object.freeze({
      redirectUris: s.MOBILE_SSO_REDIRECT_URIS.split(",")
        .map((uri) => uri.trim())
        .filter(Boolean),
      providerAliases: Object.fromEntries(
        s.MOBILE_SSO_PROVIDER_ALIASES.split(",")
          .map((pair) => pair.split("=").map((part) => part.trim()))
          .filter((pair) => pair.length === 2 && pair[0] && pair[1]),
      ) as Record<string, string>,
    }),
    auditPartitionsAhead: s.AUDIT_PARTITIONS_AHEAD,
    auditCountBudgetMs: s.AUDIT_COUNT_BUDGET_MS,
    exports: Object.freeze({
      dir: path.resolve(s.EXPORT_DIR ?? path.join(s.DATA_DIR, "exports")),
      retentionMs: Math.round(s.EXPORT_RETENTION_HOURS * 3_600_000),
      urlTtlSeconds: s.EXPORT_URL_TTL_SECONDS,
      batchRows: s.EXPORT_BATCH_ROWS,
      reportMaxRows: s.REPORT_MAX_ROWS,
    }),
    auditHistogramBudgetMs: s.AUDIT_HISTOGRAM_BUDGET_MS,
    sso: Object.freeze({
      discoveryTtlMs: s.SSO_DISCOVERY_TTL_SECONDS * 1000,
      jwksCooldownMs: s.SSO_JWKS_COOLDOWN_MS,
      clockToleranceSeconds: s.SSO_CLOCK_TOLERANCE_SECONDS,
      timeoutSeconds: s.SSO_TIMEOUT_SECONDS,
    }),
    streaming: Object.freeze({
      pollMs: s.STREAM_POLL_MS,
      leaseMs: s.STREAM_LEASE_MS,
      concurrency: s.STREAM_CONCURRENCY,
      retryScheduleMs: s.STREAM_RETRY_SCHEDULE,
      deliveryLogDays: s.STREAM_DELIVERY_LOG_DAYS,
    }),
    retention: Object.freeze({
      databaseDays: s.AUDIT_RETENTION_DATABASE_DAYS,
      tiers: s.AUDIT_RETENTION_TIERS,
      archiveDir: path.resolve(s.AUDIT_ARCHIVE_DIR ?? path.join(s.DATA_DIR, "audit-archive")),
      stagingDir: path.resolve(path.join(s.DATA_DIR, "audit-archive-staging")),
      s3: s.AUDIT_ARCHIVE_S3_BUCKET
        ? Object.freeze({
            bucket: s.AUDIT_ARCHIVE_S3_BUCKET,
            prefix: s.AUDIT_ARCHIVE_S3_PREFIX,
            endpoint: s.AUDIT_ARCHIVE_S3_ENDPOINT,
            region: s.AUDIT_ARCHIVE_S3_REGION,
            accessKeyId: s.AUDIT_ARCHIVE_S3_ACCESS_KEY_ID,
            secretAccessKey: s.AUDIT_ARCHIVE_S3_SECRET_ACCESS_KEY,
            forcePathStyle: s.AUDIT_ARCHIVE_S3_FORCE_PATH_STYLE,
          })
        : null,
      checkpointKey: s.AUDIT_CHECKPOINT_KEY,
      checkpointKeyFile: path.resolve(path.join(s.DATA_DIR, "audit-checkpoint-key")),
      checkpointOrigin: s.AUDIT_CHECKPOINT_ORIGIN,
      checkpointFile: s.AUDIT_CHECKPOINT_FILE ? path.resolve(s.AUDIT_CHECKPOINT_FILE) : undefined,
      maxLineBytes: s.AUDIT_ARCHIVE_MAX_LINE_BYTES,
      requestBytes: s.AUDIT_ARCHIVE_REQUEST_BYTES,
    }),
    alerts: Object.freeze({
      pollMs: s.ALERT_POLL_MS,
      retryScheduleMs: s.ALERT_RETRY_SCHEDULE,
      geoDirectory: s.ALERT_GEO_DIRECTORY ? path.resolve(s.ALERT_GEO_DIRECTORY) : null,
      limits: Object.freeze({
        cooldownSeconds: s.ALERT_COOLDOWN_SECONDS,
        firingCap: s.ALERT_FIRING_CAP,
        capWindowSeconds: s.ALERT_FIRING_CAP_WINDOW_SECONDS,
        channelBudgets: Object.freeze({ ...s.ALERT_CHANNEL_BUDGETS }),
        budgetWindowSeconds: s.ALERT_CHANNEL_BUDGET_WINDOW_SECONDS,
      }),
    }),
    outbound: Object.freeze({
      allowPrivate: s.OUTBOUND_ALLOW_PRIVATE,
      allowlist: s.OUTBOUND_ALLOWLIST,
      connectTimeoutMs: s.OUTBOUND_CONNECT_TIMEOUT_MS,
      timeoutMs: s.OUTBOUND_TIMEOUT_MS,
      maxResponseBytes: s.OUTBOUND_MAX_RESPONSE_BYTES,
    }),
    imports: Object.freeze({ maxBytes: s.IMPORT_MAX_BYTES, maxRows: s.IMPORT_MAX_ROWS }),
  });
}
