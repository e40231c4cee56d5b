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

const CONSUMER_COLUMNS = `id, position::text AS position, paused, failing, failures, next_attempt_at AS "nextAttemptAt",
  lease_owner AS "leaseOwner", lease_until AS "leaseUntil", last_success_at AS "lastSuccessAt",
  last_failure_at AS "lastFailureAt", last_error AS "lastError"`;

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
