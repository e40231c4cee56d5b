import type { Transaction } from "sequelize";
import type { ConsumerRow, ConsumerSettlement } from "./consumer.repository";

/**
 * The contract between the delivery engine and its plug-ins. A plug-in (streaming's destination handler,
 * the alert evaluator) serves the consumers whose ids start with its prefix: it does one turn for a
 * leased consumer and records the outcome in the transaction that moves the consumer's position. It
 * never leases, retries or settles: the pump (chain-consumer.pump.ts) does, by retry-policy.ts.
 */
export type TurnOutcome = {
  /** The new position: every event up to it is handled. */
  position: string;
  /**
   * False when the turn handed nothing to its receiver (it only moved past events its filter skips): the
   * position moves but the consumer's "last success" does not. Absent: moving forward counts as success.
   */
  delivered?: boolean;
  /** Set when the turn stopped on a failure: the consumer retries from `position` later. */
  failure?: { error: string; retryAfterMs: number | null; gone: boolean } | null;
};

export interface ChainConsumerHandler<Outcome extends TurnOutcome = TurnOutcome> {
  /** Consumer ids this handler serves start with it (`destination:`, `alerts:`). */
  readonly prefix: string;
  /**
   * Called once per claim with every consumer just leased to this handler, before their turns: a
   * handler reads what its turns need in one query rather than one per turn (the claims run while the
   * stream is busy, on the database that records it).
   */
  prepare?(consumers: ConsumerRow[]): Promise<void>;
  /** One turn for a leased consumer; should return before `deadline` (its lease ends a little later). */
  turn(consumer: ConsumerRow, deadline: number): Promise<Outcome>;
  /** Writes the handler's records of the outcome in the transaction that moves the position. */
  record(consumer: ConsumerRow, outcome: Outcome, settlement: ConsumerSettlement, transaction: Transaction): Promise<void>;
}
