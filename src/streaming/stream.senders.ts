import os from "node:os";
import type { Socket } from "node:net";
import type { AuditEvent } from "../audit/audit.service";
import { OutboundFailedError, OutboundRefusedError } from "../outbound/outbound.errors";
import type { OutboundGuard, OutboundRequest } from "../outbound/outbound.guard";
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
import type { DestinationKind } from "./stream.repository";

/** One request (or one syslog write) and what came of it: a row of the delivery log. */
export type Attempt = {
  attemptedAt: Date;
  firstSeq: string | null;
  lastSeq: string | null;
  events: number;
  status: number | null;
  latencyMs: number;
  outcome: "delivered" | "failed" | "refused";
  error: string | null;
};

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
      return new SplunkSender(target, guard);
    case "elastic":
      return new ElasticSender(target, guard);
    case "datadog":
      return new DatadogSender(target, guard);
    case "sentinel":
      return new SentinelSender(target, guard);
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

function errorText(error: unknown): { text: string; refused: boolean } {
  if (error instanceof OutboundRefusedError) return { text: `refused: ${error.message}`, refused: true };
  if (error instanceof OutboundFailedError) return { text: error.message, refused: false };
  return { text: (error as Error).message ?? String(error), refused: false };
}

function seqRange(events: AuditEvent[]): Pick<Attempt, "firstSeq" | "lastSeq" | "events"> {
  return { firstSeq: events[0]?.seq ?? null, lastSeq: events[events.length - 1]?.seq ?? null, events: events.length };
}

/** Posts chunks in order and stops at the first that fails; 2xx delivers, 410 means gone, anything else is retried later. */
async function postChunks(
  guard: OutboundGuard,
  chunks: Array<{ events: AuditEvent[]; request: () => Promise<OutboundRequest> | OutboundRequest }>,
  deadline: number,
  accept: (status: number, body: string) => { delivered: number; error: string | null } = (status) => ({
    delivered: status >= 200 && status < 300 ? Infinity : 0,
    error: null,
  }),
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
      const { text, refused } = errorText(caught);
      attempts.push({
        attemptedAt,
        ...seqRange(chunk.events),
        status: null,
        latencyMs: Math.round(performance.now() - started),
        outcome: refused ? "refused" : "failed",
        error: text,
      });
      return { delivered, attempts, failure: { error: text, retryAfterMs: null, gone: false } };
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

class SplunkSender implements Sender {
  readonly turnSize = LIMITS.splunk.events * 4;

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const settings = {
      host: setting(this.target, "host"),
      source: setting(this.target, "source"),
      sourcetype: setting(this.target, "sourcetype"),
      index: setting(this.target, "index"),
    };
    const chunks = chunksOf(
      events,
      (event) => splunkEvent(event, settings),
      (line) => Buffer.byteLength(line),
      LIMITS.splunk,
    );
    return postChunks(
      this.guard,
      chunks.map((chunk) => ({
        events: chunk.events,
        request: () => ({
          method: "POST",
          url: joinUrl(this.target.url, "/services/collector/event"),
          headers: { authorization: `Splunk ${this.target.secrets.token}`, "content-type": "application/json" },
          body: chunk.items.join(""),
        }),
      })),
      deadline,
    );
  }

  close(): void {}
}

class ElasticSender implements Sender {
  readonly turnSize = LIMITS.elastic.events * 4;

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const index = setting(this.target, "index") ?? "finance-gateway-audit";
    const chunks = chunksOf(
      events,
      (event) => elasticBulkLines(event, index),
      (lines) => Buffer.byteLength(lines),
      LIMITS.elastic,
    );
    return postChunks(
      this.guard,
      chunks.map((chunk) => ({
        events: chunk.events,
        request: () => ({
          method: "POST",
          url: joinUrl(this.target.url, "/_bulk"),
          headers: { authorization: `ApiKey ${this.target.secrets.apiKey}`, "content-type": "application/x-ndjson" },
          body: chunk.items.join(""),
        }),
      })),
      deadline,
      bulkVerdict,
    );
  }

  close(): void {}
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

