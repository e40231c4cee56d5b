import path from "node:path";
import proxyAddr from "proxy-addr";
import { z } from "zod";
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

const settings = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  PUBLIC_URL: z.url().optional(),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(200).default(10),
  DATA_DIR: z.string().min(1).default(path.join(projectRoot, ".data")),
  REDIS_URL: redisUrl.optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only")
    .default("fg"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(0).default(1000),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(3600),
  TRUST_PROXY: trustProxy.default(["loopback"]),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10000),
  GRAPHQL_LANDING_PAGE: booleanFlag.default(true),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86400).default(900),
  SESSION_TTL_SECONDS: z.coerce.number().int().min(300).default(604800),
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
  LOGIN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).default(900),
  AUDIT_PARTITIONS_AHEAD: z.coerce.number().int().min(1).max(36).default(3),
});

export type Config = Readonly<{
  port: number;
  host: string;
  publicUrl?: string;
  databaseUrl?: string;
  databasePoolMax: number;
  dataDir: string;
  redisUrl?: string;
  redisPrefix: string;
  logLevel: z.infer<typeof settings>["LOG_LEVEL"];
  /** Requests per API key or token per window; 0 turns rate limiting off. */
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  trustProxy: boolean | number | string[];
  shutdownTimeoutMs: number;
  graphqlLandingPage: boolean;
  /** Lifetime of a bearer access token; a refresh token gets a new one. */
  accessTokenTtlSeconds: number;
  /** Absolute lifetime of a signed-in session (and of its refresh tokens). */
  sessionTtlSeconds: number;
  /** Failed local logins in a row that lock an account, and for how long. */
  loginMaxFailures: number;
  loginLockoutSeconds: number;
  /** Monthly audit partitions kept created ahead of the current month. */
  auditPartitionsAhead: number;
}>;

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
    dataDir: path.resolve(s.DATA_DIR),
    redisUrl: s.REDIS_URL,
    redisPrefix: s.REDIS_PREFIX,
    logLevel: s.LOG_LEVEL,
    rateLimitRequests: s.RATE_LIMIT_REQUESTS,
    rateLimitWindowSeconds: s.RATE_LIMIT_WINDOW_SECONDS,
    trustProxy: s.TRUST_PROXY,
    shutdownTimeoutMs: s.SHUTDOWN_TIMEOUT_MS,
    graphqlLandingPage: s.GRAPHQL_LANDING_PAGE,
    accessTokenTtlSeconds: s.ACCESS_TOKEN_TTL_SECONDS,
    sessionTtlSeconds: s.SESSION_TTL_SECONDS,
    loginMaxFailures: s.LOGIN_MAX_FAILURES,
    loginLockoutSeconds: s.LOGIN_LOCKOUT_SECONDS,
    auditPartitionsAhead: s.AUDIT_PARTITIONS_AHEAD,
  });
}
