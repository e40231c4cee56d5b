import { BlockList, isIP } from "node:net";
import type { Transaction } from "sequelize";
import { BadRequestError } from "../common/errors";
import { isUuid, newId } from "../common/ids";
import type { Logger } from "../common/logger";
import { MAX_EVENT_PAYLOAD_BYTES, Topic, type AuditEventRecorded } from "../events/catalogue";
import type { EventBus } from "../events/event-bus";
import {
  effectiveSeverity,
  expandEventTypePattern,
  isAuditEventType,
  isSeverity,
  type AuditEventType,
  type Severity,
} from "./audit.catalogue";
import { currentAuditContext } from "./audit-context";
import { redact, redactChanges, type Changes } from "./audit-changes";
import type { AuditEventRow, AuditQuery, AuditRepository, Keyset, VerifyRow } from "./audit.repository";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Totals are counted up to this many matches; past it the total says "at least". */
export const TOTAL_CAP = 10_000;

/** The acting user; `id` is null for a failed login under an e-mail no account has. */
export type AuditUser = { id: string | null; email: string };
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
};

export type AuditEvent = {
  id: string;
  /** Null until the sequencer has linked the event into the chain (normally milliseconds after commit). */
  seq: string | null;
  timestamp: Date;
  eventType: AuditEventType;
  severity: Severity;
  user: AuditUser | null;
  provider: string | null;
  action: string | null;
  resource: { type: string; id: string; label: string | null } | null;
  ipAddress: string | null;
  userAgent: string | null;
  sessionId: string | null;
  requestId: string | null;
  changes: Changes | null;
  error: string | null;
  prevHash: string | null;
  hash: string | null;
};

/** Filter values as a client sends them (GraphQL input, REST query, saved search). */
export type AuditFilterInput = {
  search?: string | null;
  userIds?: string[] | null;
  providers?: string[] | null;
  /** Exact types or prefixes ending in `.*`. */
  eventTypes?: string[] | null;
  severities?: string[] | null;
  /** ISO 8601 date or date-time; a date means from its start. */
  from?: string | null;
  /** ISO 8601 date or date-time, inclusive; a date means through its end. */
  to?: string | null;
  /** An address, a CIDR, or an address with a trailing wildcard: `10.1.*`. */
  ipAddress?: string | null;
};

export type AuditPage = {
  events: AuditEvent[];
  limit: number;
  offset: number;
  total: number;
  totalCapped: boolean;
  hasMore: boolean;
  nextCursor: string | null;
};

export type ChainBreak = {
  kind: "altered" | "deleted" | "inserted" | "relinked";
  /** Null for an inserted event that no link names. */
  seq: string | null;
  eventId: string | null;
  timestamp: Date | null;
  message: string;
};

export type ChainReport = { ok: boolean; checked: number; firstBroken: ChainBreak | null };

const VERIFY_BATCH = 5000;
/** Links per sequencer transaction: short enough not to hold the chain lock long, long enough to keep up. */
const CHAIN_BATCH = 1000;
/**
 * Least time between the starts of commit-triggered sequencer runs in one process. The first commit
 * after a quiet spell is linked at once; under load, the commits of each interval share one sequencer
 * transaction, hence one disk flush, instead of adding a flush to every writer's.
 */
