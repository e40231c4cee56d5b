/**
 * A turn of the alert evaluator that fails is settled as a failure and retried, in the same process:
 * the worker stays up. (A deadlock between the evaluator's chain read and a retention run detaching a
 * month made the pump hand the evaluator a bare failure outcome, which it read as its own and threw on,
 * outside any handler: the process running the service exited.) Here the turn fails because its rules
 * table is missing for a moment, as a schema change on a live database could make it.
 */
import { eventually } from "../helpers/eventually";
import { client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    roles: { workers: true },
    // The first retry of a failed turn after 5 s (STREAM_RETRY_SCHEDULE's default), polled every 100 ms.
    env: { STREAM_POLL_MS: "100", ALERT_POLL_MS: "100", RATE_LIMIT_REQUESTS: "0" },
  });
});

afterAll(async () => {
  await app?.stop();
});

type Evaluator = { position: string; failures: number; lastError: string | null; head: string };

async function evaluator(): Promise<Evaluator> {
  const [rows] = (await app.runtime.sequelize.query(
    `SELECT c.position::text AS position, c.failures, c.last_error AS "lastError", h.seq::text AS head
       FROM audit_stream_consumers c, audit_chain_head h WHERE c.id = 'alerts:evaluator'`,
  )) as [Evaluator[], unknown];
  return rows[0];
}

async function failedLogin(): Promise<void> {
  await client(app.url).post("/auth/login", { email: "nobody@turn-failure.test", password: "wrong" });
  await app.runtime.services.audit.chainCommitted();
}

test("a failed evaluator turn is recorded as the consumer's failure and retried; the service keeps answering", async () => {
  await failedLogin();
  await eventually(async () => (await evaluator()).position === (await evaluator()).head, { what: "the evaluator at the chain head" });

  await app.runtime.sequelize.query("ALTER TABLE alert_rules RENAME TO alert_rules_away");
  try {
    await failedLogin();
    const failed = await eventually(
      async () => {
        const state = await evaluator();
        return state.failures > 0 && state;
      },
      { what: "the evaluator's failed turn settled" },
    );
    expect(failed.lastError).toContain("alert_rules");
    expect(BigInt(failed.position)).toBeLessThan(BigInt(failed.head));
  } finally {
    await app.runtime.sequelize.query("ALTER TABLE alert_rules_away RENAME TO alert_rules");
  }

  // Retried from the same position once the table is back, by the same process.
  await eventually(
    async () => {
      const state = await evaluator();
      return state.position === state.head && state.failures === 0;
    },
    { what: "the evaluator caught up after its retry", timeout: 30_000 },
  );
  expect((await client(app.url).get("/healthz")).status).toBe(200);
});
