import type { Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";

/** A consumer of the committed audit stream: where it is, and the state of the batch after that. */
export type ConsumerRow = {
  id: string;
  position: string;
  paused: boolean;
  failing: boolean;
  failures: number;
  nextAttemptAt: Date;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastError: string | null;
};

/** How a turn ended, written with the new position in one transaction. */
export type ConsumerSettlement = {
  position: string;
  failures: number;
  nextAttemptAt: Date;
  failing?: boolean;
  paused?: boolean;
  success?: Date | null;
  failure?: { at: Date; error: string } | null;
};

export type DestinationKind = "webhook" | "splunk" | "elastic" | "datadog" | "sentinel" | "qradar" | "arcsight";

export type DestinationRow = {
  id: string;
  kind: DestinationKind;
  name: string;
  description: string | null;
  url: string;
  settings: Record<string, unknown>;
  secretsEncrypted: string;
  previousSecretsEncrypted: string | null;
  previousSecretsExpireAt: Date | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type NewDelivery = {
  destinationId: string;
  attemptedAt: Date;
  firstSeq: string | null;
  lastSeq: string | null;
  events: number;
  status: number | null;
  latencyMs: number;
  outcome: "delivered" | "failed" | "refused";
  error: string | null;
  test?: boolean;
};

export type DeliveryRow = NewDelivery & { id: string; test: boolean };

const CONSUMER_COLUMNS = `id, position::text AS position, paused, failing, failures, next_attempt_at AS "nextAttemptAt",
  lease_owner AS "leaseOwner", lease_until AS "leaseUntil", last_success_at AS "lastSuccessAt",
  last_failure_at AS "lastFailureAt", last_error AS "lastError"`;

const DESTINATION_COLUMNS = `id, kind, name, description, url, settings, secrets_encrypted AS "secretsEncrypted",
  previous_secrets_encrypted AS "previousSecretsEncrypted", previous_secrets_expire_at AS "previousSecretsExpireAt",
  event_types AS "eventTypes", enabled, disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The columns a destination's insert and update write (besides id and kind), in the order of writtenValues. */
const WRITTEN_COLUMNS = [
  "name",
  "description",
  "url",
  "settings",
  "secrets_encrypted",
  "previous_secrets_encrypted",
  "previous_secrets_expire_at",
  "event_types",
  "enabled",
  "disabled_reason",
];

function writtenValues(row: Omit<DestinationRow, "createdAt" | "updatedAt">): unknown[] {
  return [
    row.name,
    row.description,
    row.url,
    JSON.stringify(row.settings),
    row.secretsEncrypted,
    row.previousSecretsEncrypted,
    row.previousSecretsExpireAt,
    row.eventTypes,
    row.enabled,
    row.disabledReason,
  ];
}

const DELIVERY_COLUMNS = `id::text AS id, destination_id AS "destinationId", attempted_at AS "attemptedAt", first_seq::text AS "firstSeq",
  last_seq::text AS "lastSeq", events, status, latency_ms AS "latencyMs", outcome, error, test`;

/** Consumers' positions and leases: the reusable part of the delivery machine (destinations, alert evaluation). */
export class ConsumerRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** A new consumer starts at `position` (normally the chain head: it receives what is recorded from now on). */
  async create(id: string, position: string, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `INSERT INTO audit_stream_consumers (id, position) VALUES ($1, $2) RETURNING id`,
      [id, position],
      transaction,
    );
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `DELETE FROM audit_stream_consumers WHERE id = $1 RETURNING id`, [id], transaction);
  }

  async get(id: string, transaction?: Transaction): Promise<ConsumerRow | null> {
    const [row] = await selectRows<ConsumerRow>(
      this.sequelize,
      `SELECT ${CONSUMER_COLUMNS} FROM audit_stream_consumers WHERE id = $1`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  async getMany(ids: string[]): Promise<ConsumerRow[]> {
    return selectRows<ConsumerRow>(this.sequelize, `SELECT ${CONSUMER_COLUMNS} FROM audit_stream_consumers WHERE id = ANY($1::text[])`, [
      ids,
    ]);
  }

  /**
   * Leases up to `limit` consumers that have work (behind the head, due, not paused or failing, not
   * leased by a live worker) to `owner` until now + `leaseMs`. SKIP LOCKED: workers claiming at the
   * same moment split the consumers between them instead of waiting.
   */
  claimDue(owner: string, leaseMs: number, limit: number, prefix: string): Promise<ConsumerRow[]> {
    return selectRows<ConsumerRow>(
      this.sequelize,
      `UPDATE audit_stream_consumers SET lease_owner = $1, lease_until = now() + make_interval(secs => $2::double precision / 1000)
        WHERE id IN (
          SELECT id FROM audit_stream_consumers
           WHERE NOT paused AND NOT failing AND next_attempt_at <= now() AND id LIKE $4
             AND (lease_until IS NULL OR lease_until < now())
             AND position < (SELECT seq FROM audit_chain_head)
           ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING ${CONSUMER_COLUMNS}`,
      [owner, leaseMs, limit, `${prefix}%`],
    );
  }

  /**
   * Records a turn's outcome and releases the lease, only while `owner` still holds it: a worker whose
   * lease ran out (another took over) writes nothing. True when written.
   */
  async settle(id: string, owner: string, settlement: ConsumerSettlement, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows(
      this.sequelize,
      `UPDATE audit_stream_consumers
          SET position = $3, failures = $4, next_attempt_at = $5, failing = coalesce($6, failing), paused = coalesce($7, paused),
              last_success_at = coalesce($8, last_success_at),
              last_failure_at = coalesce($9, last_failure_at), last_error = CASE WHEN $9::timestamptz IS NULL THEN last_error ELSE $10 END,
              lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND lease_owner = $2 AND lease_until >= now()
        RETURNING id`,
      [
        id,
        owner,
        settlement.position,
        settlement.failures,
        settlement.nextAttemptAt,
        settlement.failing ?? null,
        settlement.paused ?? null,
        settlement.success ?? null,
        settlement.failure?.at ?? null,
        settlement.failure?.error ?? null,
      ],
      transaction,
    );
    return rows.length === 1;
  }

  /** Gives a lease back without recording anything (nothing was attempted). */
  async release(id: string, owner: string): Promise<void> {
    await selectRows(
      this.sequelize,
      `UPDATE audit_stream_consumers SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2 RETURNING id`,
      [id, owner],
    );
  }

  /** Pause or resume; resuming also ends the failing state and retries at once. */
  async setPaused(id: string, paused: boolean, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      paused
        ? `UPDATE audit_stream_consumers SET paused = true, updated_at = now() WHERE id = $1 RETURNING id`
        : `UPDATE audit_stream_consumers SET paused = false, failing = false, failures = 0, next_attempt_at = now(), updated_at = now()
            WHERE id = $1 RETURNING id`,
      [id],
      transaction,
    );
  }

  /** Replay: the position moves (back) to `position`, retries start afresh. A worker mid-turn loses its lease. */
  async moveTo(id: string, position: string, transaction: Transaction): Promise<void> {
    await selectRows(
      this.sequelize,
      `UPDATE audit_stream_consumers SET position = $2, failing = false, failures = 0, next_attempt_at = now(),
              lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 RETURNING id`,
      [id, position],
      transaction,
    );
  }

  async lock(id: string, transaction: Transaction): Promise<ConsumerRow | null> {
    const [row] = await selectRows<ConsumerRow>(
      this.sequelize,
      `SELECT ${CONSUMER_COLUMNS} FROM audit_stream_consumers WHERE id = $1 FOR UPDATE`,
      [id],
      transaction,
    );
    return row ?? null;
  }
}

/** Destinations (webhooks, SIEMs) and their delivery log. */
export class DestinationRepository {
  constructor(private readonly sequelize: Sequelize) {}

  list(): Promise<DestinationRow[]> {
    return selectRows<DestinationRow>(
      this.sequelize,
      `SELECT ${DESTINATION_COLUMNS} FROM audit_stream_destinations ORDER BY created_at, id`,
      [],
    );
  }

  getMany(ids: string[]): Promise<DestinationRow[]> {
    return selectRows<DestinationRow>(
      this.sequelize,
      `SELECT ${DESTINATION_COLUMNS} FROM audit_stream_destinations WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  }

  /**
   * `lock`: FOR NO KEY UPDATE, which does not block the delivery log's foreign key (a settling turn
   * inserts log rows while an administrator changes the destination). Lock order everywhere: the
   * consumer row first, then the destination.
   */
  async get(id: string, transaction?: Transaction, lock = false): Promise<DestinationRow | null> {
    const [row] = await selectRows<DestinationRow>(
      this.sequelize,
      `SELECT ${DESTINATION_COLUMNS} FROM audit_stream_destinations WHERE id = $1${lock ? " FOR NO KEY UPDATE" : ""}`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  async insert(row: Omit<DestinationRow, "createdAt" | "updatedAt">, transaction: Transaction): Promise<DestinationRow> {
    const [created] = await selectRows<DestinationRow>(
      this.sequelize,
      `INSERT INTO audit_stream_destinations (id, kind, ${WRITTEN_COLUMNS.join(", ")})
       VALUES ($1, $2, ${WRITTEN_COLUMNS.map((_, i) => `$${i + 3}`).join(", ")}) RETURNING ${DESTINATION_COLUMNS}`,
      [row.id, row.kind, ...writtenValues(row)],
      transaction,
    );
    return created;
  }

  /** Everything but the id and the kind, which never change. */
  async update(row: DestinationRow, transaction: Transaction): Promise<DestinationRow> {
    const [updated] = await selectRows<DestinationRow>(
      this.sequelize,
      `UPDATE audit_stream_destinations SET ${WRITTEN_COLUMNS.map((column, i) => `${column} = $${i + 2}`).join(", ")}, updated_at = now()
        WHERE id = $1 RETURNING ${DESTINATION_COLUMNS}`,
      [row.id, ...writtenValues(row)],
      transaction,
    );
    return updated;
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `DELETE FROM audit_stream_destinations WHERE id = $1 RETURNING id`, [id], transaction);
  }

  async logDeliveries(deliveries: NewDelivery[], transaction?: Transaction): Promise<void> {
    if (deliveries.length === 0) return;
    const bind: unknown[] = [];
    const values = deliveries.map((delivery) => {
      const start = bind.length;
      bind.push(
        delivery.destinationId,
        delivery.attemptedAt,
        delivery.firstSeq,
        delivery.lastSeq,
        delivery.events,
        delivery.status,
        delivery.latencyMs,
        delivery.outcome,
        delivery.error,
        delivery.test ?? false,
      );
      return `(${Array.from({ length: 10 }, (_, i) => `$${start + i + 1}`).join(", ")})`;
    });
    await selectRows(
      this.sequelize,
      `INSERT INTO audit_stream_deliveries (destination_id, attempted_at, first_seq, last_seq, events, status, latency_ms, outcome, error, test)
       VALUES ${values.join(", ")} RETURNING id`,
      bind,
      transaction,
    );
  }

  /** Newest first, keyset on the id. */
  deliveries(destinationId: string, limit: number, beforeId: string | null): Promise<DeliveryRow[]> {
    return selectRows<DeliveryRow>(
      this.sequelize,
      `SELECT ${DELIVERY_COLUMNS} FROM audit_stream_deliveries
        WHERE destination_id = $1 AND ($3::bigint IS NULL OR id < $3::bigint) ORDER BY id DESC LIMIT $2`,
      [destinationId, limit, beforeId],
    );
  }

  /** Removes delivery-log rows older than `before`: the log stays bounded whatever the traffic. */
  async pruneDeliveries(before: Date): Promise<number> {
    const rows = await selectRows(this.sequelize, `DELETE FROM audit_stream_deliveries WHERE attempted_at < $1 RETURNING 1`, [before]);
    return rows.length;
  }
}
