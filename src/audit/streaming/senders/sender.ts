import type { AuditEvent } from "../../log";
import { OutboundFailedError, OutboundRefusedError } from "../../../platform/common/errors";
import type { OutboundGuard, OutboundRequest } from "../../../platform/outbound/outbound.guard";
import type { DestinationKind, NewDelivery } from "../stream.repository";

/*
 * What every sender is (one per destination kind: webhook.sender.ts, http-batch.sender.ts,
 * syslog.sender.ts; create-sender.ts picks one) and the request handling they share.
 */

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

/** Characters of a receiver's answer kept in an error. */
export const ERROR_TEXT = 300;

/** A Retry-After header as milliseconds: seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header.trim());
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

export function seqRange(events: AuditEvent[]): Pick<Attempt, "firstSeq" | "lastSeq" | "events"> {
  return { firstSeq: events[0]?.seq ?? null, lastSeq: events[events.length - 1]?.seq ?? null, events: events.length };
}

/**
 * An attempt that got no answer: the guard refused the address (logged as refused), or the request or
 * write failed (a timeout, a network error). Either way the batch is retried later from its first event.
 */
export function unansweredAttempt(
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
export type Verdict = (status: number, body: string) => { delivered: number; error: string | null };

const statusVerdict: Verdict = (status) => ({ delivered: status >= 200 && status < 300 ? Infinity : 0, error: null });

/** Posts chunks in order and stops at the first that fails; 2xx delivers, 410 means gone, anything else is retried later. */
export async function postChunks(
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
export function chunksOf<T>(
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

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

export function setting(target: SenderTarget, key: string): string | undefined {
  const value = target.settings[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}
