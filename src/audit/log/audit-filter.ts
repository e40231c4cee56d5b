import { BlockList, isIP } from "node:net";
import { BadRequestError } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import { expandEventTypePattern, isSeverity, type AuditEventType, type Severity } from "./audit.catalogue";
import type { AuditQuery, Keyset } from "./audit-query.sql";
import type { AuditEvent } from "./audit-event";

/**
 * Audit filters, as clients send them and as the repository and the live stream apply them: parsing
 * (a 400 naming any unusable value), the in-process match of a live event against a parsed filter,
 * and the paging values (page size, keyset cursor). Pure: no database, no bus.
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

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
  /** Events of one request or one session (the console's "related events"). */
  requestId?: string | null;
  sessionId?: string | null;
};

/** Longest request or session id a filter takes (ids are far shorter; the rest cannot match). */
const MAX_ID_TEXT = 512;

/** A search word of this shape matches whole e-mail addresses (audit_email_terms in SQL uses the same pattern). */
const EMAIL_WORD = /^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/;
const EMAIL_IN_TEXT = /[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Bounds of a free-text search, after the words that add nothing are dropped: each word is one more scan of the text. */
export const SEARCH_LIMITS = { maxWords: 10, maxWordLength: 200 } as const;

/**
 * The distinct words of a search, lower-cased. Every word must occur in an event, so a word contained
 * in another one (`pay` beside `payroll`) finds nothing more and is dropped; what is left is bounded
 * by SEARCH_LIMITS, with a 400 saying so.
 */
function searchWords(search: string | null | undefined): string[] {
  const distinct = [
    ...new Set(
      (search ?? "")
        .toLowerCase()
        .split(/\s+/)
        .filter((word) => word.length > 0),
    ),
  ];
  const tooMany = () => new BadRequestError(`search has ${distinct.length} different words; at most ${SEARCH_LIMITS.maxWords} are allowed`);
  // Comparing words pairwise is quadratic: far too many is refused before.
  if (distinct.length > SEARCH_LIMITS.maxWords * 5) throw tooMany();
  const words = distinct.filter(
    (word) => EMAIL_WORD.test(word) || !distinct.some((other) => other !== word && other.includes(word) && !EMAIL_WORD.test(other)),
  );
  const tooLong = words.find((word) => word.length > SEARCH_LIMITS.maxWordLength);
  if (tooLong) throw new BadRequestError(`search word "${tooLong.slice(0, 20)}…" is longer than ${SEARCH_LIMITS.maxWordLength} characters`);
  if (words.length > SEARCH_LIMITS.maxWords) throw tooMany();
  return words;
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
  const words = searchWords(f.search);
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
    requestId: f.requestId?.trim().slice(0, MAX_ID_TEXT) || null,
    sessionId: f.sessionId?.trim().slice(0, MAX_ID_TEXT) || null,
  };
}

/** Whether an event passes a parsed filter: the query's rules, evaluated on one event of the live stream. */
export function matchesFilter(query: AuditQuery): (event: AuditEvent) => boolean {
  const block = query.ipCidr ? blockListOf(query.ipCidr) : null;
  return (event) => {
    const timestamp = new Date(event.timestamp);
    if (query.userIds.length && !query.userIds.includes(event.user?.id ?? "")) return false;
    if (query.providers.length && !query.providers.includes(event.provider ?? "")) return false;
    if (query.eventTypes.length && !query.eventTypes.includes(event.eventType)) return false;
    if (query.severities.length && !query.severities.includes(event.severity)) return false;
    if (query.from && timestamp < query.from) return false;
    if (query.before && timestamp >= query.before) return false;
    if (query.requestId && event.requestId !== query.requestId) return false;
    if (query.sessionId && event.sessionId !== query.sessionId) return false;
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

export function clampLimit(first: number | null | undefined): number {
  if (!Number.isInteger(first) || (first as number) < 1) return DEFAULT_PAGE_SIZE;
  return Math.min(first as number, MAX_PAGE_SIZE);
}

export function encodeCursor(event: AuditEvent): string {
  return Buffer.from(`${event.timestamp.toISOString()}|${event.id}`).toString("base64url");
}

export function decodeCursor(cursor: string): Keyset {
  const [iso, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const timestamp = new Date(iso ?? "");
  if (!isUuid(id) || Number.isNaN(timestamp.getTime())) throw new BadRequestError("cursor is invalid");
  return { timestamp, id };
}
