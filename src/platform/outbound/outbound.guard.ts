import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import net, { isIP, type LookupFunction } from "node:net";
import tls from "node:tls";
import {
  addressIsAllowlisted,
  classifyAddress,
  hostIsAllowlisted,
  parseAllowlist,
  stripBrackets,
  type OutboundAllowlist,
} from "./outbound.addresses";
import { OutboundFailedError, OutboundRefusedError } from "../common/errors";

/**
 * The one way the service reaches a URL or host that a user or an upstream supplied (bank providers,
 * OIDC issuers and the endpoints their discovery names, webhooks, SIEM destinations, alert channels).
 *
 * - http and https only (or https only, per request);
 * - the host name is resolved here and every address it resolves to is checked: loopback, private,
 *   link-local, CGNAT, unique-local, unspecified, multicast and reserved ranges are refused, including
 *   their IPv4-mapped, SIIT, NAT64 and 6to4 IPv6 forms;
 * - the connection goes to the address that was checked (a pinned `lookup`), so a DNS answer that
 *   changes between the check and the connect (rebinding) cannot redirect it; TLS SNI and the Host
 *   header still carry the name;
 * - redirects are refused, or followed with every hop checked the same way;
 * - a connect timeout, an overall timeout, and response bodies read up to a cap.
 *
 * The operator's exceptions (tests, private deployments) are explicit: OUTBOUND_ALLOW_PRIVATE, or
 * OUTBOUND_ALLOWLIST naming hosts and CIDR ranges.
 */
export type OutboundPolicy = Readonly<{
  /** Allow loopback, private, link-local, CGNAT and unique-local addresses (never unspecified or multicast). */
  allowPrivate: boolean;
  /** Hosts (exact or `*.suffix`) and addresses/CIDR ranges allowed whatever they resolve to. */
  allowlist: string[];
  connectTimeoutMs: number;
  /** The whole exchange: connect, send, answer headers and body. */
  timeoutMs: number;
  maxResponseBytes: number;
}>;

/** How a host name becomes addresses; tests inject one to play a hostile DNS. */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export type OutboundRequest = {
  method?: string;
  url: string | URL;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** "error" (default) refuses any 3xx; "manual" returns it untouched; "follow" follows up to 5 hops, each checked. */
  redirect?: "error" | "manual" | "follow";
  httpsOnly?: boolean;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  maxResponseBytes?: number;
  /** Extra trust anchors (a private CA, a test certificate). Verification is never turned off. */
  ca?: string | Buffer;
  signal?: AbortSignal;
};

export type OutboundResponse = {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The URL that answered (after followed redirects). */
  url: string;
  /** Milliseconds from the start of the request to the end of the body. */
  latencyMs: number;
  text(): string;
};

/** A checked destination: the address the connection must go to. */
export type CheckedTarget = { url: URL; hostname: string; address: string; family: 4 | 6; port: number };

const MAX_REDIRECTS = 5;
const NEVER_ALLOWED = new Set(["unspecified", "multicast", "not an IP address"]);

