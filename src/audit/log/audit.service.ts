import type { Transaction } from "sequelize";
import { BadRequestError } from "../../platform/common/errors";
import { newOrderedId } from "../../platform/common/ids";
import type { Logger } from "../../platform/common/logger";
import { MAX_EVENT_PAYLOAD_BYTES, Topic, type AuditEventJson, type AuditEventRecorded } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import { effectiveSeverity, isAuditEventType, isSeverity, type AuditEventType, type Severity } from "./audit.catalogue";
import { verifyChain, type ChainReport } from "./audit-chain-verify";
import { clampLimit, decodeCursor, encodeCursor, matchesFilter, parseFilter, type AuditFilterInput } from "./audit-filter";
import { currentAuditContext, type AuditContext } from "../../platform/common/audit-context";
import { redact, redactChanges, type Changes } from "./audit-changes";
import type { AuditEventRow, AuditRepository } from "./audit.repository";
import type { AuditEvent } from "./audit-event";
import { requesterOf, type Actor, type Requester } from "../../platform/security/actor";

/** Totals are counted up to this many matches; past it the total says "at least". */
export const TOTAL_CAP = 10_000;
/**
 * A free-text search's total is counted up to this many. Its matches can only be counted by visiting
 * each one in the table (no text index answers from the index alone), about one page read per match:
 * proving 10 001 matches of a rare word took 8 000 page reads, a tenth of that fits a page's time.
 */
export const TEXT_TOTAL_CAP = 1_000;

/** The acting user; `id` is null for a failed login under an e-mail no account has. */
export type AuditUser = NonNullable<AuditEventJson["user"]>;
export type AuditResource = { type: string; id: string; label?: string | null };

/** What an emitter says about an event; where it came from (IP, user agent, request) comes from the context. */
export type AuditEventInput = {
  type: AuditEventType;
  /** Raises the catalogue's default severity; a lower value is ignored. */
  severity?: Severity;
  user?: AuditUser | null;
  provider?: string | null;
  action?: string | null;
  resource?: AuditResource | null;
  changes?: Changes | null;
  error?: string | null;
  /** For an event about a session other than the request's own, e.g. the one a login just opened. */
  sessionId?: string | null;
  /**
   * Who asked, explicitly: the event's user (unless `user` is given) and its session field, the
   * caller's session or `api_key:<key id>` (unless `sessionId` is given), whatever the current origin
   * says. The request's Actor, or the Requester kept from it by work that finishes later (a worker).
   */
  actor?: Actor | Requester | null;
};

export type { AuditEvent };

export type AuditPage = {
  events: AuditEvent[];
  limit: number;
  offset: number;
  total: number;
  totalCapped: boolean;
  hasMore: boolean;
  nextCursor: string | null;
};

export type AuditHistogramBucket = { start: Date; info: number; warning: number; error: number; critical: number; total: number };
export type AuditHistogram = { from: Date; to: Date; bucketSeconds: number; sampled: boolean; buckets: AuditHistogramBucket[] };

export const HISTOGRAM_MAX_BUCKETS = 120;
/** AUDIT_HISTOGRAM_BUDGET_MS's default, for services built without the setting. */
const DEFAULT_HISTOGRAM_BUDGET_MS = 500;
/** Round bucket widths, in seconds: a minute up to a week. */
const BUCKET_WIDTHS = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86_400, 7 * 86_400];
/** Share of the table's pages a sampled histogram reads. */
const HISTOGRAM_SAMPLE_PERCENT = 2;
/** Chain links one gap-fill call walks at most. */
const GAP_SCAN_LINKS = 1000;
/** Links per sequencer transaction: short enough not to hold the chain lock long, long enough to keep up. */
const CHAIN_BATCH = 1000;
/**
 * Least time between the starts of commit-triggered sequencer runs in one process. The first commit
 * after a quiet spell is linked at once; under load, the commits of each interval share one sequencer
 * transaction, hence one disk flush, instead of adding a flush to every writer's.
 */
const CHAIN_INTERVAL_MS = 100;
const MAX_TEXT = 512;

export class AuditService {
  /** The sequencer run due after recent commits, the run in progress, and the one asked for while it runs. */
  private chainingSoon: Promise<number> | null = null;
  private chaining: Promise<number> | null = null;
  private lastChainStart = 0;
  private chainingAgain: Promise<number> | null = null;

  constructor(
    private readonly repository: AuditRepository,
    private readonly events: EventBus,
    /** `countBudgetMs`: how long a page may spend counting its total before it reports a lower bound instead. */
    private readonly settings: { partitionsAhead: number; countBudgetMs: number; histogramBudgetMs?: number },
    private readonly logger?: Logger,
  ) {}

