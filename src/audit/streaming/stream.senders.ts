import os from "node:os";
import type { Socket } from "node:net";
import type { AuditEvent } from "../log";
import { OutboundFailedError, OutboundRefusedError } from "../../platform/common/errors";
import type { OutboundGuard, OutboundRequest } from "../../platform/outbound/outbound.guard";
import {
  cefMessage,
  datadogEntry,
  elasticBulkLines,
  leefMessage,
  sentinelRow,
  splunkEvent,
  syslogLine,
  webhookBody,
  webhookHeaders,
  canonicalEvent,
} from "./stream.formats";
import type { DestinationKind, NewDelivery } from "./stream.repository";

/** One request (or one syslog write) and what came of it: a row of the delivery log, before it names its destination. */
export type Attempt = Omit<NewDelivery, "destinationId" | "test">;

export type SendFailure = { error: string; retryAfterMs: number | null; gone: boolean };

/** How far a batch got: the first `delivered` events arrived; a failure stops the batch there. */
export type SendResult = { delivered: number; attempts: Attempt[]; failure: SendFailure | null };

/** What a sender knows of its destination, secrets decrypted. */
export type SenderTarget = {
  id: string;
  kind: DestinationKind;
  url: string;
  settings: Record<string, unknown>;
  secrets: Record<string, string>;
  /** Webhooks during a rotation: the old secrets still sign. */
  previousSecrets: Record<string, string> | null;
};

export interface Sender {
  /** Events per turn: what the platform takes per request times the requests worth making in one turn. */
  readonly turnSize: number;
  send(events: AuditEvent[], deadline: number): Promise<SendResult>;
  close(): void;
}

/** Platform limits (audit.md and the platforms' documentation). */
const LIMITS = {
  splunk: { events: 500, bytes: 1_000_000 },
  elastic: { events: 500, bytes: 5_000_000 },
  datadog: { events: 1000, bytes: 5_000_000, entryBytes: 1_000_000 },
  sentinel: { events: 500, bytes: 1_000_000 },
  syslog: { events: 500 },
};
const WEBHOOK_TURN = 100;
const ERROR_TEXT = 300;

export function createSender(target: SenderTarget, guard: OutboundGuard): Sender {
  switch (target.kind) {
    case "webhook":
      return new WebhookSender(target, guard);
    case "splunk":
      return new HttpBatchSender(splunk(target), guard);
    case "elastic":
      return new HttpBatchSender(elastic(target), guard);
    case "datadog":
      return new HttpBatchSender(datadog(target), guard);
    case "sentinel":
      return new HttpBatchSender(sentinel(target, guard), guard);
    case "qradar":
    case "arcsight":
      return new SyslogSender(target, guard);
  }
}

/** A Retry-After header as milliseconds: seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header.trim());
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function seqRange(events: AuditEvent[]): Pick<Attempt, "firstSeq" | "lastSeq" | "events"> {
  return { firstSeq: events[0]?.seq ?? null, lastSeq: events[events.length - 1]?.seq ?? null, events: events.length };
}

/**
 * An attempt that got no answer: the guard refused the address (logged as refused), or the request or
 * write failed (a timeout, a network error). Either way the batch is retried later from its first event.
 */
function unansweredAttempt(
  caught: unknown,
  events: AuditEvent[],
  attemptedAt: Date,
  started: number,
): { attempt: Attempt; failure: SendFailure } {
  const refused = caught instanceof OutboundRefusedError;
  const error = refused
    ? `refused: ${caught.message}`
    : caught instanceof OutboundFailedError
      ? caught.message
      : ((caught as Error).message ?? String(caught));
  return {
    attempt: {
      attemptedAt,
      ...seqRange(events),
      status: null,
      latencyMs: Math.round(performance.now() - started),
      outcome: refused ? "refused" : "failed",
      error,
    },
    failure: { error, retryAfterMs: null, gone: false },
  };
}

/** How many events of a batch an answer accepted (Infinity: all), and why not the rest. */
type Verdict = (status: number, body: string) => { delivered: number; error: string | null };

const statusVerdict: Verdict = (status) => ({ delivered: status >= 200 && status < 300 ? Infinity : 0, error: null });

