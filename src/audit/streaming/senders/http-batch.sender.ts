import type { AuditEvent } from "../../log";
import type { OutboundGuard } from "../../../platform/outbound/outbound.guard";
import { datadogEntry, elasticBulkLines, sentinelRow, splunkEvent } from "../stream.formats";
import {
  chunksOf,
  ERROR_TEXT,
  joinUrl,
  postChunks,
  setting,
  type Sender,
  type SenderTarget,
  type SendResult,
  type Verdict,
} from "./sender";

/** Platform limits (audit.md and the platforms' documentation). */
const LIMITS = {
  splunk: { events: 500, bytes: 1_000_000 },
  elastic: { events: 500, bytes: 5_000_000 },
  datadog: { events: 1000, bytes: 5_000_000, entryBytes: 1_000_000 },
  sentinel: { events: 500, bytes: 1_000_000 },
};

/**
 * How an HTTP platform takes batches: items joined back to back (Splunk HEC, Elastic _bulk) or as a
 * JSON array (Datadog, Sentinel), whose brackets and commas count towards the byte limit.
 */
const FRAMINGS = {
  concatenated: { frame: (items: string[]) => items.join(""), perItemBytes: 0, frameBytes: 0 },
  jsonArray: { frame: (items: string[]) => `[${items.join(",")}]`, perItemBytes: 1, frameBytes: 2 },
};

/** One HTTP platform: where batches go, how an event is encoded and framed, and how an answer is read. */
export type BatchPlatform = {
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
export class HttpBatchSender implements Sender {
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

export function splunk(target: SenderTarget): BatchPlatform {
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

export function elastic(target: SenderTarget): BatchPlatform {
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

export function datadog(target: SenderTarget): BatchPlatform {
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
export function sentinel(target: SenderTarget, guard: OutboundGuard): BatchPlatform {
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