  /** Where the current action comes from (the one reader of the request origin): what `record` stores with each event. */
  origin(): AuditContext {
    return currentAuditContext();
  }

  /**
   * Records an event inside the caller's transaction, so it commits or rolls back with the change it
   * describes. It takes no lock shared with other writers: after the commit the sequencer links it into
   * the hash chain and only then publishes it to live subscribers, so the returned event has no
   * seq/hash yet. Should this process die first, the scheduled sequencer run links it.
   */
  async record(transaction: Transaction, input: AuditEventInput): Promise<AuditEvent> {
    if (!transaction) throw new Error("audit events are recorded inside the transaction of the change they describe");
    if (!isAuditEventType(input.type)) throw new Error(`unknown audit event type ${String(input.type)}`);
    if (input.severity !== undefined && !isSeverity(input.severity)) throw new Error(`unknown severity ${String(input.severity)}`);
    const context = currentAuditContext();
    const asked = input.actor ? requesterOf(input.actor) : null;
    const user = input.user !== undefined ? input.user : asked ? { id: asked.userId, email: asked.email } : null;
    const row = await this.repository.append(
      {
        // Time-ordered: events of the same millisecond list in the order they were recorded.
        id: newOrderedId(),
        timestamp: new Date(),
        eventType: input.type,
        severity: effectiveSeverity(input.type, input.severity),
        userId: user?.id ?? null,
        userEmail: user?.email ?? null,
        provider: clip(input.provider),
        action: clip(input.action),
        resourceType: clip(input.resource?.type),
        resourceId: clip(input.resource?.id),
        resourceLabel: clip(input.resource?.label),
        ipAddress: context.ipAddress,
        userAgent: context.userAgent,
        sessionId: input.sessionId ?? (asked ? asked.session : context.sessionId),
        requestId: context.requestId,
        changes: input.changes ? redactChanges(input.changes) : null,
        error: input.error ? (redact(clip(input.error)) as string) : null,
      },
      transaction,
    );
    transaction.afterCommit(() => this.chainSoon());
    return toEvent(row);
  }