/** Posts chunks in order and stops at the first that fails; 2xx delivers, 410 means gone, anything else is retried later. */
async function postChunks(
  guard: OutboundGuard,
  chunks: Array<{ events: AuditEvent[]; request: () => Promise<OutboundRequest> | OutboundRequest }>,
  deadline: number,
  accept: Verdict = statusVerdict,
): Promise<SendResult> {
  const attempts: Attempt[] = [];
  let delivered = 0;
  for (const chunk of chunks) {
    // A turn ends before its lease would: what was delivered so far is committed, the rest waits for the next turn.
    if (Date.now() > deadline) break;
    const attemptedAt = new Date();
    const started = performance.now();
    try {
      const answer = await guard.request(await chunk.request());
      const latencyMs = Math.round(performance.now() - started);
      const verdict = accept(answer.status, answer.status >= 300 ? "" : answer.text());
      const accepted = Math.min(verdict.delivered, chunk.events.length);
      if (accepted === chunk.events.length) {
        attempts.push({ attemptedAt, ...seqRange(chunk.events), status: answer.status, latencyMs, outcome: "delivered", error: null });
        delivered += accepted;
        continue;
      }
      const detail = answer.status >= 300 ? answer.text().trim().slice(0, ERROR_TEXT) : "";
      const error = verdict.error ?? `the receiver answered ${answer.status}${detail ? `: ${detail}` : ""}`;
      attempts.push({ attemptedAt, ...seqRange(chunk.events), status: answer.status, latencyMs, outcome: "failed", error });
      return {
        delivered: delivered + accepted,
        attempts,
        failure: { error, retryAfterMs: retryAfterMs(answer.headers.get("retry-after")), gone: answer.status === 410 },
      };
    } catch (caught) {
      const unanswered = unansweredAttempt(caught, chunk.events, attemptedAt, started);
      attempts.push(unanswered.attempt);
      return { delivered, attempts, failure: unanswered.failure };
    }
  }
  return { delivered, attempts, failure: null };
}

