import { randomUUID } from "node:crypto";
import type { Sequelize } from "sequelize";
import { runInAuditContext } from "../../platform/common/audit-context";
import type { Logger } from "../../platform/common/logger";
import { Topic } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";
import type { ChainConsumerHandler, TurnOutcome } from "./chain-consumer.handler";
import type { ConsumerRepository, ConsumerRow } from "./consumer.repository";
import { settlementOf } from "./retry-policy";

export type PumpOptions = {
  pollMs: number;
  leaseMs: number;
  /** Turns in flight at once in this process. */
  concurrency: number;
  /** Waits before the 1st, 2nd, … retry of a failing batch; past the last one the consumer is marked failing. */
  retryScheduleMs: number[];
};

const WAKE_INTERVAL_MS = 50;

/**
 * The reusable half of the delivery machine. Every consumer of the committed audit stream (a webhook,
 * a SIEM, the alert evaluator) is a row of audit_stream_consumers with a position in the chain; a
 * handler, chosen by the consumer id's prefix, does one turn (read after the position, deliver) and
 * says how far it got. The pump leases due consumers, runs turns, and writes each outcome with the
 * new position in one transaction, together with the handler's own records (its delivery log).
 *
 * - at-least-once, in chain order: the position moves only past what was handled; a worker that dies
 *   mid-turn loses its lease and the next one starts again from the position;
 * - one worker per consumer at a time: a lease (SKIP LOCKED claim, owner-checked settle);
 * - nothing is held in memory or in Redis: a restart of anything resumes from the positions.
 */
type PumpDrainer = { resolve: () => void; reject: (error: Error) => void };

export class ChainConsumerPump {
  private readonly owner = `${process.pid}:${randomUUID()}`;
  private running = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private cycling: Promise<void> | null = null;
  private again = false;
  private wakeups: AsyncIterator<unknown> | null = null;
  private wakePending = false;
  private lastCycle = 0;
  /** drain() callers, each waiting for a cycle that starts after its call and finds nothing to do. */
  private drainers: PumpDrainer[] = [];