  private chainSoon(): void {
    if (this.chainingSoon) return;
    const wait = Math.max(0, this.lastChainStart + CHAIN_INTERVAL_MS - Date.now());
    this.chainingSoon = new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
      this.chainingSoon = null;
      return this.chainCommitted();
    });
    this.chainingSoon.catch((error) => this.logger?.warn({ err: error }, "audit events not linked yet; the scheduled run will"));
  }

  /**
   * Links every event committed so far into the chain and publishes each one linked. Calls while a run
   * is in progress share one follow-up run, which starts after it: the current run may have looked
   * before the caller's commit. Resolves with the number of events the run linked.
   */
  chainCommitted(): Promise<number> {
    if (!this.chaining) {
      this.chaining = this.chainAll().finally(() => (this.chaining = null));
      return this.chaining;
    }
    this.chainingAgain ??= this.chaining
      .catch(() => 0)
      .then(() => {
        this.chainingAgain = null;
        return this.chainCommitted();
      });
    return this.chainingAgain;
  }

  /** Waits for this process's sequencer runs to finish (before closing the database and the event bus). */
  async settle(): Promise<void> {
    while (this.chainingSoon || this.chaining || this.chainingAgain) {
      await Promise.allSettled([this.chainingSoon, this.chaining, this.chainingAgain]);
    }
  }

  private async chainAll(): Promise<number> {
    this.lastChainStart = Date.now();
    let linked = 0;
    for (;;) {
      const rows = await this.repository.chainPending(CHAIN_BATCH);
      for (const row of rows) this.events.publish(Topic.AuditEventRecorded, recordedNotice(toEvent(row)));
      linked += rows.length;
      if (rows.length < CHAIN_BATCH) return linked;
    }
  }

  async list(filter: AuditFilterInput | null | undefined, page: { first?: number | null; after?: string | null; offset?: number | null }) {
    const query = parseFilter(filter);
    const limit = clampLimit(page.first);
    const after = page.after ? decodeCursor(page.after) : null;
    const offset = after ? 0 : Math.max(0, Math.trunc(page.offset ?? 0));
    const cap = query.words.length || query.emails.length ? TEXT_TOTAL_CAP : TOTAL_CAP;
    const [rows, count] = await Promise.all([
      this.repository.list(query, { limit, offset, after }),
      this.repository.countUpTo(query, cap + 1, this.settings.countBudgetMs),
    ]);
    const hasMore = rows.length > limit;
    const events = rows.slice(0, limit).map(toEvent);
    const last = events[events.length - 1];
    // A count that ran out of time is a lower bound, and so is everything up to the end of this page.
    const total = Math.min(count.complete ? count.counted : Math.max(count.counted, offset + rows.length), cap);
    return {
      events,
      limit,
      offset,
      total,
      totalCapped: count.complete ? count.counted > cap : hasMore || count.counted > cap,
      hasMore,
      nextCursor: hasMore && last ? encodeCursor(last) : null,
    } satisfies AuditPage;
  }

  /**
   * Events per time bucket and severity for the filter: over its date range, or from the oldest event
   * when it has no start, through its end or now. At most `maxBuckets` buckets of a round width.
   * Counted exactly within the histogram budget; past it, estimated from a sample of the table's pages
   * (`sampled`), so a chart over years of events still answers in a bounded time.
   */
  async histogram(filter: AuditFilterInput | null | undefined, maxBuckets = HISTOGRAM_MAX_BUCKETS): Promise<AuditHistogram> {
    const query = parseFilter(filter);
    const buckets = Math.min(Math.max(Math.trunc(maxBuckets) || HISTOGRAM_MAX_BUCKETS, 1), HISTOGRAM_MAX_BUCKETS);
    const before = query.before ?? new Date();
    const oldest = (await this.repository.oldestTimestamp())?.getTime() ?? before.getTime();
    // An open range starts at the oldest event, and spans at least an hour so a young log still reads as a timeline.
    const from = query.from ?? new Date(Math.min(oldest, before.getTime() - 3_600_000));
    const span = Math.max(before.getTime() - from.getTime(), 1000);
    const bucketSeconds = BUCKET_WIDTHS.find((width) => span / (width * 1000) <= buckets) ?? BUCKET_WIDTHS[BUCKET_WIDTHS.length - 1];
    const range = { from, before };
    const exact = await this.repository.histogram(
      query,
      range,
      bucketSeconds,
      this.settings.histogramBudgetMs ?? DEFAULT_HISTOGRAM_BUDGET_MS,
    );
    const rows = exact ?? (await this.repository.histogramSampled(query, range, bucketSeconds, HISTOGRAM_SAMPLE_PERCENT));
    const width = bucketSeconds * 1000;
    const first = Math.floor(from.getTime() / width) * width;
    const byStart = new Map<number, AuditHistogramBucket>();
    for (let start = first; start < before.getTime(); start += width) {
      byStart.set(start, { start: new Date(start), info: 0, warning: 0, error: 0, critical: 0, total: 0 });
    }
    for (const row of rows) {
      const bucket = byStart.get(new Date(row.bucket).getTime());
      if (!bucket) continue;
      bucket[row.severity] += row.count;
      bucket.total += row.count;
    }
    return { from, to: before, bucketSeconds, sampled: exact === null, buckets: [...byStart.values()] };
  }

  /**
   * What a live view missed: the linked events after chain position `afterSeq` that match the filter,
   * in chain order, walking at most `scan` links per call. `throughSeq` is where the next call resumes.
   */
  async eventsAfterSeq(afterSeq: string, filter: AuditFilterInput | null | undefined, scan = GAP_SCAN_LINKS) {
    if (!/^\d{1,18}$/.test(afterSeq)) throw new BadRequestError("afterSeq must be a chain sequence number");
    const match = this.matcher(filter);
    const limit = Math.min(Math.max(Math.trunc(scan) || GAP_SCAN_LINKS, 1), GAP_SCAN_LINKS);
    const rows = await this.repository.afterSeq(BigInt(afterSeq), limit);
    const events = rows.map(toEvent);
    return {
      events: events.filter(match),
      throughSeq: events.length ? events[events.length - 1].seq! : afterSeq,
      hasMore: rows.length === limit,
    };
  }

  /** Whether a live event passes a subscriber's filter (the same rules as the query, evaluated here). */
  /** The event a live-stream notice stands for: carried whole, or read by its key; null if it is gone. */
  async received(notice: AuditEventRecorded): Promise<AuditEvent | null> {
    const json = notice.event;
    // A type this process's catalogue does not know (another version publishing) is read as stored.
    if (json && isAuditEventType(json.eventType) && isSeverity(json.severity))
      return { ...json, eventType: json.eventType, severity: json.severity, timestamp: new Date(json.timestamp) };
    const row = await this.repository.byKey(notice.id, new Date(notice.timestamp));
    return row ? toEvent(row) : null;
  }

  /** Whether a live event passes a subscriber's filter (the same rules as the query, evaluated here). */
  matcher(filter: AuditFilterInput | null | undefined): (event: AuditEvent) => boolean {
    return matchesFilter(parseFilter(filter));
  }

  /**
   * Walks the chain in order and reports the first link that does not hold: a link whose event no
   * longer matches its hash (altered), a missing sequence number or a link whose event is gone
   * (deleted), a repeated sequence number, links past the recorded head or an event no link names
   * (inserted), or a link whose predecessor's hash changed (relinked). It first links every event
   * committed so far, so an event without a link can only have been written behind the application.
   */
  async verify(range: { from?: string | null; to?: string | null } = {}): Promise<ChainReport> {
    const bounds = parseFilter({ from: range.from, to: range.to });
    await this.chainCommitted();
    return verifyChain(this.repository, { from: bounds.from, before: bounds.before });
  }

  /** The sequencer's lag, for /metrics: events committed but not chain-linked yet, and the oldest one's age. */
  unchainedBacklog(): Promise<{ events: number; oldestSeconds: number }> {
    return this.repository.unchainedBacklog();
  }

  /** The sequence number of the newest linked event: consumers' lag is `head − position`. */
  async chainHeadSeq(): Promise<string> {
    return (await this.repository.chainHead()).seq;
  }

  /**
   * The committed stream as consumers read it: events linked after `after`, in chain order, filtered
   * by type (the expanded catalogue types; empty for all). `through` is how far the read looked: the
   * consumer's position may move there when every returned event is handled.
   */
  async readChain(
    after: string,
    options: { scanLinks: number; limit: number; eventTypes: AuditEventType[] },
  ): Promise<{ events: AuditEvent[]; through: string; head: string }> {
    const { head, rows } = await this.repository.chainAfter(after, options.scanLinks, options.limit, options.eventTypes);
    const through = minSeq(head, (BigInt(after) + BigInt(options.scanLinks)).toString());
    if (BigInt(through) <= BigInt(after)) return { events: [], through: after, head };
    // A full page may stop before `through`: the position can then only move to its last event.
    const reached = rows.length === options.limit ? rows[rows.length - 1].seq! : through;
    return { events: rows.map(toEvent), through: reached, head };
  }

  /** The chain position just before the first event recorded after `moment` (for replay from a time). */
  chainPositionAt(moment: Date): Promise<string> {
    return this.repository.chainPositionAt(moment);
  }

  /** Creates the monthly partitions from `from`'s month to `monthsAhead` months after it (the setting by default). */
  ensurePartitions(monthsAhead = this.settings.partitionsAhead, from?: Date) {
    return this.repository.ensurePartitions(monthsAhead, from);
  }

  partitionNames(): Promise<string[]> {
    return this.repository.partitionNames();
  }
}