export class OutboundGuard {
  private readonly allowlist: OutboundAllowlist;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(
    readonly policy: OutboundPolicy,
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowlist = parseAllowlist(policy.allowlist);
    // Keep-alive: deliveries to one receiver reuse connections. A pooled socket was connected to a
    // checked address, and pools are per guard, so reuse never skips a check.
    this.agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: 32 }),
      https: new https.Agent({ keepAlive: true, maxSockets: 32 }),
    };
  }

  /** Why this URL may not be reached, or null when it may (resolves the host now). For validating configuration. */
  async urlProblem(url: string | URL, options: { httpsOnly?: boolean } = {}): Promise<string | null> {
    try {
      await this.check(url, options);
      return null;
    } catch (error) {
      if (error instanceof OutboundRefusedError) return error.message;
      throw error;
    }
  }

  /** Parses, resolves and checks a URL; throws OutboundRefusedError. */
  async check(raw: string | URL, options: { httpsOnly?: boolean } = {}): Promise<CheckedTarget> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundRefusedError("url", "is not a valid URL");
    }
    const schemes = options.httpsOnly ? ["https:"] : ["http:", "https:"];
    if (!schemes.includes(url.protocol))
      throw new OutboundRefusedError("scheme", options.httpsOnly ? "must be an https URL" : "must be an http or https URL");
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    const target = await this.checkHost(url.hostname, port);
    return { ...target, url };
  }

  /** Resolves and checks a host (for raw TCP destinations such as syslog); throws OutboundRefusedError. */
  async checkHost(host: string, port: number): Promise<Omit<CheckedTarget, "url">> {
    const hostname = stripBrackets(host).toLowerCase();
    if (!hostname) throw new OutboundRefusedError("url", "has no host");
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new OutboundRefusedError("url", "has an invalid port");
    const literal = isIP(hostname);
    let answers: Array<{ address: string; family: 4 | 6 }>;
    if (literal) {
      answers = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        answers = await this.resolve(hostname);
      } catch {
        throw new OutboundRefusedError("resolve", `host ${hostname} could not be resolved`);
      }
      if (answers.length === 0) throw new OutboundRefusedError("resolve", `host ${hostname} could not be resolved`);
    }
    const hostTrusted = !literal && hostIsAllowlisted(this.allowlist, hostname);
    for (const { address } of answers) {
      const problem = hostTrusted ? null : this.addressProblem(address);
      if (problem) {
        const what = literal ? `${hostname} is` : `${hostname} resolves to ${address},`;
        throw new OutboundRefusedError("address", `must not point at a ${problem} address (${what} not allowed)`);
      }
    }
    return { hostname, address: answers[0].address, family: answers[0].family, port };
  }

  private addressProblem(address: string): string | null {
    const verdict = classifyAddress(address);
    if (verdict.allowed) return null;
    if (addressIsAllowlisted(this.allowlist, address)) return null;
    if (this.policy.allowPrivate && !NEVER_ALLOWED.has(verdict.reason)) return null;
    return verdict.reason;
  }

  /** One HTTP exchange through the guard. Throws OutboundRefusedError or OutboundFailedError; any status is an answer. */
  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const started = performance.now();
    const deadline = Date.now() + (request.timeoutMs ?? this.policy.timeoutMs);
    let url = request.url;
    let method = (request.method ?? "GET").toUpperCase();
    let body = request.body;
    let headers = request.headers ?? {};
    for (let hop = 0; ; hop++) {
      const target = await this.check(url, { httpsOnly: request.httpsOnly });
      const answer = await this.exchange(target, { ...request, method, headers, body }, deadline);
      const location = answer.headers.get("location");
      const isRedirect = answer.status >= 300 && answer.status < 400 && answer.status !== 304 && location !== null;
      if (!isRedirect || request.redirect === "manual") return { ...answer, latencyMs: Math.round(performance.now() - started) };
      if (request.redirect !== "follow")
        throw new OutboundRefusedError("redirect", `answered ${answer.status} with a redirect, which is not followed`);
      if (hop >= MAX_REDIRECTS) throw new OutboundRefusedError("redirect", `redirected more than ${MAX_REDIRECTS} times`);
      const next = new URL(location, target.url);
      if (next.origin !== target.url.origin) headers = withoutCredentials(headers);
      if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
        headers = withoutBodyHeaders(headers);
      }
      url = next;
    }
  }

  private exchange(
    target: CheckedTarget,
    request: OutboundRequest & { method: string; headers: Record<string, string> },
    deadline: number,
  ): Promise<Omit<OutboundResponse, "latencyMs">> {
    const maxBytes = request.maxResponseBytes ?? this.policy.maxResponseBytes;
    const connectTimeoutMs = request.connectTimeoutMs ?? this.policy.connectTimeoutMs;
    const secure = target.url.protocol === "https:";
    const pinned = pinnedLookup(target.address, target.family);
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: Error | null, value?: Omit<OutboundResponse, "latencyMs">) => {
        if (settled) return;
        settled = true;
        clearTimeout(overall);
        request.signal?.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve(value!);
      };
      const options: https.RequestOptions = {
        method: request.method,
        host: target.hostname,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        headers: request.headers,
        agent: secure ? this.agents.https : this.agents.http,
        lookup: pinned,
        ...(secure
          ? {
              servername: isIP(target.hostname) ? undefined : target.hostname,
              ca: request.ca ? [...tls.rootCertificates, request.ca.toString()] : undefined,
            }
          : {}),
      };
      if (target.url.username || target.url.password)
        options.auth = `${decodeURIComponent(target.url.username)}:${decodeURIComponent(target.url.password)}`;
      const outgoing = (secure ? https : http).request(options);
      const fail = (error: Error) => {
        outgoing.destroy();
        finish(error);
      };
      const remaining = deadline - Date.now();
      const overall = setTimeout(
        () => fail(new OutboundFailedError("timeout", `no complete answer from ${target.hostname} in time`)),
        Math.max(0, remaining),
      );
      const onAbort = () => fail(new OutboundFailedError("aborted", "the request was aborted"));
      if (request.signal?.aborted) return onAbort();
      request.signal?.addEventListener("abort", onAbort);
      outgoing.on("socket", (socket) => {
        if (!socket.connecting) return; // a kept-alive connection, already established
        // Established means usable: TCP connected, and for https the TLS handshake done too.
        const connectTimer = setTimeout(
          () => fail(new OutboundFailedError("connect_timeout", `could not connect to ${target.hostname} in time`)),
          connectTimeoutMs,
        );
        socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
        socket.once("close", () => clearTimeout(connectTimer));
      });
      outgoing.on("error", (error) =>
        finish(new OutboundFailedError("network", `could not reach ${target.hostname}: ${networkReason(error)}`)),
      );
      outgoing.on("response", (incoming) => {
        const declared = Number(incoming.headers["content-length"]);
        if (Number.isFinite(declared) && declared > maxBytes) return fail(tooLarge(target.hostname, maxBytes));
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) return fail(tooLarge(target.hostname, maxBytes));
          chunks.push(chunk);
        });
        incoming.on("error", (error) =>
          finish(new OutboundFailedError("network", `answer from ${target.hostname} broke off: ${networkReason(error)}`)),
        );
        incoming.on("end", () => {
          const body = Buffer.concat(chunks);
          finish(null, {
            status: incoming.statusCode ?? 0,
            headers: toHeaders(incoming.headers),
            body,
            url: target.url.toString(),
            text: () => body.toString("utf8"),
          });
        });
      });
      outgoing.end(request.body);
    });
  }

  /**
   * A `fetch` with the guard's rules, for libraries that take one (openid-client's customFetch, code
   * written against fetch). `redirect: "follow"` follows checked hops; the default refuses redirects.
   */
  readonly fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = input instanceof Request ? input.url : input;
    const method = init.method ?? (input instanceof Request ? input.method : "GET");
    const headers = Object.fromEntries(new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)).entries());
    if (init.body instanceof URLSearchParams) headers["content-type"] ??= "application/x-www-form-urlencoded;charset=UTF-8";
    const body = await bodyBuffer(init.body ?? (input instanceof Request && input.body ? await input.arrayBuffer() : undefined));
    const redirect = init.redirect === "follow" ? "follow" : init.redirect === "manual" ? "manual" : "error";
    const answer = await this.request({ url, method, headers, body, redirect, signal: init.signal ?? undefined });
    const nullBody = [101, 204, 205, 304].includes(answer.status);
    return new Response(nullBody ? null : new Uint8Array(answer.body), { status: answer.status, headers: answer.headers });
  };

  /** A TCP (optionally TLS) connection to a checked address, for syslog destinations. Resolves once connected. */
  async connect(options: { host: string; port: number; tls?: { ca?: string | Buffer } | false; timeoutMs?: number }): Promise<net.Socket> {
    const target = await this.checkHost(options.host, options.port);
    const timeoutMs = options.timeoutMs ?? this.policy.connectTimeoutMs;
    const pinned = pinnedLookup(target.address, target.family);
    return new Promise((resolve, reject) => {
      const socket = options.tls
        ? tls.connect({
            host: target.hostname,
            port: target.port,
            lookup: pinned,
            servername: isIP(target.hostname) ? undefined : target.hostname,
            ca: options.tls.ca ? [...tls.rootCertificates, options.tls.ca.toString()] : undefined,
          })
        : net.connect({ host: target.hostname, port: target.port, lookup: pinned });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new OutboundFailedError("connect_timeout", `could not connect to ${target.hostname} in time`));
      }, timeoutMs);
      socket.once(options.tls ? "secureConnect" : "connect", () => {
        clearTimeout(timer);
        resolve(socket);
      });
      socket.once("error", (error) => {
        clearTimeout(timer);
        reject(new OutboundFailedError("network", `could not reach ${target.hostname}: ${networkReason(error)}`));
      });
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

export function outboundGuardFromConfig(config: { outbound: OutboundPolicy }, resolve?: Resolver): OutboundGuard {
  return new OutboundGuard(config.outbound, resolve);
}

/** A `lookup` that answers with the checked address whatever the name, so the connect cannot be rebound. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

function tooLarge(hostname: string, maxBytes: number): OutboundFailedError {
  return new OutboundFailedError("too_large", `the answer from ${hostname} is larger than ${maxBytes} bytes`);
}

function networkReason(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code ?? error.message;
}

const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())));
}

function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !/^content-/i.test(name)));
}

async function bodyBuffer(body: RequestInit["body"] | ArrayBuffer | undefined): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body).arrayBuffer());
}
