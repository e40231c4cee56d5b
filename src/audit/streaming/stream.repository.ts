import type { Sequelize, Transaction } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";

export type DestinationKind = "webhook" | "splunk" | "elastic" | "datadog" | "sentinel" | "qradar" | "arcsight";

export type DestinationRow = {
  id: string;
  kind: DestinationKind;
  name: string;
  description: string | null;
  /** Masked when the URL carries credentials (destination-url.ts); the real one is then in urlEncrypted. */
  url: string;
  urlEncrypted: string | null;
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

const DESTINATION_COLUMNS = `id, kind, name, description, url, url_encrypted AS "urlEncrypted", settings, secrets_encrypted AS "secretsEncrypted",
  previous_secrets_encrypted AS "previousSecretsEncrypted", previous_secrets_expire_at AS "previousSecretsExpireAt",
  event_types AS "eventTypes", enabled, disabled_reason AS "disabledReason", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The columns a destination's insert and update write (besides id and kind), in the order of writtenValues. */
const WRITTEN_COLUMNS = [
  "name",
  "description",
  "url",
  "url_encrypted",
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
    row.urlEncrypted,
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

  /** Destinations whose URL is stored in plaintext (url_encrypted unset): sealUrlCredentials' candidates. */
  plaintextUrls(): Promise<Array<{ id: string; url: string }>> {
    return selectRows(this.sequelize, `SELECT id, url FROM audit_stream_destinations WHERE url_encrypted IS NULL`, []);
  }

  /** Seals one plaintext URL, unless it changed meanwhile (another process sealed it first). */
  async sealUrl(id: string, plaintext: string, masked: string, sealed: string): Promise<boolean> {
    const rows = await selectRows(
      this.sequelize,
      `UPDATE audit_stream_destinations SET url = $3, url_encrypted = $4 WHERE id = $1 AND url = $2 AND url_encrypted IS NULL RETURNING id`,
      [id, plaintext, masked, sealed],
    );
    return rows.length === 1;
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    await selectRows(this.sequelize, `DELETE FROM audit_stream_destinations WHERE id = $1 RETURNING id`, [id], transaction);
  }

  async logDeliveries(deliveries: NewDelivery[], transaction?: Transaction): Promise<void> {
    if (deliveries.length === 0) return;
    const bind: unknown[] = [];
    const values = deliveries.map((delivery) => {
      const row = [
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
      ];
      return `(${row.map((value) => bindParam(bind, value)).join(", ")})`;
    });
    await selectRows(
      this.sequelize,
      `INSERT INTO audit_stream_deliveries (destination_id, attempted_at, first_seq, last_seq, events, status, latency_ms, outcome, error, test)
       VALUES ${values.join(", ")} RETURNING id`,
      bind,
      transaction,
    );
  }

  /**
   * Newest first, keyset on the id. The order names the table's column: a bare `id` would be the
   * output column, the id as text, and sort 9 before 13.
   */
  deliveries(destinationId: string, limit: number, beforeId: string | null): Promise<DeliveryRow[]> {
    return selectRows<DeliveryRow>(
      this.sequelize,
      `SELECT ${DELIVERY_COLUMNS} FROM audit_stream_deliveries d
        WHERE d.destination_id = $1 AND ($3::bigint IS NULL OR d.id < $3::bigint) ORDER BY d.id DESC LIMIT $2`,
      [destinationId, limit, beforeId],
    );
  }

  /** Removes delivery-log rows older than `before`: the log stays bounded whatever the traffic. */
  async pruneDeliveries(before: Date): Promise<number> {
    const rows = await selectRows(this.sequelize, `DELETE FROM audit_stream_deliveries WHERE attempted_at < $1 RETURNING 1`, [before]);
    return rows.length;
  }
}
