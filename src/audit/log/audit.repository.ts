import type { Sequelize, Transaction } from "sequelize";
import {
  type BoundedCount,
  bindParam,
  copyOut,
  countWithin,
  likePattern,
  readPrepared,
  readRows,
  readRowsWithin,
  runPrepared,
  selectRows,
} from "../../platform/common/sql";
import type { AuditEventType, Severity } from "./audit.catalogue";
import type { Changes } from "./audit-changes";
import { exportBatchSql, type ExportKey } from "./audit-export.sql";
import {
  auditConditions,
  histogramSql,
  textConditions,
  wholeWordConditions,
  whereClause,
  whereSql,
  type AuditQuery,
  type HistogramRow,
  type Keyset,
} from "./audit-query.sql";

/** What an event records, as stored (its id, time and chain link aside): the one list of its fields. */
export type AuditEventFields = {
  eventType: AuditEventType;
  severity: Severity;
  userId: string | null;
  userEmail: string | null;
  provider: string | null;
  action: string | null;
  resourceType: string | null;
  resourceId: string | null;
  resourceLabel: string | null;
  ipAddress: string | null;
  userAgent: string | null;
  sessionId: string | null;
  requestId: string | null;
  changes: Changes | null;
  error: string | null;
};

export type AuditEventRow = AuditEventFields & {
  id: string;
  /** The chain link's fields: null until the sequencer has linked the event (normally milliseconds after commit). */
  seq: string | null;
  timestamp: Date;
  prevHash: Buffer | null;
  hash: Buffer | null;
};

export type NewAuditEvent = Omit<AuditEventRow, "seq" | "prevHash" | "hash">;

/** A chain link with what verification needs to know about its event. */
export type VerifyRow = {
  id: string;
  seq: string;
  timestamp: Date;
  prevHash: Buffer | null;
  hash: Buffer;
  eventExists: boolean;
  hashMatches: boolean;
};

/** An event that is neither linked nor waiting to be. */
export type StrayEvent = { id: string; timestamp: Date };

const EVENT_COLUMNS = `e.id, e.occurred_at AS "timestamp", e.event_type AS "eventType", e.severity, e.user_id AS "userId",
  e.user_email AS "userEmail", e.provider, e.action, e.resource_type AS "resourceType", e.resource_id AS "resourceId",
  e.resource_label AS "resourceLabel", host(e.ip_address) AS "ipAddress", e.user_agent AS "userAgent",
  e.session_id AS "sessionId", e.request_id AS "requestId", e.changes, e.error`;

const LINK_COLUMNS = `c.seq, c.prev_hash AS "prevHash", c.hash`;

/** Whether link c still matches its event e: the hash the sequencer computed, over the event as it is now. */
const LINK_MATCHES = `audit_event_hash(e.id, c.seq, e.occurred_at, e.event_type, e.severity, e.user_id, e.user_email, e.provider,
  e.action, e.resource_type, e.resource_id, e.resource_label, e.ip_address, e.user_agent, e.session_id, e.request_id, e.changes,
  e.error, c.prev_hash) = c.hash`;

const VERIFY_COLUMNS = `c.event_id AS id, c.seq, c.occurred_at AS "timestamp", c.prev_hash AS "prevHash", c.hash,
  e.id IS NOT NULL AS "eventExists", coalesce(${LINK_MATCHES}, false) AS "hashMatches"`;

/**
 * Each link with its event, looked up by key. LIMIT 1 keeps it a lookup per link rather than a join
 * over every event, and tells the planner there is one row per link: its estimate otherwise grows with
 * the number of partitions, and past PostgreSQL's JIT threshold compiling the plan costs more than
 * running it.
 */
const LINK_WITH_EVENT = `LEFT JOIN LATERAL (SELECT * FROM audit_events e
  WHERE e.occurred_at = c.occurred_at AND e.id = c.event_id LIMIT 1) AS e ON true`;

/**
 * Inserts the event and queues it for the sequencer, in one statement of the caller's transaction: both
 * commit or neither does. No lock is shared with other recording transactions.
 */