/** Splits events into chunks within a platform's count and byte limits (an event over the byte limit goes alone). */
function chunksOf<T>(
  events: AuditEvent[],
  encode: (event: AuditEvent) => T,
  size: (item: T) => number,
  limits: { events: number; bytes: number },
) {
  const chunks: Array<{ events: AuditEvent[]; items: T[] }> = [];
  let current: { events: AuditEvent[]; items: T[]; bytes: number } | null = null;
  for (const event of events) {
    const item = encode(event);
    const bytes = size(item);
    if (!current || current.events.length >= limits.events || current.bytes + bytes > limits.bytes) {
      current = { events: [], items: [], bytes: 0 };
      chunks.push(current);
    }
    current.events.push(event);
    current.items.push(item);
    current.bytes += bytes;
  }
  return chunks;
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

function setting(target: SenderTarget, key: string): string | undefined {
  const value = target.settings[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Standard Webhooks: one message per event, in order; webhook-id is the event id, so it is stable across retries. */
class WebhookSender implements Sender {
  readonly turnSize = WEBHOOK_TURN;

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const secrets = [this.target.secrets.secret, ...(this.target.previousSecrets ? [this.target.previousSecrets.secret] : [])];
    return postChunks(
      this.guard,
      events.map((event) => ({
        events: [event],
        request: () => {
          const body = webhookBody(event.eventType, event.timestamp, canonicalEvent(event));
          return { method: "POST", url: this.target.url, body, headers: webhookHeaders(secrets, event.id, body) };
        },
      })),
      deadline,
    );
  }

  close(): void {}
}

/**
 * How an HTTP platform takes batches: items joined back to back (Splunk HEC, Elastic _bulk) or as a
 * JSON array (Datadog, Sentinel), whose brackets and commas count towards the byte limit.
 */
const FRAMINGS = {
  concatenated: { frame: (items: string[]) => items.join(""), perItemBytes: 0, frameBytes: 0 },
  jsonArray: { frame: (items: string[]) => `[${items.join(",")}]`, perItemBytes: 1, frameBytes: 2 },
};

/** One HTTP platform: where batches go, how an event is encoded and framed, and how an answer is read. */
type BatchPlatform = {
  limits: { events: number; bytes: number };
  /** Requests worth making in one turn. */
  requestsPerTurn: number;
  framing: keyof typeof FRAMINGS;
  url: string;
  encode(event: AuditEvent): string;
  /** Asked before each request (a token may need refreshing). */
  headers(): Record<string, string> | Promise<Record<string, string>>;
  verdict?: Verdict;
  /** Sees each batch's result (a refused token is dropped). */
  settled?(result: SendResult): void;
};

/** Splunk, Elastic, Datadog and Sentinel: events cut into batches within the platform's limits, posted in order. */
class HttpBatchSender implements Sender {
  readonly turnSize: number;

  constructor(
    private readonly platform: BatchPlatform,
    private readonly guard: OutboundGuard,
  ) {
    this.turnSize = platform.limits.events * platform.requestsPerTurn;
  }

  async send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const { platform } = this;
    const framing = FRAMINGS[platform.framing];
    const chunks = chunksOf(events, platform.encode, (item) => Buffer.byteLength(item) + framing.perItemBytes, {
      events: platform.limits.events,
      bytes: platform.limits.bytes - framing.frameBytes,
    });
    const result = await postChunks(
      this.guard,
      chunks.map((chunk) => ({
        events: chunk.events,
        request: async () => ({ method: "POST", url: platform.url, headers: await platform.headers(), body: framing.frame(chunk.items) }),
      })),
      deadline,
      platform.verdict,
    );
    platform.settled?.(result);
    return result;
  }

  close(): void {}
}

function splunk(target: SenderTarget): BatchPlatform {
  const settings = {
    host: setting(target, "host"),
    source: setting(target, "source"),
    sourcetype: setting(target, "sourcetype"),
    index: setting(target, "index"),
  };
  return {
    limits: LIMITS.splunk,
    requestsPerTurn: 4,
    framing: "concatenated",
    url: joinUrl(target.url, "/services/collector/event"),
    encode: (event) => splunkEvent(event, settings),
    headers: () => ({ authorization: `Splunk ${target.secrets.token}`, "content-type": "application/json" }),
  };
}

function elastic(target: SenderTarget): BatchPlatform {
  const index = setting(target, "index") ?? "finance-gateway-audit";
  return {
    limits: LIMITS.elastic,
    requestsPerTurn: 4,
    framing: "concatenated",
    url: joinUrl(target.url, "/_bulk"),
    encode: (event) => elasticBulkLines(event, index),
    headers: () => ({ authorization: `ApiKey ${target.secrets.apiKey}`, "content-type": "application/x-ndjson" }),
    verdict: bulkVerdict,
  };
}

/**
 * A `_bulk` answer is 200 even when items fail: each item says. Created (201) and already there (409,
 * a redelivery) count as delivered; the first other failure ends the batch at that item.
 */
function bulkVerdict(status: number, body: string): { delivered: number; error: string | null } {
  if (status < 200 || status >= 300) return { delivered: 0, error: null };
  let parsed: { errors?: boolean; items?: Array<Record<string, { status: number; error?: { type?: string; reason?: string } }>> };
  try {
    parsed = JSON.parse(body);
  } catch {
    return { delivered: 0, error: "the _bulk answer is not JSON" };
  }
  if (!parsed.errors) return { delivered: Infinity, error: null };
  const items = parsed.items ?? [];
  for (let i = 0; i < items.length; i++) {
    const result = Object.values(items[i])[0];
    if (result && (result.status < 300 || result.status === 409)) continue;
    return {
      delivered: i,
      error: `_bulk item ${i} failed: ${result?.status} ${result?.error?.type ?? ""} ${result?.error?.reason ?? ""}`.trim(),
    };
  }
  return { delivered: Infinity, error: null };
}

function datadog(target: SenderTarget): BatchPlatform {
  const settings = { service: setting(target, "service"), tags: setting(target, "tags"), hostname: setting(target, "hostname") };
  return {
    limits: LIMITS.datadog,
    requestsPerTurn: 2,
    framing: "jsonArray",
    url: joinUrl(target.url, "/api/v2/logs"),
    encode: (event) => {
      const json = JSON.stringify(datadogEntry(event, settings));
      // One entry may not exceed 1 MB: the audit record is cut to its identity rather than refused.
      return Buffer.byteLength(json) <= LIMITS.datadog.entryBytes
        ? json
        : JSON.stringify({ ...datadogEntry({ ...event, changes: null }, settings), truncated: true });
    },
    headers: () => ({ "dd-api-key": target.secrets.apiKey, "content-type": "application/json" }),
  };
}

/** The scope of the Logs Ingestion API in the client-credentials request. */
const MONITOR_SCOPE = "https://monitor.azure.com//.default";
const DEFAULT_AUTHORITY = "https://login.microsoftonline.com";

/**
 * Microsoft Sentinel through the Logs Ingestion API: an Entra ID token (OAuth2 client credentials),
 * kept and refreshed before it expires (5 minutes early, or half its life if that is shorter), then
 * JSON arrays of rows to the data collection rule's stream, each under 1 MB.
 */
function sentinel(target: SenderTarget, guard: OutboundGuard): BatchPlatform {
  let token: { value: string; refreshAt: number } | null = null;
  const accessToken = async (): Promise<string> => {
    if (token && Date.now() < token.refreshAt) return token.value;
    const authority = setting(target, "authorityUrl") ?? DEFAULT_AUTHORITY;
    const answer = await guard.request({
      method: "POST",
      url: joinUrl(authority, `/${encodeURIComponent(setting(target, "tenantId") ?? "")}/oauth2/v2.0/token`),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: setting(target, "clientId") ?? "",
        client_secret: target.secrets.clientSecret,
        scope: MONITOR_SCOPE,
        grant_type: "client_credentials",
      }).toString(),
    });
    if (answer.status !== 200) throw new Error(`the token endpoint answered ${answer.status}: ${answer.text().slice(0, ERROR_TEXT)}`);
    const body = JSON.parse(answer.text()) as { access_token?: string; expires_in?: number | string };
    const lifetimeMs = Number(body.expires_in) * 1000;
    if (!body.access_token || !Number.isFinite(lifetimeMs))
      throw new Error("the token endpoint answered without access_token or expires_in");
    token = { value: body.access_token, refreshAt: Date.now() + lifetimeMs - Math.min(5 * 60_000, lifetimeMs / 2) };
    return body.access_token;
  };
  const dcr = encodeURIComponent(setting(target, "dcrImmutableId") ?? "");
  const stream = encodeURIComponent(setting(target, "streamName") ?? "");
  return {
    limits: LIMITS.sentinel,
    requestsPerTurn: 4,
    framing: "jsonArray",
    url: joinUrl(target.url, `/dataCollectionRules/${dcr}/streams/${stream}?api-version=2023-01-01`),
    encode: (event) => JSON.stringify(sentinelRow(event)),
    headers: async () => ({ authorization: `Bearer ${await accessToken()}`, "content-type": "application/json" }),
    // A refused token (revoked, rotated credentials) is fetched again on the next attempt.
    settled: (result) => {
      if (result.failure && /answered 401/.test(result.failure.error)) token = null;
    },
  };
}

