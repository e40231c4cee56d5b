import { DOCS_PAGES } from "../../platform/common/docs-pages";
import type { Logger } from "../../platform/common/logger";
import { OutboundFailedError, OutboundRefusedError } from "../../platform/common/errors";
import type { OutboundGuard, OutboundResponse } from "../../platform/outbound/outbound.guard";

/** Why a provider request failed, in the terms the sync acts on. */
export type UpstreamFailure =
  | "auth" // 401/403: the connection needs new credentials
  | "payment" // 402: the provider subscription lapsed
  | "rate_limited" // 429 (or a 429 wrapped in a 500)
  | "unavailable" // network errors, timeouts, 5xx after the retries
  | "bad_response" // an answer we cannot use (not JSON, unexpected 4xx)
  | "budget"; // our own per-connection daily request budget is spent

export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

export type UpstreamResponse = { status: number; text: string; headers: Headers };

export type UpstreamHttpOptions = {
  /** Every provider request goes through the outbound guard (src/platform/outbound). */
  outbound: OutboundGuard;
  /** Refuse plain http (unless ALLOW_INSECURE_UPSTREAMS, for the test fakes). */
  httpsOnly: boolean;
  timeoutMs: number;
  retryBaseMs: number;
  /** Total attempts of a request, first one included. */
  attempts: number;
  /** Lunch Flow's 429 is per minute and worth a wait; SimpleFIN's is a daily quota and is not. */
  retryRateLimited: boolean;
  /** Statuses handed back to the caller instead of being treated as failures (e.g. 501 for holdings). */
  passStatuses?: number[];
  /** Called before every attempt (request counting, budget); may throw UpstreamError("budget"). */
  beforeAttempt?: () => Promise<void>;
  /** Set only when the connection's debug logging is on: raw responses go here, redacted. */
  debugLogger?: Logger;
  /** Removes credentials from text before it is logged. */
  redact: (text: string) => string;
};

const MAX_RATE_LIMIT_WAIT_MS = 60_000;

/**
 * One provider request with the retry policy of the reference: only transient failures (network
 * errors, timeouts, 5xx, a 429 worth waiting for) are retried, with exponential backoff and jitter,
 * at most `attempts` times in all. 401/402/403 are never retried.
 */
export async function upstreamRequest(
  options: UpstreamHttpOptions,
  request: { method: "GET" | "POST"; url: string; headers?: Record<string, string>; body?: string },
): Promise<UpstreamResponse> {
  let lastError: UpstreamError | null = null;
  let rateLimitWait = 0;
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    if (attempt > 1) await sleep(lastError?.failure === "rate_limited" ? rateLimitWait : backoff(options.retryBaseMs, attempt));
    await options.beforeAttempt?.();
    let response: OutboundResponse;
    try {
      response = await options.outbound.request({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body,
        redirect: "error",
        httpsOnly: options.httpsOnly,
        timeoutMs: options.timeoutMs,
      });
    } catch (error) {
      // The guard refused the address (or a redirect): no retry changes that.
      if (error instanceof OutboundRefusedError)
        throw new UpstreamError("bad_response", `the provider's URL was refused: it ${error.message}`);
      if (!(error instanceof OutboundFailedError)) throw error;
      const timedOut = error.reason === "timeout" || error.reason === "connect_timeout";
      lastError = new UpstreamError("unavailable", timedOut ? "the provider did not answer in time" : "could not reach the provider");
      continue;
    }
    const text = response.text();
    options.debugLogger?.info(
      { provider: { method: request.method, url: options.redact(request.url), status: response.status, body: options.redact(text) } },
      "bank provider response",
    );
    const status = response.status;
    if ((status >= 200 && status < 300) || options.passStatuses?.includes(status)) return { status, text, headers: response.headers };
    if (status === 401 || status === 403) throw new UpstreamError("auth", "the provider refused the credentials", status);
    if (status === 402) throw new UpstreamError("payment", "the provider subscription needs payment", status);
    if (status === 429 || (status >= 500 && isWrappedRateLimit(text))) {
      lastError = new UpstreamError("rate_limited", "the provider is rate limiting requests", status);
      const wait = retryAfterMs(response.headers.get("retry-after"));
      if (!options.retryRateLimited || wait > MAX_RATE_LIMIT_WAIT_MS) throw lastError;
      rateLimitWait = Math.max(wait, backoff(options.retryBaseMs, attempt + 1));
      continue;
    }
    if (status >= 500) {
      lastError = new UpstreamError("unavailable", `the provider answered ${status}: ${sanitizeUpstreamText(text)}`, status);
      continue;
    }
    throw new UpstreamError("bad_response", `the provider answered ${status}: ${sanitizeUpstreamText(text)}`, status);
  }
  throw lastError!;
}

/** Exponential backoff with "equal jitter": half the delay fixed, half random, so retries spread out. */
function backoff(baseMs: number, attempt: number): number {
  const delay = baseMs * 2 ** (attempt - 2);
  return delay / 2 + Math.random() * (delay / 2);
}

function retryAfterMs(header: string | null): number {
  if (!header) return 0;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? 0 : Math.max(0, date - Date.now());
}

/** Lunch Flow has been seen answering 500 with a body that says the real status was 429. */
function isWrappedRateLimit(text: string): boolean {
  return /\b429\b|too many requests|rate limit/i.test(text.slice(0, 2000));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Provider error text may be an HTML page: keep readable text only, short, before it is stored or shown. */
export function sanitizeUpstreamText(text: string): string {
  const plain = text
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/&[a-z#0-9]+;/gi, " ")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > 300 ? `${plain.slice(0, 297)}...` : plain;
}

/**
 * Why a provider URL may not be used, or null: https only unless ALLOW_INSECURE_UPSTREAMS (the test
 * fakes), and the outbound guard's address rules (the host resolved, every address checked).
 */
export async function upstreamUrlProblem(
  options: Pick<UpstreamHttpOptions, "outbound" | "httpsOnly">,
  url: string,
): Promise<string | null> {
  try {
    await options.outbound.check(url, { httpsOnly: options.httpsOnly });
    return null;
  } catch (error) {
    if (!(error instanceof OutboundRefusedError)) throw error;
    // Plain http is refused by configuration, not by nature: say which settings a local try-out needs.
    return error.reason === "scheme" && url.startsWith("http:") ? `${error.message}: ${LOCAL_SANDBOX_HINT}` : error.message;
  }
}

/** How to reach the `npm run dev:banks` sandboxes (plain http on loopback), which production refuses. */
export const LOCAL_SANDBOX_HINT =
  "to try the local sandboxes, start the service with ALLOW_INSECURE_UPSTREAMS=true OUTBOUND_ALLOW_PRIVATE=true " +
  `(never for real banks; see ${DOCS_PAGES.bankSandbox})`;

/** Replaces every occurrence of the given secrets (and URL userinfo) with [redacted]. */
export function redactor(secrets: string[]): (text: string) => string {
  const present = secrets.filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
  return (text) => {
    let result = text.replace(/(\/\/)[^/@\s"]+:[^/@\s"]+@/g, "$1[redacted]@");
    for (const secret of present) result = result.split(secret).join("[redacted]");
    return result;
  };
}