const CHAIN_INTERVAL_MS = 100;
/** A search word of this shape matches whole e-mail addresses (audit_email_terms in SQL uses the same pattern). */
const EMAIL_WORD = /^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/;
const EMAIL_IN_TEXT = /[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;
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
    private readonly settings: { partitionsAhead: number; countBudgetMs: number },
    private readonly logger?: Logger,
  ) {}

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
    const row = await this.repository.append(
      {
        id: newId(),
        timestamp: new Date(),
        eventType: input.type,
        severity: effectiveSeverity(input.type, input.severity),
        userId: input.user?.id ?? null,
        userEmail: input.user?.email ?? null,
        provider: clip(input.provider),
        action: clip(input.action),
        resourceType: clip(input.resource?.type),
        resourceId: clip(input.resource?.id),
        resourceLabel: clip(input.resource?.label),
        ipAddress: context.ipAddress,
        userAgent: context.userAgent,
        sessionId: input.sessionId ?? context.sessionId,
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
    const [rows, counted] = await Promise.all([
      this.repository.list(query, { limit, offset, after }),
      this.repository.countUpTo(query, TOTAL_CAP + 1, this.settings.countBudgetMs),
    ]);
    const hasMore = rows.length > limit;
    const events = rows.slice(0, limit).map(toEvent);
    const last = events[events.length - 1];
    // A count that ran out of time still knows a lower bound: everything up to the end of this page.
    const total = counted === null ? offset + rows.length : Math.min(counted, TOTAL_CAP);
    return {
      events,
      limit,
      offset,
      total,
      totalCapped: counted === null ? hasMore : counted > TOTAL_CAP,
      hasMore,
      nextCursor: hasMore && last ? encodeCursor(last) : null,
    } satisfies AuditPage;
  }

  /** Whether a live event passes a subscriber's filter (the same rules as the query, evaluated here). */
  /** The event a live-stream notice stands for: carried whole, or read by its key; null if it is gone. */
  async received(notice: AuditEventRecorded): Promise<AuditEvent | null> {
    if (notice.event) return { ...notice.event, timestamp: new Date(notice.event.timestamp) };
    const row = await this.repository.byKey(notice.id, new Date(notice.timestamp));
    return row ? toEvent(row) : null;
  }

  matcher(filter: AuditFilterInput | null | undefined): (event: AuditEvent) => boolean {
    const query = parseFilter(filter);
    const block = query.ipCidr ? blockListOf(query.ipCidr) : null;
    return (event) => {
      const timestamp = new Date(event.timestamp);
      if (query.userIds.length && !query.userIds.includes(event.user?.id ?? "")) return false;
      if (query.providers.length && !query.providers.includes(event.provider ?? "")) return false;
      if (query.eventTypes.length && !query.eventTypes.includes(event.eventType)) return false;
      if (query.severities.length && !query.severities.includes(event.severity)) return false;
      if (query.from && timestamp < query.from) return false;
      if (query.before && timestamp >= query.before) return false;
      if (block && !(event.ipAddress && block.check(event.ipAddress, isIP(event.ipAddress) === 6 ? "ipv6" : "ipv4"))) return false;
      if (query.words.length || query.emails.length) {
        const text = searchTextOf(event);
        if (!query.words.every((word) => text.includes(word))) return false;
        const emails: string[] = text.match(EMAIL_IN_TEXT) ?? [];
        if (!query.emails.every((email) => emails.includes(email))) return false;
      }
      return true;
    };
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
    // The walk stops at the head as it is now; events linked meanwhile are the next run's business.
    const head = await this.repository.chainHead();
    const headSeq = BigInt(head.seq);
    let previous: VerifyRow | null = null;
    let checked = 0;
    let cursor = 0n;
    for (;;) {
      const rows = await this.repository.verifyBatch(cursor, headSeq, VERIFY_BATCH, { from: bounds.from, before: bounds.before });
      for (const row of rows) {
        const seq = BigInt(row.seq);
        if (previous === null && seq > 1n) previous = await this.repository.bySeq(seq - 1n);
        const broken = checkLink(previous, row, seq);
        if (broken) return { ok: false, checked, firstBroken: broken };
        previous = row;
        checked += 1;
      }
      if (rows.length < VERIFY_BATCH) break;
      cursor = BigInt(rows[rows.length - 1].seq);
    }
    const broken = (kind: ChainBreak["kind"], seq: bigint | null, message: string, at?: { id: string; timestamp: Date }): ChainReport => ({
      ok: false,
      checked,
      firstBroken: { kind, seq: seq?.toString() ?? null, eventId: at?.id ?? null, timestamp: at?.timestamp ?? null, message },
    });
    if (!bounds.before) {
      const lastSeq = previous ? BigInt(previous.seq) : 0n;
      if (lastSeq < headSeq)
        return broken("deleted", lastSeq + 1n, `events ${lastSeq + 1n} to ${headSeq} are missing from the end of the chain`);
      if (previous && head.hash && !previous.hash.equals(head.hash)) {
        return broken("relinked", lastSeq, `the last event (sequence ${lastSeq}) is not the one the chain head recorded`);
      }
      const beyond = await this.repository.firstBeyondHead();
      if (beyond) return broken("inserted", BigInt(beyond.seq), `event ${beyond.id} lies past the end of the chain`, beyond);
    }
    const stray = await this.repository.firstStray({ from: bounds.from, before: bounds.before });
    if (stray) {
      const at = stray.timestamp.toISOString();
      return broken("inserted", null, `event ${stray.id} (${at}) is in the log but in no link of the chain`, stray);
    }
    return { ok: true, checked, firstBroken: null };
  }

  /** Creates the monthly partitions from `from`'s month to `monthsAhead` months after it (the setting by default). */
  ensurePartitions(monthsAhead = this.settings.partitionsAhead, from?: Date) {
    return this.repository.ensurePartitions(monthsAhead, from);
  }

  partitionNames(): Promise<string[]> {
    return this.repository.partitionNames();
  }
}