function minSeq(a: string, b: string): string {
  return BigInt(a) < BigInt(b) ? a : b;
}

function toEvent(row: AuditEventRow): AuditEvent {
  return {
    id: row.id,
    seq: row.seq === null ? null : String(row.seq),
    timestamp: new Date(row.timestamp),
    eventType: row.eventType,
    severity: row.severity,
    user: row.userId || row.userEmail ? { id: row.userId, email: row.userEmail ?? "" } : null,
    provider: row.provider,
    action: row.action,
    resource: row.resourceType ? { type: row.resourceType, id: row.resourceId ?? "", label: row.resourceLabel } : null,
    ipAddress: row.ipAddress,
    userAgent: row.userAgent,
    sessionId: row.sessionId,
    requestId: row.requestId,
    changes: row.changes,
    error: row.error,
    prevHash: row.prevHash ? row.prevHash.toString("hex") : null,
    hash: row.hash ? row.hash.toString("hex") : null,
  };
}

/**
 * What the live stream publishes for an event: the event itself when it fits the bus's payload limit,
 * otherwise its key alone (a large `changes` would make PostgreSQL refuse the NOTIFY, and the stream
 * would silently skip the event).
 */
export function recordedNotice(event: AuditEvent): AuditEventRecorded {
  const timestamp = event.timestamp.toISOString();
  const whole = { ...event, timestamp };
  const fits = Buffer.byteLength(JSON.stringify(whole)) <= MAX_EVENT_PAYLOAD_BYTES;
  return { id: event.id, timestamp, event: fits ? whole : null };
}

function clip(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : value.slice(0, MAX_TEXT);
}