  constructor(
    private readonly sequelize: Sequelize,
    private readonly consumers: ConsumerRepository,
    private readonly handlers: ChainConsumerHandler[],
    private readonly options: PumpOptions,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {}

  /** The prefixes of the consumers this pump serves, one per plug-in (checked against workers/queues.ts's CHAIN_CONSUMERS at boot). */
  get prefixes(): string[] {
    return this.handlers.map((handler) => handler.prefix);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Newly linked events wake the pump at once; the poll is the safety net when the bus is down.
    this.wakeups = this.events.subscribe(Topic.AuditEventRecorded)[Symbol.asyncIterator]();
    void this.listen(this.wakeups);
    this.schedule(0);
  }

  private async listen(wakeups: AsyncIterator<unknown>): Promise<void> {
    try {
      while (this.running) {
        const next = await wakeups.next();
        if (next.done) return;
        this.wake();
      }
    } catch (error) {
      this.logger.warn({ err: error }, "audit stream wake-ups stopped; polling continues");
    }
  }

  /**
   * Asks for a cycle soon. Wakes arrive per linked event; they are coalesced into at most one cycle
   * per WAKE_INTERVAL_MS, so a busy stream costs a claim query per interval, not per event.
   */
  wake(): void {
    if (!this.running) return;
    if (this.cycling) this.again = true;
    else if (!this.wakePending) {
      this.wakePending = true;
      this.schedule(Math.max(0, this.lastCycle + WAKE_INTERVAL_MS - Date.now()));
    }
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wakePending = false;
      this.lastCycle = Date.now();
      const drainers = this.drainers.splice(0);
      this.cycling = this.cycle()
        .then((claimed) => this.settleDrainers(drainers, claimed === 0 && this.inFlight.size === 0))
        .catch((error) => {
          this.settleDrainers(drainers, false);
          this.logger.warn({ err: error }, "audit stream delivery cycle failed");
        })
        .finally(() => {
          this.cycling = null;
          const more = this.again;
          this.again = false;
          if (more) this.wake();
          else this.schedule(this.options.pollMs);
        });
    }, ms);
  }

  /**
   * Claims what this process has room for and starts those turns; a finished turn wakes the pump again.
   * Resolves with the number of consumers claimed (-1 when there was no room to claim).
   */
  private async cycle(): Promise<number> {
    let total = 0;
    for (const handler of this.handlers) {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) return -1;
      const claimed = await this.consumers.claimDue(this.owner, this.options.leaseMs, room, handler.prefix);
      total += claimed.length;
      if (claimed.length === 0) continue;
      try {
        await handler.prepare?.(claimed);
      } catch (error) {
        // Each turn then reads for itself (and fails, and is retried, if the database is away).
        this.logger.warn({ err: error }, "audit stream consumers not prepared");
      }
      for (const consumer of claimed) {
        const turn = this.runTurn(handler, consumer).finally(() => {
          this.inFlight.delete(consumer.id);
          this.wake();
        });
        this.inFlight.set(consumer.id, turn);
      }
    }
    return total;
  }

  /**
   * Resolves once delivery has caught up: a claim cycle that started after this call found no consumer
   * due and no turn in flight, so every consumer is at the chain head, paused, failing, waiting for its
   * next retry or leased by another process. Tests await it instead of sleeping; events must be linked
   * into the chain first (audit.chainCommitted()) to count. Rejects when the pump is not running.
   */
  drain(): Promise<void> {
    if (!this.running) return Promise.reject(new Error("the audit stream pump is not running"));
    const drained = new Promise<void>((resolve, reject) => this.drainers.push({ resolve, reject }));
    // A cycle already running may have looked before the caller's commit: the next one decides.
    if (this.cycling) this.again = true;
    else this.schedule(0);
    return drained;
  }

  /** Caught up: the drainers resolve; otherwise they wait for the next cycle (a finished turn asks for one). */
  private settleDrainers(drainers: PumpDrainer[], caughtUp: boolean): void {
    if (caughtUp) for (const drainer of drainers) drainer.resolve();
    else this.drainers.unshift(...drainers);
  }

  /** Events a turn records (a destination disabled or failing) correlate by the turn, as a job's do by the job. */
  private runTurn(handler: ChainConsumerHandler, consumer: ConsumerRow): Promise<void> {
    const context = { ipAddress: null, userAgent: null, requestId: `stream:${consumer.id}:${randomUUID()}`, sessionId: null };
    return runInAuditContext(context, () => this.turn(handler, consumer));
  }

  private async turn(handler: ChainConsumerHandler, consumer: ConsumerRow): Promise<void> {
    // Half the lease for the work, the rest as margin for the settling transaction.
    const deadline = Date.now() + this.options.leaseMs / 2;
    let outcome: TurnOutcome;
    try {
      outcome = await handler.turn(consumer, deadline);
    } catch (error) {
      this.logger.warn({ err: error, consumer: consumer.id }, "audit stream turn failed");
      outcome = { position: consumer.position, failure: { error: (error as Error).message, retryAfterMs: null, gone: false } };
    }
    const settlement = settlementOf(consumer, outcome, this.options.retryScheduleMs);
    await this.sequelize.transaction(async (transaction) => {
      // A lease that ran out (this worker was too slow) belongs to another worker now: record nothing.
      if (await this.consumers.settle(consumer.id, this.owner, settlement, transaction))
        await handler.record(consumer, outcome, settlement, transaction);
    });
  }

  /** Stops claiming and waits for the turns in flight to settle. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.wakeups?.return?.();
    await this.cycling;
    await Promise.allSettled([...this.inFlight.values()]);
    for (const drainer of this.drainers.splice(0)) drainer.reject(new Error("the audit stream pump stopped"));
  }
}