function checkLink(previous: VerifyRow | null, row: VerifyRow, seq: bigint): ChainBreak | null {
  const at = (kind: ChainBreak["kind"], message: string): ChainBreak => ({
    kind,
    seq: row.seq,
    eventId: row.id,
    timestamp: row.timestamp,
    message,
  });
  const expected = previous ? BigInt(previous.seq) + 1n : 1n;
  if (previous && seq === BigInt(previous.seq)) return at("inserted", `event ${row.id} repeats sequence number ${row.seq}`);
  if (seq > expected) {
    return {
      ...at("deleted", `events ${expected} to ${seq - 1n} are missing before event ${row.id}`),
      seq: expected.toString(),
    };
  }
  if (!row.eventExists)
    return at("deleted", `events ${row.seq} to ${row.seq} are missing: link ${row.seq} names event ${row.id}, which is gone`);
  if (!row.hashMatches) return at("altered", `event ${row.id} (sequence ${row.seq}) no longer matches its hash`);
  const expectedPrev = previous?.hash ?? null;
  const linked = expectedPrev === null ? row.prevHash === null : row.prevHash !== null && row.prevHash.equals(expectedPrev);
  if (!linked) return at("relinked", `event ${row.id} (sequence ${row.seq}) does not follow the event before it`);
  return null;
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

function searchTextOf(event: AuditEvent): string {
  return [
    event.eventType,
    event.user?.email,
    event.provider,
    event.action,
    event.resource?.type,
    event.resource?.id,
    event.resource?.label,
    event.ipAddress,
    event.userAgent,
    event.error,
    event.changes ? JSON.stringify(event.changes) : null,
  ]
    .map((part) => part ?? "")
    .join(" ")
    .toLowerCase();
}

function clip(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : value.slice(0, MAX_TEXT);
}

function clampLimit(first: number | null | undefined): number {
  if (!Number.isInteger(first) || (first as number) < 1) return DEFAULT_PAGE_SIZE;
  return Math.min(first as number, MAX_PAGE_SIZE);
}

export function encodeCursor(event: AuditEvent): string {
  return Buffer.from(`${event.timestamp.toISOString()}|${event.id}`).toString("base64url");
}

function decodeCursor(cursor: string): Keyset {
  const [iso, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const timestamp = new Date(iso ?? "");
  if (!isUuid(id) || Number.isNaN(timestamp.getTime())) throw new BadRequestError("cursor is invalid");
  return { timestamp, id };
}

function parseMoment(value: string, label: string, end: boolean): Date {
  const text = value.trim();
  if (ISO_DATE.test(text)) {
    const day = new Date(`${text}T00:00:00Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text) throw new BadRequestError(`${label} is not a valid date`);
    return end ? new Date(day.getTime() + 86_400_000) : day;
  }
  // A date-time without an offset is UTC, never the server's local time.
  const moment = ISO_DATE_TIME.test(text) ? new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`) : new Date(NaN);
  if (Number.isNaN(moment.getTime())) throw new BadRequestError(`${label} must be an ISO 8601 date or date-time`);
  // Inclusive end: events are stored with millisecond precision, so "through t" is "before t + 1 ms".
  return end ? new Date(moment.getTime() + 1) : moment;
}

/** Turns `10.1.*`, `10.1.0.0/16`, `2001:db8:*` or a plain address into a CIDR for `<<=`. */
export function ipFilterToCidr(value: string): string {
  const text = value.trim();
  const bad = () => new BadRequestError("ipAddress must be an address, a CIDR, or an address with a trailing wildcard like 10.1.*");
  if (text.includes("/")) {
    const [address, bits] = text.split("/");
    const family = isIP(address);
    const prefix = Number(bits);
    if (!family || !/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) throw bad();
    return `${address}/${prefix}`;
  }
  if (text.endsWith("*")) {
    const stem = text.replace(/[.:]?\*$/, "");
    if (stem.includes(":") || text.includes(":")) {
      const groups = stem === "" ? [] : stem.split(":");
      if (groups.length > 7 || !groups.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) throw bad();
      return `${[...groups, ...Array(8 - groups.length).fill("0")].join(":")}/${groups.length * 16}`;
    }
    const octets = stem === "" ? [] : stem.split(".");
    if (octets.length > 3 || !octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255)) throw bad();
    return `${[...octets, ...Array(4 - octets.length).fill("0")].join(".")}/${octets.length * 8}`;
  }
  const family = isIP(text);
  if (!family) throw bad();
  return `${text}/${family === 4 ? 32 : 128}`;
}

function blockListOf(cidr: string): BlockList {
  const [address, bits] = cidr.split("/");
  const list = new BlockList();
  list.addSubnet(address, Number(bits), isIP(address) === 6 ? "ipv6" : "ipv4");
  return list;
}

/** Checks and normalises a filter; anything unusable is a 400 naming the value. */
export function parseFilter(filter: AuditFilterInput | null | undefined): AuditQuery {
  const f = filter ?? {};
  const eventTypes = new Set<AuditEventType>();
  for (const pattern of f.eventTypes ?? []) {
    const expanded = expandEventTypePattern(pattern);
    if (!expanded) throw new BadRequestError(`eventType ${JSON.stringify(pattern)} is not a known event type`);
    expanded.forEach((type) => eventTypes.add(type));
  }
  const severities = (f.severities ?? []).map((severity) => severity.trim().toLowerCase());
  for (const severity of severities)
    if (!isSeverity(severity)) throw new BadRequestError(`severity ${JSON.stringify(severity)} is not known`);
  const userIds = (f.userIds ?? []).map((id) => id.trim());
  for (const id of userIds) if (!isUuid(id)) throw new BadRequestError(`userId ${JSON.stringify(id)} is not a valid id`);
  const from = f.from ? parseMoment(f.from, "from", false) : null;
  const before = f.to ? parseMoment(f.to, "to", true) : null;
  const words = (f.search ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word.length > 0);
  return {
    words: words.filter((word) => !EMAIL_WORD.test(word)),
    emails: words.filter((word) => EMAIL_WORD.test(word)),
    userIds,
    providers: (f.providers ?? []).map((provider) => provider.trim()).filter(Boolean),
    eventTypes: [...eventTypes],
    severities: severities as Severity[],
    from,
    before,
    ipCidr: f.ipAddress ? ipFilterToCidr(f.ipAddress) : null,
  };
}
