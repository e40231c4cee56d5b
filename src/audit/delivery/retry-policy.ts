import type { TurnOutcome } from "./chain-consumer.handler";
import type { ConsumerRow, ConsumerSettlement } from "./consumer.repository";

/*
 * How a consumer's batch is retried: the configured schedule (STREAM_RETRY_SCHEDULE), jittered, or
 * longer when the receiver asked for it (Retry-After, capped); past the schedule's end the consumer is
 * "failing" until an administrator resumes it; a 410 Gone pauses it.
 */

/** ±20 % so that consumers failing together do not retry together. */
function jitter(ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

/** A Retry-After longer than this is read as "a day": a receiver cannot park a consumer for weeks. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** Where the consumer stands after a turn: success resets the retries, a failure schedules the next one. */
export function settlementOf(consumer: ConsumerRow, outcome: TurnOutcome, schedule: number[], now = new Date()): ConsumerSettlement {
  const progressed = BigInt(outcome.position) > BigInt(consumer.position);
  // A success is a delivery the receiver accepted, not a move past events the filter skips.
  const succeeded = progressed && outcome.delivered !== false;
  if (!outcome.failure) {
    return { position: outcome.position, failures: 0, nextAttemptAt: now, success: succeeded ? now : null };
  }
  const failures = consumer.failures + 1;
  const exhausted = failures > schedule.length;
  const scheduled = jitter(schedule[Math.min(failures, schedule.length) - 1] ?? 0);
  const asked = outcome.failure.retryAfterMs === null ? 0 : Math.min(outcome.failure.retryAfterMs, MAX_RETRY_AFTER_MS);
  return {
    position: outcome.position,
    // Progress before the failure: the retries of the batch that failed start afresh.
    failures: progressed ? 1 : failures,
    nextAttemptAt: new Date(now.getTime() + Math.max(scheduled, asked)),
    failing: !progressed && exhausted ? true : undefined,
    paused: outcome.failure.gone ? true : undefined,
    success: succeeded ? now : null,
    failure: { at: now, error: outcome.failure.error },
  };
}
