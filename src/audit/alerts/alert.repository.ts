import type { Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import type { AlertRuleRow, EventSummary, WindowState } from "./alert.rules";
import type { StormState } from "./alert.storms";

export type AlertChannelKind = "email" | "chat" | "webhook" | "sms";

export type AlertChannelRow = {
  id: string;
  kind: AlertChannelKind;
  name: string;
  settings: Record<string, string>;
  secretsEncrypted: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
};

export type NewFiring = {
  id: string;
  ruleId: string;
  ruleName: string;
  groupKey: string;
  windowStart: Date;
  seq: string;
  count: number;
  summary: string;
  events: EventSummary[];
  /** A storm digest: what the rule's limits held back in one cap period. */
  digest?: boolean;
};

export type FiringRow = Omit<NewFiring, "ruleId"> & { ruleId: string | null; firedAt: Date };

export type DeliveryStatus = "pending" | "sent" | "failed" | "suppressed";

export type AlertDeliveryRow = {
  id: string;
  firingId: string | null;
  channelId: string | null;
  channelName: string;
  channelKind: AlertChannelKind;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  errors: Array<{ at: string; error: string }>;
  sentAt: Date | null;
  test: boolean;
  createdAt: Date;
};

export type WindowKey = { ruleId: string; groupKey: string };

const RULE_COLUMNS = `id, name, preset, condition, event_types AS "eventTypes", min_severity AS "minSeverity", threshold,
  window_seconds AS "windowSeconds", group_by AS "groupBy", channel_ids::text[] AS "channelIds", enabled,
  cooldown_seconds AS "cooldownSeconds", firing_cap AS "firingCap", created_at AS "createdAt", updated_at AS "updatedAt"`;
const CHANNEL_COLUMNS = `id, kind, name, settings, secrets_encrypted AS "secretsEncrypted", enabled, created_at AS "createdAt", updated_at AS "updatedAt"`;
const FIRING_COLUMNS = `id, rule_id AS "ruleId", rule_name AS "ruleName", group_key AS "groupKey", window_start AS "windowStart",
  fired_at AS "firedAt", seq::text AS seq, count, summary, events, digest`;
const DELIVERY_COLUMNS = `id, firing_id AS "firingId", channel_id AS "channelId", channel_name AS "channelName", channel_kind AS "channelKind",
  status, attempts, next_attempt_at AS "nextAttemptAt", errors, sent_at AS "sentAt", test, created_at AS "createdAt"`;

const STORM_COLUMNS = `rule_id AS "ruleId", period_start AS "periodStart", fired, suppressed, suppressed_since AS "suppressedSince", reason,
  last_fired_at AS "lastFiredAt", last_seq::text AS "lastSeq"`;

/** Failed attempts a delivery row remembers (the newest). */
const KEPT_ERRORS = 20;

/** Alert rules, channels, the evaluator's state (windows, countries), firings and their deliveries. */
export class AlertRepository {
  constructor(private readonly sequelize: Sequelize) {}

  // Rules ------------------------------------------------------------------------------------------

  listRules(transaction?: Transaction): Promise<AlertRuleRow[]> {
    return selectRows<AlertRuleRow>(this.sequelize, `SELECT ${RULE_COLUMNS} FROM alert_rules ORDER BY created_at, id`, [], transaction);
  }

  enabledRules(): Promise<AlertRuleRow[]> {
    return selectRows<AlertRuleRow>(this.sequelize, `SELECT ${RULE_COLUMNS} FROM alert_rules WHERE enabled ORDER BY created_at, id`, []);
  }

  async getRule(id: string, transaction?: Transaction): Promise<AlertRuleRow | null> {
    const [row] = await selectRows<AlertRuleRow>(
      this.sequelize,
      `SELECT ${RULE_COLUMNS} FROM alert_rules WHERE id = $1${transaction ? " FOR UPDATE" : ""}`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  async saveRule(row: Omit<AlertRuleRow, "createdAt" | "updatedAt">, transaction: Transaction): Promise<AlertRuleRow> {
    const [saved] = await selectRows<AlertRuleRow>(
      this.sequelize,
      `INSERT INTO alert_rules (id, name, preset, condition, event_types, min_severity, threshold, window_seconds, group_by, channel_ids, enabled,
                                cooldown_seconds, firing_cap)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::uuid[], $11, $12, $13)
       ON CONFLICT (id) DO UPDATE SET name = $2, preset = $3, condition = $4, event_types = $5, min_severity = $6, threshold = $7,
         window_seconds = $8, group_by = $9, channel_ids = $10::uuid[], enabled = $11, cooldown_seconds = $12, firing_cap = $13, updated_at = now()
       RETURNING ${RULE_COLUMNS}`,
      [
        row.id,
        row.name,
        row.preset,
        row.condition,
        row.eventTypes,
        row.minSeverity,
        row.threshold,
        row.windowSeconds,
        row.groupBy,
        row.channelIds,
        row.enabled,
        row.cooldownSeconds,
        row.firingCap,
      ],
      transaction,
    );
    return saved;
  }

  async deleteRule(id: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `DELETE FROM alert_rules WHERE id = $1 RETURNING id`, [id], transaction);
  }

  /** A rule whose condition changed counts afresh. */
  async resetWindows(ruleId: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `DELETE FROM alert_windows WHERE rule_id = $1 RETURNING rule_id`, [ruleId], transaction);
  }

  // Channels ---------------------------------------------------------------------------------------

  listChannels(): Promise<AlertChannelRow[]> {
    return selectRows<AlertChannelRow>(this.sequelize, `SELECT ${CHANNEL_COLUMNS} FROM alert_channels ORDER BY created_at, id`, []);
  }

  channelsByIds(ids: string[], transaction?: Transaction): Promise<AlertChannelRow[]> {
    return selectRows<AlertChannelRow>(
      this.sequelize,
      `SELECT ${CHANNEL_COLUMNS} FROM alert_channels WHERE id = ANY($1::uuid[])`,
      [ids],
      transaction,
    );
  }

  async getChannel(id: string, transaction?: Transaction): Promise<AlertChannelRow | null> {
    const [row] = await selectRows<AlertChannelRow>(
      this.sequelize,
      `SELECT ${CHANNEL_COLUMNS} FROM alert_channels WHERE id = $1${transaction ? " FOR NO KEY UPDATE" : ""}`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  async saveChannel(row: Omit<AlertChannelRow, "createdAt" | "updatedAt">, transaction: Transaction): Promise<AlertChannelRow> {
    const [saved] = await selectRows<AlertChannelRow>(
      this.sequelize,
      `INSERT INTO alert_channels (id, kind, name, settings, secrets_encrypted, enabled) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET name = $3, settings = $4, secrets_encrypted = $5, enabled = $6, updated_at = now()
       RETURNING ${CHANNEL_COLUMNS}`,
      [row.id, row.kind, row.name, JSON.stringify(row.settings), row.secretsEncrypted, row.enabled],
      transaction,
    );
    return saved;
  }

  /** Removes the channel and its id from every rule. */
  async deleteChannel(id: string, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `UPDATE alert_rules SET channel_ids = array_remove(channel_ids, $1::uuid), updated_at = now() WHERE $1::uuid = ANY(channel_ids) RETURNING id`,
      [id],
      transaction,
    );
    await selectRows(this.sequelize, `DELETE FROM alert_channels WHERE id = $1 RETURNING id`, [id], transaction);
  }

  // Evaluator state --------------------------------------------------------------------------------

  async windows(keys: WindowKey[]): Promise<Map<string, WindowState>> {
    const found = new Map<string, WindowState>();
    if (keys.length === 0) return found;
    const rows = await selectRows<WindowKey & WindowState>(
      this.sequelize,
      `SELECT rule_id AS "ruleId", group_key AS "groupKey", window_start AS "windowStart", count, fired, sample
         FROM alert_windows WHERE (rule_id, group_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
      [keys.map((key) => key.ruleId), keys.map((key) => key.groupKey)],
    );
    for (const row of rows)
      found.set(windowId(row), { windowStart: row.windowStart, count: row.count, fired: row.fired, sample: row.sample });
    return found;
  }

  async saveWindows(states: Array<WindowKey & WindowState>, transaction: Transaction): Promise<void> {
    if (states.length === 0) return;
    await selectRows(
      this.sequelize,
      `INSERT INTO alert_windows (rule_id, group_key, window_start, count, fired, sample)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::int[], $5::boolean[], $6::jsonb[])
       ON CONFLICT (rule_id, group_key) DO UPDATE
         SET window_start = excluded.window_start, count = excluded.count, fired = excluded.fired, sample = excluded.sample
       RETURNING rule_id`,
      [
        states.map((state) => state.ruleId),
        states.map((state) => state.groupKey),
        states.map((state) => state.windowStart),
        states.map((state) => state.count),
        states.map((state) => state.fired),
        states.map((state) => JSON.stringify(state.sample)),
      ],
      transaction,
    );
  }

  /** Windows that ended more than `before` ago are only history: the next event opens a new one anyway. */
  async pruneWindows(before: Date): Promise<number> {
    const rows = await selectRows(this.sequelize, `DELETE FROM alert_windows WHERE window_start < $1 RETURNING 1`, [before]);
    return rows.length;
  }

  async countries(userKeys: string[]): Promise<Map<string, Set<string>>> {
    const found = new Map<string, Set<string>>();
    if (userKeys.length === 0) return found;
    const rows = await selectRows<{ userKey: string; country: string }>(
      this.sequelize,
      `SELECT user_key AS "userKey", country FROM alert_user_countries WHERE user_key = ANY($1::text[])`,
      [userKeys],
    );
    for (const row of rows) {
      if (!found.has(row.userKey)) found.set(row.userKey, new Set());
      found.get(row.userKey)!.add(row.country);
    }
    return found;
  }

  async addCountries(rows: Array<{ userKey: string; country: string; at: Date }>, transaction: Transaction): Promise<void> {
    if (rows.length === 0) return;
    await selectRows(
      this.sequelize,
      `INSERT INTO alert_user_countries (user_key, country, first_seen_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[]) ON CONFLICT DO NOTHING RETURNING user_key`,
      [rows.map((row) => row.userKey), rows.map((row) => row.country), rows.map((row) => row.at)],
      transaction,
    );
  }

  // Firings and deliveries -------------------------------------------------------------------------

  /** The firings written (a window that already fired is skipped: once per window per group). */
  async insertFiring(firing: NewFiring, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows(
      this.sequelize,
      `INSERT INTO alert_firings (id, rule_id, rule_name, group_key, window_start, seq, count, summary, events, digest)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (rule_id, group_key, window_start) DO NOTHING RETURNING id`,
      [
        firing.id,
        firing.ruleId,
        firing.ruleName,
        firing.groupKey,
        firing.windowStart,
        firing.seq,
        firing.count,
        firing.summary,
        JSON.stringify(firing.events),
        firing.digest ?? false,
      ],
      transaction,
    );
    return rows.length === 1;
  }

  /** Pending deliveries, or `suppressed` ones (a channel's send budget held them back) with the reason as their error. */
  async insertDeliveries(
    rows: Array<
      Pick<AlertDeliveryRow, "id" | "firingId" | "channelId" | "channelName" | "channelKind" | "test"> & { suppressed?: string | null }
    >,
    transaction?: Transaction,
  ): Promise<void> {
    if (rows.length === 0) return;
    await selectRows(
      this.sequelize,
      `INSERT INTO alert_deliveries (id, firing_id, channel_id, channel_name, channel_kind, status, test, errors)
       SELECT id, firing, channel, name, kind, CASE WHEN reason IS NULL THEN 'pending' ELSE 'suppressed' END, test,
              CASE WHEN reason IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('at', now(), 'error', reason)) END
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::boolean[], $7::text[])
              AS t(id, firing, channel, name, kind, test, reason)
       RETURNING id`,
      [
        rows.map((row) => row.id),
        rows.map((row) => row.firingId),
        rows.map((row) => row.channelId),
        rows.map((row) => row.channelName),
        rows.map((row) => row.channelKind),
        rows.map((row) => row.test),
        rows.map((row) => row.suppressed ?? null),
      ],
      transaction,
    );
  }

  // Storm limits -----------------------------------------------------------------------------------

  /** The rules' storm states, locked for the transaction (the digest flush and the evaluator take turns). */
  async storms(ruleIds: string[], transaction: Transaction): Promise<Map<string, StormState>> {
    const found = new Map<string, StormState>();
    if (ruleIds.length === 0) return found;
    const rows = await selectRows<StormState>(
      this.sequelize,
      `SELECT ${STORM_COLUMNS} FROM alert_storms WHERE rule_id = ANY($1::uuid[]) ORDER BY rule_id FOR UPDATE`,
      [ruleIds],
      transaction,
    );
    for (const row of rows) found.set(row.ruleId, row);
    return found;
  }

  /** Storms whose cap period ended with firings held back (their digest is due), locked; others skip them. */
  dueDigests(capWindowSeconds: number, transaction: Transaction): Promise<StormState[]> {
    return selectRows<StormState>(
      this.sequelize,
      `SELECT ${STORM_COLUMNS} FROM alert_storms
        WHERE suppressed > 0 AND period_start <= now() - make_interval(secs => $1::double precision)
        ORDER BY period_start LIMIT 100 FOR UPDATE SKIP LOCKED`,
      [capWindowSeconds],
      transaction,
    );
  }

  async saveStorms(states: StormState[], transaction: Transaction): Promise<void> {
    if (states.length === 0) return;
    await selectRows(
      this.sequelize,
      `INSERT INTO alert_storms (rule_id, period_start, fired, suppressed, suppressed_since, reason, last_fired_at, last_seq)
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::timestamptz[], $6::text[], $7::timestamptz[], $8::bigint[])
       ON CONFLICT (rule_id) DO UPDATE SET period_start = excluded.period_start, fired = excluded.fired, suppressed = excluded.suppressed,
         suppressed_since = excluded.suppressed_since, reason = excluded.reason, last_fired_at = excluded.last_fired_at, last_seq = excluded.last_seq
       RETURNING rule_id`,
      [
        states.map((state) => state.ruleId),
        states.map((state) => state.periodStart),
        states.map((state) => state.fired),
        states.map((state) => state.suppressed),
        states.map((state) => state.suppressedSince),
        states.map((state) => state.reason),
        states.map((state) => state.lastFiredAt),
        states.map((state) => state.lastSeq),
      ],
      transaction,
    );
  }

  /**
   * Per channel, the deliveries of the last `windowSeconds` that count against its send budget (not tests,
   * not digests, not suppressed) and those its budget held back.
   */
  async channelSends(
    channelIds: string[],
    windowSeconds: number,
    transaction: Transaction,
  ): Promise<Map<string, { sent: number; held: number }>> {
    const found = new Map<string, { sent: number; held: number }>();
    if (channelIds.length === 0) return found;
    const rows = await selectRows<{ channelId: string; sent: number; held: number }>(
      this.sequelize,
      `SELECT d.channel_id AS "channelId",
              count(*) FILTER (WHERE d.status <> 'suppressed' AND NOT f.digest)::int AS sent,
              count(*) FILTER (WHERE d.status = 'suppressed')::int AS held
         FROM alert_deliveries d JOIN alert_firings f ON f.id = d.firing_id
        WHERE d.channel_id = ANY($1::uuid[]) AND NOT d.test AND d.created_at > now() - make_interval(secs => $2::double precision)
        GROUP BY d.channel_id`,
      [channelIds, windowSeconds],
      transaction,
    );
    for (const row of rows) found.set(row.channelId, { sent: row.sent, held: row.held });
    return found;
  }

  /** Newest first; `before` is a firing id of the previous page. */
  firings(limit: number, before: string | null, ruleId: string | null): Promise<FiringRow[]> {
    return selectRows<FiringRow>(
      this.sequelize,
      `SELECT ${FIRING_COLUMNS} FROM alert_firings
        WHERE ($2::uuid IS NULL OR (fired_at, id) < (SELECT fired_at, id FROM alert_firings WHERE id = $2::uuid))
          AND ($3::uuid IS NULL OR rule_id = $3::uuid)
        ORDER BY fired_at DESC, id DESC LIMIT $1`,
      [limit, before, ruleId],
    );
  }

  async firing(id: string): Promise<FiringRow | null> {
    const [row] = await selectRows<FiringRow>(this.sequelize, `SELECT ${FIRING_COLUMNS} FROM alert_firings WHERE id = $1`, [id]);
    return row ?? null;
  }

  deliveriesOf(firingIds: string[]): Promise<AlertDeliveryRow[]> {
    return selectRows<AlertDeliveryRow>(
      this.sequelize,
      `SELECT ${DELIVERY_COLUMNS} FROM alert_deliveries WHERE firing_id = ANY($1::uuid[]) ORDER BY created_at, channel_name`,
      [firingIds],
    );
  }

  async delivery(id: string): Promise<AlertDeliveryRow | null> {
    const [row] = await selectRows<AlertDeliveryRow>(this.sequelize, `SELECT ${DELIVERY_COLUMNS} FROM alert_deliveries WHERE id = $1`, [
      id,
    ]);
    return row ?? null;
  }

  /** Leases due deliveries (SKIP LOCKED: dispatchers in several workers split them). */
  claimDueDeliveries(limit: number, leaseMs: number): Promise<AlertDeliveryRow[]> {
    return selectRows<AlertDeliveryRow>(
      this.sequelize,
      `UPDATE alert_deliveries SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
        WHERE id IN (SELECT id FROM alert_deliveries
                      WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING ${DELIVERY_COLUMNS}`,
      [limit, leaseMs],
    );
  }

  /** After an attempt: sent, or a failure kept in the row's error list with the next attempt (or failed for good). */
  async settleDelivery(
    id: string,
    outcome: { sent: true } | { sent: false; error: string; retryAt: Date | null },
  ): Promise<AlertDeliveryRow | null> {
    const [row] = outcome.sent
      ? await selectRows<AlertDeliveryRow>(
          this.sequelize,
          `UPDATE alert_deliveries SET status = 'sent', attempts = attempts + 1, sent_at = now(), lease_until = NULL
            WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
          [id],
        )
      : await selectRows<AlertDeliveryRow>(
          this.sequelize,
          `UPDATE alert_deliveries
              SET attempts = attempts + 1, lease_until = NULL,
                  status = CASE WHEN $3::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
                  next_attempt_at = coalesce($3::timestamptz, next_attempt_at),
                  errors = (SELECT coalesce(jsonb_agg(e), '[]') FROM (
                             SELECT e FROM jsonb_array_elements(errors || jsonb_build_array(jsonb_build_object('at', now(), 'error', $2::text))) AS e
                             OFFSET greatest(jsonb_array_length(errors) + 1 - ${KEPT_ERRORS}, 0)) kept)
            WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
          [id, outcome.error, outcome.retryAt],
        );
    return row ?? null;
  }
}

export function windowId(key: WindowKey): string {
  return `${key.ruleId}\u0000${key.groupKey}`;
}
