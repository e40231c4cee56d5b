import path from "node:path";
import proxyAddr from "proxy-addr";
import { z } from "zod";
import type { OutboundPolicy } from "../outbound/outbound.guard";
import { parseAllowlist } from "../outbound/outbound.addresses";
import { projectRoot } from "./project-root";

/**
 * Every setting of the service, parsed once at boot. This module is the only reader of process.env:
 * everything else receives a Config. The README's configuration table mirrors `settings` below.
 */
const booleanFlag = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((value) => value === "true" || value === "1" || value === "yes");

const postgresUrl = z.string().refine((value) => /^postgres(ql)?:\/\//.test(value), "must be a postgres:// or postgresql:// URL");

const redisUrl = z.string().refine((value) => /^rediss?:\/\//.test(value), "must be a redis:// or rediss:// URL");

/**
 * Which proxies' X-Forwarded-For to believe, as express reads it: true/false, a hop count, or
 * comma-separated addresses, CIDR ranges and the names loopback, linklocal, uniquelocal.
 */
const trustProxy = z.string().transform((value, ctx): boolean | number | string[] => {
  if (value === "true" || value === "false") return value === "true";
  if (/^\d+$/.test(value)) return Number(value);
  const list = value.split(",").map((part) => part.trim());
  try {
    proxyAddr.compile(list);
  } catch (error) {
    ctx.addIssue({
      code: "custom",
      message: `must be true, false, a hop count, or addresses/CIDRs/loopback (${(error as Error).message})`,
    });
    return z.NEVER;
  }
  return list;
});

/** 32 random bytes, base64: the AES-256-GCM key for secrets at rest (see src/platform/security/secret-box.ts). */
const encryptionKey = z.string().refine((value) => {
  const bytes = Buffer.from(value, "base64");
  return bytes.length === 32 && bytes.toString("base64").replace(/=+$/, "") === value.trim().replace(/=+$/, "");
}, "must be the base64 encoding of exactly 32 bytes (openssl rand -base64 32)");

/** Comma-separated hosts (`api.example.com`, `*.corp.example`) and addresses or CIDR ranges the outbound guard lets through. */
const outboundAllowlist = z.string().transform((value, ctx): string[] => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    parseAllowlist(entries);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
  return entries;
});

/** Durations like `5s`, `2m`, `1h`, `500ms`, comma-separated: the waits before each retry of a failing delivery. */
const durationList = z.string().transform((value, ctx): number[] => {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const parts = value.split(",").map((part) => part.trim());
  const durations = parts.map((part) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(part);
    return match ? Number(match[1]) * units[match[2]] : NaN;
  });
  if (parts.length === 0 || parts.length > 50 || durations.some((ms) => !Number.isFinite(ms) || ms > 7 * 86_400_000)) {
    ctx.addIssue({ code: "custom", message: "must be comma-separated durations such as 5s,1m,1h (each at most 7d, at most 50)" });
    return z.NEVER;
  }
  return durations;
});

