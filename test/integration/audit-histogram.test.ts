import { runInAuditContext, auditContextFor } from "../../src/audit/audit-context";
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