/**
 * QRadar (LEEF 2.0) and ArcSight (CEF) over syslog TCP, TLS when the URL says `syslog+tls://`: one
 * RFC 5424 line per event, newline-framed (RFC 6587). The connection stays open between turns; a
 * write that fails closes it and the batch is retried on a new one.
 */
class SyslogSender implements Sender {
  readonly turnSize = LIMITS.syslog.events;
  private socket: Socket | null = null;
  private readonly hostname = os.hostname().replace(/\s+/g, "-") || "-";

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  private async connection(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed && this.socket.writable) return this.socket;
    const url = new URL(this.target.url);
    const ca = this.target.settings.caCertificate;
    const socket = await this.guard.connect({
      host: url.hostname,
      port: Number(url.port || 514),
      tls: url.protocol === "syslog+tls:" ? { ca: typeof ca === "string" && ca ? ca : undefined } : false,
    });
    socket.on("error", () => socket.destroy());
    // A syslog receiver never answers; anything it sends is ignored.
    socket.resume();
    this.socket = socket;
    return socket;
  }

  async send(events: AuditEvent[]): Promise<SendResult> {
    const attemptedAt = new Date();
    const started = performance.now();
    const format = this.target.kind === "qradar" ? leefMessage : cefMessage;
    const payload = events.map((event) => syslogLine(event, format(event), this.hostname)).join("");
    try {
      const socket = await this.connection();
      await new Promise<void>((resolve, reject) => {
        const onClose = () => reject(new Error("the syslog receiver closed the connection"));
        socket.once("close", onClose);
        socket.write(payload, (error) => {
          socket.off("close", onClose);
          if (error) reject(error);
          else resolve();
        });
      });
      const latencyMs = Math.round(performance.now() - started);
      return {
        delivered: events.length,
        attempts: [{ attemptedAt, ...seqRange(events), status: null, latencyMs, outcome: "delivered", error: null }],
        failure: null,
      };
    } catch (caught) {
      this.close();
      const unanswered = unansweredAttempt(caught, events, attemptedAt, started);
      return { delivered: 0, attempts: [unanswered.attempt], failure: unanswered.failure };
    }
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}