const settings = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  PUBLIC_URL: z.url().optional(),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(200).default(10),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30000),
  DATA_DIR: z.string().min(1).default(path.join(projectRoot, ".data")),
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(0).max(65535).default(54320),
  REDIS_URL: redisUrl.optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only")
    .default("fg"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  LOG_FORMAT: z.enum(["auto", "json", "pretty"]).default("auto"),
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(0).default(1000),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(3600),
  RATE_LIMIT_CONSOLE_REQUESTS: z.coerce.number().int().min(1).default(20000),
  TRUST_PROXY: trustProxy.default(["loopback"]),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10000),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  GRAPHQL_LANDING_PAGE: booleanFlag.default(true),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(0).default(50000),
  JOB_LOCK_MS: z.coerce.number().int().min(500).default(30000),
  ASSISTANT_PROVIDER: z.enum(["builtin", "openai"]).optional(),
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  ASSISTANT_MODEL: z.string().min(1).optional(),
  ASSISTANT_MODELS: z.string().optional(),
  ASSISTANT_STREAM: booleanFlag.default(true),
  ASSISTANT_TIMEOUT_MS: z.coerce.number().int().min(100).default(60000),
  ASSISTANT_MAX_TOOL_ROUNDS: z.coerce.number().int().min(1).max(20).default(5),
  ASSISTANT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  ASSISTANT_RETRY_DELAY_MS: z.coerce.number().int().min(0).default(2000),
  ASSISTANT_REPLY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(300),
  ENCRYPTION_KEY: encryptionKey.optional(),
  ALLOW_INSECURE_UPSTREAMS: booleanFlag.default(false),
  BANK_SYNC_INTERVAL_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 30)
    .default(24),
  BANK_INCLUDE_PENDING: booleanFlag.default(true),
  BANK_HISTORY_DAYS: z.coerce.number().int().min(1).max(3650).default(730),
  SIMPLEFIN_DAILY_REQUEST_BUDGET: z.coerce.number().int().min(1).max(1000).default(24),
  LUNCHFLOW_BASE_URL: z.url().default("https://lunchflow.app/api/v1"),
  BANK_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(30000),
  BANK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(1000),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86400).default(900),
  SESSION_TTL_SECONDS: z.coerce.number().int().min(300).default(604800),
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
  LOGIN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).default(900),
  AUDIT_PARTITIONS_AHEAD: z.coerce.number().int().min(1).max(36).default(3),
  AUDIT_COUNT_BUDGET_MS: z.coerce.number().int().min(1).max(60000).default(40),
  EXPORT_DIR: z.string().min(1).optional(),
  EXPORT_RETENTION_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 365)
    .default(24),
  EXPORT_URL_TTL_SECONDS: z.coerce.number().int().min(10).max(86400).default(300),
  EXPORT_BATCH_ROWS: z.coerce.number().int().min(100).max(100000).default(20000),
  REPORT_MAX_ROWS: z.coerce.number().int().min(10).max(100000).default(5000),
  AUDIT_HISTOGRAM_BUDGET_MS: z.coerce.number().int().min(1).max(60000).default(500),
  SSO_DISCOVERY_TTL_SECONDS: z.coerce.number().int().min(0).default(3600),
  SSO_JWKS_COOLDOWN_MS: z.coerce.number().int().min(0).default(30000),
  SSO_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(60),
  SSO_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(120).default(10),
  STREAM_POLL_MS: z.coerce.number().int().min(50).max(60000).default(1000),
  STREAM_LEASE_MS: z.coerce.number().int().min(1000).default(120000),
  STREAM_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
  STREAM_RETRY_SCHEDULE: durationList.default([
    5e3, 30e3, 120e3, 600e3, 1800e3, 3600e3, 7200e3, 14400e3, 28800e3, 43200e3, 57600e3, 86400e3,
  ]),
  STREAM_DELIVERY_LOG_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  AUDIT_RETENTION_DATABASE_DAYS: z.coerce.number().int().min(0).max(36500).optional(),
  AUDIT_RETENTION_TIERS: z
    .string()
    .regex(
      /^(standard|extended|compliance)(,[a-z0-9._*]+=(standard|extended|compliance))*$/,
      "a tier (standard, extended or compliance), then optional category=tier rules: extended,auth.*=compliance",
    )
    .optional(),
  AUDIT_ARCHIVE_DIR: z.string().min(1).optional(),
  AUDIT_ARCHIVE_S3_BUCKET: z.string().min(1).optional(),
  AUDIT_ARCHIVE_S3_PREFIX: z.string().default(""),
  AUDIT_ARCHIVE_S3_ENDPOINT: z.url().optional(),
  AUDIT_ARCHIVE_S3_REGION: z.string().min(1).default("us-east-1"),
  AUDIT_ARCHIVE_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  AUDIT_ARCHIVE_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AUDIT_ARCHIVE_S3_FORCE_PATH_STYLE: booleanFlag.default(false),
  AUDIT_CHECKPOINT_KEY: z.string().min(1).optional(),
  AUDIT_CHECKPOINT_ORIGIN: z
    .string()
    .regex(/^[\x21-\x2a\x2c-\x7e]+$/, "printable ASCII without spaces or +")
    .default("finance-gateway/audit"),
  AUDIT_CHECKPOINT_FILE: z.string().min(1).optional(),
  ALERT_POLL_MS: z.coerce.number().int().min(50).max(60000).default(1000),
  ALERT_RETRY_SCHEDULE: durationList.default([10e3, 60e3, 300e3, 900e3, 3600e3]),
  ALERT_GEO_DIRECTORY: z.string().min(1).optional(),
  OUTBOUND_ALLOW_PRIVATE: booleanFlag.default(false),
  OUTBOUND_ALLOWLIST: outboundAllowlist.default([]),
  OUTBOUND_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(50).max(120000).default(5000),
  OUTBOUND_TIMEOUT_MS: z.coerce.number().int().min(100).max(600000).default(30000),
  OUTBOUND_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(1024 * 1024),
  // Set by npm for the scripts it runs (`npm start`, `npx …`): not a setting, see Config.launchedByNpm.
  npm_lifecycle_event: z.string().optional(),
});

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
  logLevel: z.infer<typeof settings>["LOG_LEVEL"];
  /** auto: pretty lines on a terminal, JSON lines otherwise. */
  logFormat: z.infer<typeof settings>["LOG_FORMAT"];
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
  /** Lifetime of a bearer access token; a refresh token gets a new one. */
  accessTokenTtlSeconds: number;
  /** Absolute lifetime of a signed-in session (and of its refresh tokens). */
  sessionTtlSeconds: number;
  /** Failed local logins in a row that lock an account, and for how long. */
  loginMaxFailures: number;
  loginLockoutSeconds: number;
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
  alerts: Readonly<{ pollMs: number; retryScheduleMs: number[]; geoDirectory: string | null }>;
  /** The outbound guard's policy (src/platform/outbound): which addresses user-supplied URLs may reach, timeouts, response cap. */
  outbound: OutboundPolicy;
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
}>;

export const BUILTIN_MODEL = "builtin";

function assistantConfig(s: z.infer<typeof settings>): AssistantConfig {
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
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
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
    accessTokenTtlSeconds: s.ACCESS_TOKEN_TTL_SECONDS,
    sessionTtlSeconds: s.SESSION_TTL_SECONDS,
    loginMaxFailures: s.LOGIN_MAX_FAILURES,
    loginLockoutSeconds: s.LOGIN_LOCKOUT_SECONDS,
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
    }),
    alerts: Object.freeze({
      pollMs: s.ALERT_POLL_MS,
      retryScheduleMs: s.ALERT_RETRY_SCHEDULE,
      geoDirectory: s.ALERT_GEO_DIRECTORY ? path.resolve(s.ALERT_GEO_DIRECTORY) : null,
    }),
    outbound: Object.freeze({
      allowPrivate: s.OUTBOUND_ALLOW_PRIVATE,
      allowlist: s.OUTBOUND_ALLOWLIST,
      connectTimeoutMs: s.OUTBOUND_CONNECT_TIMEOUT_MS,
      timeoutMs: s.OUTBOUND_TIMEOUT_MS,
      maxResponseBytes: s.OUTBOUND_MAX_RESPONSE_BYTES,
    }),
  });
}
