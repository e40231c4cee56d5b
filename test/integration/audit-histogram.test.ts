import { runInAuditContext, auditContextFor } from "../../src/platform/common/audit-context";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  const { services, sequelize } = app.runtime;
  const record = (type: "auth.login.failed" | "user.suspended", ip: string, severity?: "critical") =>
    runInAuditContext(auditContextFor({ clientIp: ip, userAgent: "test", requestId: `req-${ip}` }), () =>
      sequelize.transaction((transaction) =>
        services.audit.record(transaction, { type, severity, user: { id: null, email: "x@example.test" } }),
      ),
    );
  await record("auth.login.failed", "10.1.0.1");
  await record("auth.login.failed", "10.1.0.2");
  await record("user.suspended", "10.2.0.1", "critical");
  await services.audit.chainCommitted();
}, 60_000);
afterAll(() => app?.stop());

test("the histogram counts events per bucket and severity for the filter, over at least an hour of round buckets", async () => {
  const histogram = await app.runtime.services.audit.histogram(null);
  expect(histogram.sampled).toBe(false);
  expect(histogram.bucketSeconds).toBe(60);
  const sum = (key: "warning" | "critical" | "total") => histogram.buckets.reduce((total, bucket) => total + bucket[key], 0);
  expect(sum("warning")).toBe(2);
  expect(sum("critical")).toBe(1);
  expect(sum("total")).toBe(3);
  expect(histogram.buckets.every((bucket) => bucket.start.getTime() % 60_000 === 0)).toBe(true);

  const onlyIp = await app.runtime.services.audit.histogram({ ipAddress: "10.1.*" });
  expect(onlyIp.buckets.reduce((total, bucket) => total + bucket.total, 0)).toBe(2);
  await expect(app.runtime.services.audit.histogram({ severities: ["loud"] })).rejects.toThrow(/severity/);
});

test("events after a chain position come back in chain order, filtered, with where to resume", async () => {
  const { services } = app.runtime;
  const all = await services.audit.eventsAfterSeq("0", null);
  expect(all.events.map((event) => Number(event.seq))).toEqual([1, 2, 3]);
  expect(all).toMatchObject({ throughSeq: "3", hasMore: false });
  const critical = await services.audit.eventsAfterSeq("1", { severities: ["critical"] });
  expect(critical.events.map((event) => event.eventType)).toEqual(["user.suspended"]);
  expect(critical.throughSeq).toBe("3");
  expect(await services.audit.chainHeadSeq()).toBe("3");
  await expect(services.audit.eventsAfterSeq("-1", null)).rejects.toThrow(/sequence/);
});

test("type, severity and time filters count exactly what SQL over the events counts, from indexes that carry the severity", async () => {
  const { services, sequelize } = app.runtime;
  const truth = async (where: string, bind: unknown[]) => {
    const rows = (await sequelize.query(`SELECT severity, count(*)::int AS count FROM audit_events WHERE ${where} GROUP BY severity`, {
      bind,
      type: "SELECT",
    })) as Array<{ severity: string; count: number }>;
    return Object.fromEntries(rows.map((row) => [row.severity, row.count]));
  };
  const counted = (histogram: Awaited<ReturnType<typeof services.audit.histogram>>) => {
    const sums: Record<string, number> = {};
    for (const bucket of histogram.buckets)
      for (const severity of ["info", "warning", "error", "critical"] as const)
        if (bucket[severity]) sums[severity] = (sums[severity] ?? 0) + bucket[severity];
    return sums;
  };
  const from = new Date(Date.now() - 3_600_000);
  expect(counted(await services.audit.histogram({ eventTypes: ["auth.login.failed"] }))).toEqual(
    await truth("event_type = $1", ["auth.login.failed"]),
  );
  expect(counted(await services.audit.histogram({ eventTypes: ["auth.*", "user.*"], severities: ["critical"] }))).toEqual(
    await truth("(event_type LIKE 'auth.%' OR event_type LIKE 'user.%') AND severity = 'critical'", []),
  );
  expect(counted(await services.audit.histogram({ severities: ["warning"], from: from.toISOString() }))).toEqual(
    await truth("severity = 'warning' AND occurred_at >= $1", [from]),
  );
  expect(counted(await services.audit.histogram({ eventTypes: ["auth.login.failed"] }))).toEqual({ warning: 2 });

  // The chart's filters by type, by time alone and by severity are answered from an index alone: with
  // the table's own scans ruled out, the plan reads no table row. (The address index also carries these columns, and on a near-empty table a walk of it
  // costs the same: it is dropped for the plan, in a transaction rolled back.)
  const plan = async (where: string) => {
    const transaction = await sequelize.transaction();
    try {
      await sequelize.query("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; DROP INDEX audit_events_ip_idx", {
        transaction,
      });
      const rows = (await sequelize.query(
        `EXPLAIN SELECT date_bin('1 hour', occurred_at, 'epoch'::timestamptz), severity, count(*) FROM audit_events WHERE ${where} GROUP BY 1, 2`,
        { transaction, type: "SELECT" },
      )) as Array<{ "QUERY PLAN": string }>;
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    } finally {
      await transaction.rollback();
    }
  };
  for (const where of [
    "event_type = 'auth.login.failed' AND occurred_at >= now() - interval '1 day'",
    "occurred_at >= now() - interval '1 day'",
    "severity = 'critical' AND occurred_at >= now() - interval '1 day'",
  ]) {
    const text = await plan(where);
    expect(text).not.toMatch(/(Seq Scan|Bitmap Heap Scan| Index Scan)/);
    expect(text).toMatch(/Index Only Scan/);
  }
});
