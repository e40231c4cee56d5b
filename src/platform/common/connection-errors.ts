import IORedis from "ioredis";
import { DOCS_PAGES, settingDoc } from "./docs-pages";

/**
 * One-line answers for the backends a self-hoster configures: each names where it tried, what went
 * wrong and the setting to change, instead of a driver's `connect ECONNREFUSED 127.0.0.1:1`.
 */

/** host:port of a URL, without its credentials. */
function addressOf(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || defaultPort}`;
  } catch {
    return "the configured address";
  }
}

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  ETIMEDOUT: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ECONNRESET: "connection reset",
};

/** The driver error under Sequelize's wrappers (`original`/`parent`), or the error itself. */
function rootCause(error: unknown): { code?: string; message: string } {
  const wrapped = error as { original?: unknown; parent?: unknown };
  const cause = (wrapped?.original ?? wrapped?.parent ?? error) as { code?: string; message?: string; errors?: unknown[] };
  // Node's happy-eyeballs connect reports an AggregateError with one error per address.
  const first = Array.isArray(cause.errors) && cause.errors.length ? (cause.errors[0] as { code?: string; message?: string }) : cause;
  return { code: cause.code ?? first.code, message: String(cause.message || first.message || error) };
}

/**
 * A database connection failure explained, or null when the error is something else (a failing
 * migration keeps its own message). `setting` is how the user chose the database.
 */
export function explainDatabaseError(error: unknown, url: string, setting: "DATABASE_URL" | "embedded"): string | null {
  const { code, message } = rootCause(error);
  const where = addressOf(url, 5432);
  const fix =
    setting === "DATABASE_URL"
      ? `check DATABASE_URL and that PostgreSQL runs there (see ${DOCS_PAGES.database})`
      : `the embedded PostgreSQL stopped answering: check DATA_DIR and EMBEDDED_POSTGRES_PORT (see ${DOCS_PAGES.database})`;
  if (code && UNREACHABLE[code]) return `cannot reach the database at ${where} (${UNREACHABLE[code]}): ${fix}`;
  if (code === "28P01" || code === "28000") {
    const user = (() => {
      try {
        return decodeURIComponent(new URL(url).username) || "(none)";
      } catch {
        return "(unknown)";
      }
    })();
    return `the database at ${where} refused user ${user} (${message}): check the user and password in ${setting === "DATABASE_URL" ? "DATABASE_URL" : "DATA_DIR/postgres-password"} (see ${DOCS_PAGES.database})`;
  }
  if (code === "3D000")
    return `the database at ${where} answers but ${message}: create it, or name an existing one in DATABASE_URL (see ${settingDoc("DATABASE_URL")})`;
  if (code === "53300")
    return `the database at ${where} has no free connections (${message}): lower DATABASE_POOL_MAX or raise max_connections (see ${settingDoc("DATABASE_POOL_MAX")})`;
  return null;
}

/**
 * Connects to Redis once, without retrying, so a wrong REDIS_URL stops the boot with one line instead
 * of ioredis retrying (and logging) forever.
 */
export async function checkRedisReachable(url: string, timeoutMs = 5000): Promise<void> {
  const client = new IORedis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
  });
  let reported: unknown = null;
  client.on("error", (error) => (reported ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    // The socket's own error (ECONNREFUSED…) says more than ioredis's "Connection is closed".
    const { code, message } = rootCause(reported ?? error);
    const why = (code && UNREACHABLE[code]) ?? message;
    throw new Error(
      `cannot reach Redis at ${addressOf(url, 6379)} (${why}): check REDIS_URL, or unset it to run the queues on PostgreSQL (see ${settingDoc("REDIS_URL")})`,
      {
        cause: error,
      },
    );
  } finally {
    client.disconnect();
  }
}

/** The HTTP server could not listen. */
export function explainListenError(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") {
    return new Error(
      `port ${port} is already in use on ${host}: stop the other process or set PORT to a free port (0 picks one; see ${settingDoc("PORT")})`,
    );
  }
  if (code === "EACCES") return new Error(`not allowed to listen on port ${port}: set PORT to 1024 or above (see ${settingDoc("PORT")})`);
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")
    return new Error(`cannot listen on ${host}: set HOST to an address of this machine (see ${settingDoc("HOST")})`);
  return error as Error;
}