const RECORD_SQL = `
WITH inserted AS (
  INSERT INTO audit_events AS e (id, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type,
                                 resource_id, resource_label, ip_address, user_agent, session_id, request_id, changes, error)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
  RETURNING ${EVENT_COLUMNS}
),
queued AS (INSERT INTO audit_unchained (event_id, occurred_at) SELECT id, "timestamp" FROM inserted)
SELECT *, NULL::bigint AS seq, NULL::bytea AS "prevHash", NULL::bytea AS hash FROM inserted`;

/**
 * Events and their links by key, in the order of the keys (timestamps as text: a JavaScript Date would
 * drop their microseconds). LIMIT 1 lookups, as in LINK_WITH_EVENT. The number of keys is written in
 * (`LIMIT keys`): a parameter array is planned as 100 elements where a custom plan sees the real
 * number, and a generic plan that looks twice as dear is never chosen, so every run would be planned.
 */
function rowsOfKeys(keys: number): string {
  return `SELECT ${EVENT_COLUMNS}, ${LINK_COLUMNS}
    FROM (SELECT * FROM unnest($1::text[]::timestamptz[], $2::uuid[]) WITH ORDINALITY AS k (occurred_at, id, n) LIMIT ${keys}) AS page
    JOIN LATERAL (SELECT * FROM audit_events e WHERE e.occurred_at = page.occurred_at AND e.id = page.id LIMIT 1) AS e ON true
    LEFT JOIN LATERAL (SELECT * FROM audit_chain c WHERE c.occurred_at = e.occurred_at AND c.event_id = e.id LIMIT 1) AS c ON true
   ORDER BY page.n`;
}

/** Newest rows of the other filters a text search walks before leaving the choice to the planner. */
const TEXT_PROBE_ROWS = 1000;

