import { CAUGHT_UP_REST_MS, settlementOf } from "../../src/streaming/chain-consumer.pump";
import type { ConsumerRow } from "../../src/streaming/stream.repository";

const consumer: ConsumerRow = {
  id: "destination:x",
  position: "100",
  paused: false,
  failing: false,
  failures: 0,
  nextAttemptAt: new Date(0),
  leaseOwner: "me",
  leaseUntil: null,
  lastSuccessAt: null,
  lastFailureAt: null,
  lastError: null,
};
const startedAt = new Date("2026-11-25T08:00:00.000Z");
const after = (ms: number) => new Date(startedAt.getTime() + ms);

describe("where a consumer stands after a turn", () => {
  test("caught up with the head: the next turn starts no sooner than the rest after this one started", () => {
    const quick = settlementOf(consumer, { position: "120", caughtUp: true }, [1000], after(30), startedAt);
    expect(quick).toMatchObject({ position: "120", failures: 0, success: after(30) });
    expect(quick.nextAttemptAt).toEqual(after(CAUGHT_UP_REST_MS));
    // A turn that took longer than the rest: the next one may start at once.
    const slow = settlementOf(consumer, { position: "120", caughtUp: true }, [1000], after(CAUGHT_UP_REST_MS + 50), startedAt);
    expect(slow.nextAttemptAt).toEqual(after(CAUGHT_UP_REST_MS + 50));
  });

  test("with a backlog left (the turn did not reach the head) the next turn is due at once", () => {
    expect(settlementOf(consumer, { position: "600" }, [1000], after(30), startedAt).nextAttemptAt).toEqual(after(30));
  });

  test("a failure waits for the retry schedule, whether or not the read reached the head", () => {
    const failed = settlementOf(
      consumer,
      { position: "100", caughtUp: true, failure: { error: "the receiver answered 500", retryAfterMs: 5000, gone: false } },
      [1000],
      after(30),
      startedAt,
    );
    expect(failed).toMatchObject({ failures: 1, failure: { at: after(30), error: "the receiver answered 500" } });
    expect(failed.nextAttemptAt).toEqual(after(30 + 5000));
  });
});