class DatadogSender implements Sender {
  readonly turnSize = LIMITS.datadog.events * 2;

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const settings = {
      service: setting(this.target, "service"),
      tags: setting(this.target, "tags"),
      hostname: setting(this.target, "hostname"),
    };
    const encode = (event: AuditEvent) => {
      const json = JSON.stringify(datadogEntry(event, settings));
      // One entry may not exceed 1 MB: the audit record is cut to its identity rather than refused.
      return Buffer.byteLength(json) <= LIMITS.datadog.entryBytes
        ? json
        : JSON.stringify({ ...datadogEntry({ ...event, changes: null }, settings), truncated: true });
    };
    // The array's brackets and commas count towards the 5 MB.
    const chunks = chunksOf(events, encode, (json) => Buffer.byteLength(json) + 1, {
      events: LIMITS.datadog.events,
      bytes: LIMITS.datadog.bytes - 2,
    });
    return postChunks(
      this.guard,
      chunks.map((chunk) => ({
        events: chunk.events,
        request: () => ({
          method: "POST",
          url: joinUrl(this.target.url, "/api/v2/logs"),
          headers: { "dd-api-key": this.target.secrets.apiKey, "content-type": "application/json" },
          body: `[${chunk.items.join(",")}]`,
        }),
      })),
      deadline,
    );
  }

  close(): void {}
}

/** The scope of the Logs Ingestion API in the client-credentials request. */
const MONITOR_SCOPE = "https://monitor.azure.com//.default";
const DEFAULT_AUTHORITY = "https://login.microsoftonline.com";

/**
 * Microsoft Sentinel through the Logs Ingestion API: an Entra ID token (OAuth2 client credentials),
 * kept and refreshed before it expires (5 minutes early, or half its life if that is shorter), then
 * JSON arrays of rows to the data collection rule's stream, each under 1 MB.
 */
class SentinelSender implements Sender {
  readonly turnSize = LIMITS.sentinel.events * 4;
  private token: { value: string; refreshAt: number } | null = null;

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.refreshAt) return this.token.value;
    const authority = setting(this.target, "authorityUrl") ?? DEFAULT_AUTHORITY;
    const answer = await this.guard.request({
      method: "POST",
      url: joinUrl(authority, `/${encodeURIComponent(setting(this.target, "tenantId") ?? "")}/oauth2/v2.0/token`),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: setting(this.target, "clientId") ?? "",
        client_secret: this.target.secrets.clientSecret,
        scope: MONITOR_SCOPE,
        grant_type: "client_credentials",
      }).toString(),
    });
    if (answer.status !== 200) throw new Error(`the token endpoint answered ${answer.status}: ${answer.text().slice(0, ERROR_TEXT)}`);
    const body = JSON.parse(answer.text()) as { access_token?: string; expires_in?: number | string };
    const lifetimeMs = Number(body.expires_in) * 1000;
    if (!body.access_token || !Number.isFinite(lifetimeMs))
      throw new Error("the token endpoint answered without access_token or expires_in");
    this.token = { value: body.access_token, refreshAt: Date.now() + lifetimeMs - Math.min(5 * 60_000, lifetimeMs / 2) };
    return body.access_token;
  }

  async send(events: AuditEvent[], deadline: number): Promise<SendResult> {
    const dcr = encodeURIComponent(setting(this.target, "dcrImmutableId") ?? "");
    const stream = encodeURIComponent(setting(this.target, "streamName") ?? "");
    const url = joinUrl(this.target.url, `/dataCollectionRules/${dcr}/streams/${stream}?api-version=2023-01-01`);
    const chunks = chunksOf(
      events,
      (event) => JSON.stringify(sentinelRow(event)),
      (json) => Buffer.byteLength(json) + 1,
      { ...LIMITS.sentinel, bytes: LIMITS.sentinel.bytes - 2 },
    );
    const result = await postChunks(
      this.guard,
      chunks.map((chunk) => ({
        events: chunk.events,
        request: async () => ({
          method: "POST",
          url,
          headers: { authorization: `Bearer ${await this.accessToken()}`, "content-type": "application/json" },
          body: `[${chunk.items.join(",")}]`,
        }),
      })),
      deadline,
    );
    // A refused token (revoked, rotated credentials) is fetched again on the next attempt.
    if (result.failure && /answered 401/.test(result.failure.error)) this.token = null;
    return result;
  }

  close(): void {}
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
      const { text, refused } = errorText(caught);
      const latencyMs = Math.round(performance.now() - started);
      return {
        delivered: 0,
        attempts: [{ attemptedAt, ...seqRange(events), status: null, latencyMs, outcome: refused ? "refused" : "failed", error: text }],
        failure: { error: text, retryAfterMs: null, gone: false },
      };
    }
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}