export class AuditRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Prepared on the transaction's connection (runPrepared): every audited write runs it, and planning the two inserts cost more than running them. */
  async append(event: NewAuditEvent, transaction: Transaction): Promise<AuditEventRow> {
    const [row] = await runPrepared<AuditEventRow>(
      this.sequelize,
      RECORD_SQL,
      [
        event.id,
        event.timestamp,
        event.eventType,
        event.severity,
        event.userId,
        event.userEmail,
        event.provider,
        event.action,
        event.resourceType,
        event.resourceId,
        event.resourceLabel,
        event.ipAddress,
        event.userAgent,
        event.sessionId,
        event.requestId,
        event.changes === null ? null : JSON.stringify(event.changes),
        event.error,
      ],
      transaction,
    );
    return row;
  }

  /**
   * Links up to `maxLinks` committed events onto the chain (one transaction, waiting for a sequencer
   * running elsewhere) and returns them, linked, in chain order.
   */
  chainPending(maxLinks: number): Promise<AuditEventRow[]> {
    return selectRows<AuditEventRow>(
      this.sequelize,
      `SELECT ${EVENT_COLUMNS}, ${LINK_COLUMNS} FROM audit_chain_pending($1) AS c CROSS JOIN LATERAL (SELECT (c.event).*) AS e ORDER BY c.seq`,
      [maxLinks],
    );
  }

  /** One event with its chain link (null until linked), by its partition key and id. */
  async byKey(id: string, occurredAt: Date): Promise<AuditEventRow | null> {
    const [row] = await selectRows<AuditEventRow>(
      this.sequelize,
      `SELECT ${EVENT_COLUMNS}, ${LINK_COLUMNS} FROM audit_events e
         LEFT JOIN LATERAL (SELECT * FROM audit_chain c WHERE c.occurred_at = e.occurred_at AND c.event_id = e.id LIMIT 1) AS c ON true
        WHERE e.occurred_at = $2 AND e.id = $1`,
      [id, occurredAt],
    );
    return row ?? null;
  }

  /** Newest first, keyset after `after`, skipping `offset`; fetches one extra row to tell whether more exist. */
  async list(query: AuditQuery, options: PageOptions): Promise<AuditEventRow[]> {
    if (readsInIndexOrder(query)) {
      // Every entry of the index walked matches (no filter or one value, time and keyset bounds): its
      // rows are read in its order, one table read per event, where taking the keys first would add
      // a lookup of each key in another index (for one user's scattered events, 50 more cold reads).
      // Its plan does not depend on the values, so it is prepared: planning a statement over a dozen
      // partitions of ten indexes each cost 3-4 ms, three times its run. The limit is written in (a
      // checked integer): an unknown LIMIT is planned as a tenth of the table, which makes the generic
      // plan look dearer than a custom one, and PostgreSQL would then plan every run anyway.
      const { where, bind } = whereClause(query, options.after);
      const skip = options.offset > 0 ? ` OFFSET ${bindParam(bind, options.offset)}` : "";
      return readPrepared<AuditEventRow>(
        this.sequelize,
        withLinks(
          `SELECT * FROM audit_events ${whereSql(where)} ORDER BY occurred_at DESC, id DESC LIMIT ${pageLimit(options.limit)}${skip}`,
        ),
        bind,
      );
    }
    if (query.words.length || query.emails.length) {
      const probed = await this.newestTextMatches(query, options);
      if (probed.length === options.limit + 1) return probed;
    }
    // E-mail addresses and IP ranges are found through indexes that are not in time order (GIN, the
    // IP index): a page of them reads and sorts every match in the range it is given (one user's
    // address: about 500 table reads at 10 million events). So a first page (or a cursor's next)
    // takes the newest 30 days first, then further back. Words and narrow address ranges (a /24, an
    // address) stay one statement: they match few events, and each window would look them up again.
    const wideRange = query.ipCidr !== null && addressesIn(query.ipCidr) > WIDE_ADDRESS_RANGE;
    if (options.offset === 0 && !query.words.length && (query.emails.length || wideRange)) return this.pageByWindows(query, options);
    // The page's keys first, from an index alone where the filter allows; then only its rows are read.
    const { where, bind } = auditConditions(query, [], options.after);
    return selectRows<AuditEventRow>(
      this.sequelize,
      pageOf(`SELECT occurred_at, id FROM audit_events ${whereSql(where)}
               ORDER BY occurred_at DESC, id DESC LIMIT ${pageLimit(options.limit)} OFFSET ${bindParam(bind, options.offset)}`),
      bind,
    );
  }

  /**
   * A text search's page from the newest TEXT_PROBE_ROWS events of its other filters. Words and
   * addresses are checked against each row's text, which lives in the table, not in the index that
   * orders the rows. Where matches are common, walking the newest rows finds a page after a few
   * hundred; a plan from the text index would first collect every match in the range, reading far
   * more of the table. Fewer rows than the page wants: too few matches in the walk, the caller goes on.
   */
  private newestTextMatches(query: AuditQuery, options: PageOptions): Promise<AuditEventRow[]> {
    const { where, bind } = whereClause(query, options.after);
    // An address is found by a regular expression over each row's whole text (audit_email_terms): a
    // plain substring test first rules out nearly every row of the walk (1000 rows: 6.6 ms → 0.5 ms).
    const holdsAddress = query.emails.map((email) => `search_text LIKE ${bindParam(bind, likePattern(email))}`);
    const text = textConditions(query, bind);
    return selectRows<AuditEventRow>(
      this.sequelize,
      pageOf(`SELECT occurred_at, id FROM (SELECT occurred_at, id, search_text FROM audit_events ${whereSql(where)}
                 ORDER BY occurred_at DESC, id DESC LIMIT ${TEXT_PROBE_ROWS}) AS newest
               WHERE ${[...holdsAddress, ...text].join(" AND ")}
               ORDER BY occurred_at DESC, id DESC LIMIT ${pageLimit(options.limit)} OFFSET ${bindParam(bind, options.offset)}`),
      bind,
    );
  }

  /**
   * A first page read window by window back in time (PAGE_WINDOWS_DAYS before the newest time it can
   * hold, then the rest), each window's matches after the previous window's. Newest first, so the keys
   * found are exactly the page's. Each window's statement is planned for its own partitions only
   * (pruned by its bounds) and selects keys alone; the rows of all windows are then read at once by a
   * prepared statement (rowsOfKeys), whose lookups are not planned again over every partition.
   */
  private async pageByWindows(query: AuditQuery, options: PageOptions): Promise<AuditEventRow[]> {
    const newest = (options.after?.timestamp ?? query.before ?? new Date()).getTime();
    const keys: Array<{ at: string; id: string }> = [];
    let upper: Date | null = null;
    for (const days of [...PAGE_WINDOWS_DAYS, null]) {
      const start = days === null ? null : new Date(newest - days * DAY_MS);
      // A window reaching past the filter's own start is the rest of the range.
      const lower = start && (!query.from || start > query.from) ? start : null;
      const { where, bind } = auditConditions(query, [], options.after);
      if (lower) where.push(`occurred_at >= ${bindParam(bind, lower)}`);
      if (upper) where.push(`occurred_at < ${bindParam(bind, upper)}`);
      keys.push(
        ...(await readRows<{ at: string; id: string }>(
          this.sequelize,
          `SELECT occurred_at::text AS at, id FROM audit_events ${whereSql(where)}
            ORDER BY occurred_at DESC, id DESC LIMIT ${pageLimit(options.limit - keys.length)}`,
          bind,
        )),
      );
      if (keys.length > options.limit || !lower) break;
      upper = lower;
    }
    if (!keys.length) return [];
    return readPrepared<AuditEventRow>(this.sequelize, rowsOfKeys(keys.length), [keys.map((key) => key.at), keys.map((key) => key.id)]);
  }

  /**
   * Counts matches up to `cap`: an exact count over years of events would cost more than the page.
   * Within `budgetMs` (countWithin): past it, the matches counted so far, a lower bound (a rare word
   * over a busy week, read from disk).
   *
   * A text search first counts the events holding each word as a whole token (wholeWordConditions:
   * exact through the token index, no recheck of the text); when they reach the cap, so do the matches.
   * Only otherwise are the matches counted through the trigram index, which rechecks every candidate in
   * the table, in what is left of the budget.
   */
  async countUpTo(query: AuditQuery, cap: number, budgetMs: number): Promise<BoundedCount> {
    const deadline = performance.now() + budgetMs;
    const count = (conditions: (query: AuditQuery, bind: unknown[]) => string[]) => {
      const { where, bind } = whereClause(query, null);
      where.push(...conditions(query, bind));
      return countWithin(this.sequelize, `SELECT 1 FROM audit_events ${whereSql(where)}`, bind, { upTo: cap, deadline });
    };
    if (!query.words.length) return count(textConditions);
    const whole = await count(wholeWordConditions);
    if (!whole.complete || whole.counted >= cap) return whole;
    const matches = await count(textConditions);
    return matches.complete ? matches : { counted: Math.max(whole.counted, matches.counted), complete: false };
  }

  /**
   * Up to `limit` events of the filter after `after`, oldest first, with the same conditions as `list`
   * (an export holds exactly the events a search shows), as binary COPY (see copy-binary.ts):
   * per event its time (ISO 8601 with microseconds, for the next batch's keyset), its id and its line,
   * the JSON text of the canonical event or its CSV record (CSV_COLUMNS, without the line end). Every
   * byte of the file is rendered by PostgreSQL, so the export's Node side only frames, hashes and compresses.
   */
  exportBatch(query: AuditQuery, after: ExportKey | null, limit: number, line: "json" | "csv"): AsyncGenerator<Buffer> {
    const { sql, bind } = exportBatchSql(query, after, limit, line);
    return copyOut(this.sequelize, sql, bind, "binary");
  }

  /**
   * Events per time bucket and severity: every match counted, unless that takes longer than
   * `budgetMs` (null then). Buckets start at multiples of `bucketSeconds` from the Unix epoch.
   */
  histogram(query: AuditQuery, range: { from: Date; before: Date }, bucketSeconds: number, budgetMs: number) {
    const { sql, bind } = histogramSql(query, range, bucketSeconds, null);
    return readRowsWithin<HistogramRow>(this.sequelize, sql, bind, budgetMs);
  }

  /**
   * The same counts estimated from a random `percent` of the table's pages (TABLESAMPLE SYSTEM), scaled
   * up: reads a bounded share of a huge range instead of every row.
   */
  histogramSampled(query: AuditQuery, range: { from: Date; before: Date }, bucketSeconds: number, percent: number) {
    const { sql, bind } = histogramSql(query, range, bucketSeconds, percent);
    return readRows<HistogramRow>(this.sequelize, sql, bind);
  }

  /** Events committed but not linked into the chain yet, and the age of the oldest (the sequencer's lag). */
  async unchainedBacklog(): Promise<{ events: number; oldestSeconds: number }> {
    const [row] = await readRows<{ events: string; oldestSeconds: number | null }>(
      this.sequelize,
      `SELECT count(*) AS events, extract(epoch FROM now() - min(occurred_at))::float8 AS "oldestSeconds" FROM audit_unchained`,
      [],
    );
    return { events: Number(row?.events ?? 0), oldestSeconds: Math.max(0, row?.oldestSeconds ?? 0) };
  }

  /** The oldest event's time (an index lookup per partition). */
  async oldestTimestamp(): Promise<Date | null> {
    const [row] = await readRows<{ oldest: Date | null }>(this.sequelize, "SELECT min(occurred_at) AS oldest FROM audit_events", []);
    return row?.oldest ?? null;
  }

  /** Up to `limit` linked events after chain position `afterSeq`, in chain order. */
  afterSeq(afterSeq: bigint, limit: number): Promise<AuditEventRow[]> {
    return readRows<AuditEventRow>(
      this.sequelize,
      `SELECT ${EVENT_COLUMNS}, ${LINK_COLUMNS}
         FROM (SELECT * FROM audit_chain WHERE seq > $1 ORDER BY seq LIMIT $2) AS c
         JOIN LATERAL (SELECT * FROM audit_events e WHERE e.occurred_at = c.occurred_at AND e.id = c.event_id LIMIT 1) AS e ON true
        ORDER BY c.seq`,
      [afterSeq.toString(), limit],
    );
  }

  /** One batch of links in `seq` order, each with whether its event exists and still matches the link's hash. */
  verifyBatch(
    afterSeq: bigint,
    throughSeq: bigint,
    limit: number,
    range: { from: Date | null; before: Date | null },
  ): Promise<VerifyRow[]> {
    const bind: unknown[] = [afterSeq.toString(), limit, throughSeq.toString()];
    const where = ["c.seq > $1", "c.seq <= $3"];
    if (range.from) where.push(`c.occurred_at >= ${bindParam(bind, range.from)}`);
    if (range.before) where.push(`c.occurred_at < ${bindParam(bind, range.before)}`);
    return selectRows<VerifyRow>(
      this.sequelize,
      `SELECT ${VERIFY_COLUMNS} FROM (SELECT * FROM audit_chain c WHERE ${where.join(" AND ")} ORDER BY c.seq LIMIT $2) AS c
         ${LINK_WITH_EVENT} ORDER BY c.seq`,
      bind,
    );
  }

  async bySeq(seq: bigint): Promise<VerifyRow | null> {
    const [row] = await selectRows<VerifyRow>(
      this.sequelize,
      `SELECT ${VERIFY_COLUMNS} FROM audit_chain c ${LINK_WITH_EVENT} WHERE c.seq = $1`,
      [seq.toString()],
    );
    return row ?? null;
  }

  /** The first link past the chain head: nothing the sequencer wrote can be there. One statement, one snapshot. */
  async firstBeyondHead(): Promise<VerifyRow | null> {
    const [row] = await selectRows<VerifyRow>(
      this.sequelize,
      `SELECT ${VERIFY_COLUMNS} FROM (SELECT * FROM audit_chain WHERE seq > (SELECT seq FROM audit_chain_head) ORDER BY seq LIMIT 1) AS c
         ${LINK_WITH_EVENT}`,
      [],
    );
    return row ?? null;
  }

  /**
   * The oldest event that is neither linked nor waiting in audit_unchained. The application writes an
   * event and its queue entry together, and the sequencer links and unqueues it together, so in any
   * one snapshot every event it wrote is one or the other.
   */
  async firstStray(range: { from: Date | null; before: Date | null }): Promise<StrayEvent | null> {
    const bind: unknown[] = [];
    const where = [
      "NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.occurred_at = e.occurred_at AND c.event_id = e.id)",
      "NOT EXISTS (SELECT 1 FROM audit_unchained u WHERE u.event_id = e.id)",
    ];
    if (range.from) where.push(`e.occurred_at >= ${bindParam(bind, range.from)}`);
    if (range.before) where.push(`e.occurred_at < ${bindParam(bind, range.before)}`);
    const [row] = await selectRows<StrayEvent>(
      this.sequelize,
      `SELECT e.id, e.occurred_at AS "timestamp" FROM audit_events e WHERE ${where.join(" AND ")} ORDER BY e.occurred_at, e.id LIMIT 1`,
      bind,
    );
    return row ?? null;
  }

  /**
   * Linked events after chain position `after`, in chain order, and the chain head of the same
   * snapshot: the links up to the head are read (at most `scanLinks` of them), those whose type is in
   * `eventTypes` (all when empty) are returned, at most `limit`. The chain is dense and a sequencer
   * commits its links with the head, so every link up to the head exists when this runs. An event whose month retention already dropped is skipped.
   */
  async chainAfter(
    after: string,
    scanLinks: number,
    limit: number,
    eventTypes: string[],
  ): Promise<{ head: string; rows: AuditEventRow[] }> {
    // One statement, so the head and the links read are of one snapshot, in one round trip: consumers
    // call this at every turn while events are being recorded.
    const rows = await selectRows<AuditEventRow & { chainHead: string }>(
      this.sequelize,
      `SELECT h.seq::text AS "chainHead", x.*
         FROM audit_chain_head AS h
         LEFT JOIN LATERAL (
           SELECT ${EVENT_COLUMNS}, ${LINK_COLUMNS}
             FROM (SELECT * FROM audit_chain WHERE seq > $1 AND seq <= least(h.seq, $1::bigint + $2::bigint) ORDER BY seq) AS c
             JOIN LATERAL (SELECT * FROM audit_events e WHERE e.occurred_at = c.occurred_at AND e.id = c.event_id LIMIT 1) AS e ON true
            WHERE cardinality($4::text[]) = 0 OR e.event_type = ANY($4::text[])
            ORDER BY c.seq LIMIT $3) AS x ON true
        ORDER BY x.seq`,
      [after, scanLinks, limit, eventTypes],
    );
    return {
      head: rows[0].chainHead,
      rows: rows.filter((row) => row.id !== null).map(({ chainHead: _head, ...row }) => row as AuditEventRow),
    };
  }

  /** The chain position just before the first event recorded at or after `moment` (the head when there is none). */
  async chainPositionAt(moment: Date): Promise<string> {
    const [row] = await selectRows<{ seq: string }>(
      this.sequelize,
      `SELECT coalesce((SELECT min(seq) - 1 FROM audit_chain WHERE occurred_at >= $1), (SELECT seq FROM audit_chain_head))::text AS seq`,
      [moment],
    );
    return row.seq;
  }

  async chainHead(): Promise<{ seq: string; hash: Buffer | null }> {
    const [row] = await selectRows<{ seq: string; hash: Buffer | null }>(this.sequelize, "SELECT seq, hash FROM audit_chain_head", []);
    return row;
  }

  /** Creates the monthly partitions from this month to `monthsAhead` months ahead; names the months it had to skip. */
  async ensurePartitions(monthsAhead: number, from: Date = new Date()): Promise<{ created: string[]; skipped: string[] }> {
    const rows = await selectRows<{ month: string; ok: boolean; existed: boolean }>(
      this.sequelize,
      `SELECT to_char(month, 'YYYY-MM') AS month,
              to_regclass(format('audit_events_y%sm%s', to_char(month, 'YYYY'), to_char(month, 'MM'))) IS NOT NULL AS existed,
              audit_create_month_partition(month) AS ok
         FROM (SELECT (date_trunc('month', $1::timestamptz AT TIME ZONE 'UTC') + make_interval(months => m))::date AS month
                 FROM generate_series(0, $2::int) AS m) AS months
        ORDER BY month`,
      [from, monthsAhead],
    );
    return {
      created: rows.filter((row) => row.ok && !row.existed).map((row) => row.month),
      skipped: rows.filter((row) => !row.ok).map((row) => row.month),
    };
  }

  async partitionNames(): Promise<string[]> {
    const rows = await selectRows<{ name: string }>(
      this.sequelize,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'audit_events'::regclass ORDER BY c.relname`,
      [],
    );
    return rows.map((row) => row.name);
  }
}

type PageOptions = { limit: number; offset: number; after: Keyset | null };

const DAY_MS = 86_400_000;

/** The windows a page not read in time order looks back through first (list): days before its newest time. */
const PAGE_WINDOWS_DAYS = [30, 90, 270];

/** An address range wider than this (a /20 of IPv4) is paged by windows: a month of it holds a page. */
const WIDE_ADDRESS_RANGE = 4096;

/** How many addresses a CIDR range (as the filter normalises it: `10.1.0.0/16`, `2001:db8::/32`, an address) spans. */
function addressesIn(cidr: string): number {
  const bits = cidr.includes(":") ? 128 : 32;
  const slash = cidr.indexOf("/");
  const prefix = slash < 0 ? bits : Number(cidr.slice(slash + 1));
  return 2 ** (bits - prefix);
}

/** A page's row limit as SQL text: the page's size and the one row that tells whether more exist. */
function pageLimit(limit: number): string {
  if (!Number.isInteger(limit) || limit < 0 || limit > 1000) throw new Error(`page limit out of range: ${limit}`);
  return String(limit + 1);
}

/**
 * Whether every entry of the B-tree a page walks matches its filter: no condition beyond time, keyset
 * and at most one value of one indexed column (a user, a provider, an event type or a severity).
 */
function readsInIndexOrder(query: AuditQuery): boolean {
  const oneValueFilters = [query.userIds, query.providers, query.eventTypes, query.severities].filter((values) => values.length > 0);
  return (
    oneValueFilters.length <= 1 &&
    oneValueFilters.every((values) => values.length === 1) &&
    !query.ipCidr &&
    !query.requestId &&
    !query.sessionId &&
    !query.words.length &&
    !query.emails.length
  );
}

/** A page's events with their chain links, from a statement that selects its keys (LIMIT 1 lookups, as in LINK_WITH_EVENT). */
function pageOf(keys: string): string {
  return withLinks(`SELECT e.* FROM (${keys}) AS page
    JOIN LATERAL (SELECT * FROM audit_events e WHERE e.occurred_at = page.occurred_at AND e.id = page.id LIMIT 1) AS e ON true`);
}

/** A page's events (a statement selecting whole audit_events rows) with their chain links, newest first. */
function withLinks(events: string): string {
  return `SELECT ${EVENT_COLUMNS}, ${LINK_COLUMNS}
    FROM (${events}) AS e
    LEFT JOIN LATERAL (SELECT * FROM audit_chain c WHERE c.occurred_at = e.occurred_at AND c.event_id = e.id LIMIT 1) AS c ON true
   ORDER BY e.occurred_at DESC, e.id DESC`;
}
