import { BadRequestError } from "../../src/platform/common/errors";
import { clampLimit, decodeCursor, encodeCursor, matchesFilter, parseFilter } from "../../src/audit/log/audit-filter";
import type { AuditEvent } from "../../src/audit/log/audit.service";

function event(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id: "5f0d8d2e-8f4e-4b6e-9a52-3f1f7c6a0b11",
    seq: "7",
    timestamp: new Date("2026-03-10T12:00:00Z"),
    eventType: "auth.login.failed",
    severity: "warning",
    user: { id: "0b5b3a8e-6a4c-4d43-9d7c-52b3f3b1d1aa", email: "Ann@Example.test" },
    provider: "okta",
    action: "login",
    resource: { type: "session", id: "s-1", label: "password" },
    ipAddress: "10.1.2.3",
    userAgent: "curl/8",
    sessionId: null,
    requestId: "r-1",
    changes: { note: { old: null, new: "wrong password" } },
    error: "Invalid email or password",
    prevHash: null,
    hash: null,
    ...overrides,
  };
}

const matches = (filter: Parameters<typeof parseFilter>[0], target = event()) => matchesFilter(parseFilter(filter))(target);

describe("matching a live event against a filter", () => {
  test("an empty filter matches everything", () => {
    expect(matches({})).toBe(true);
    expect(matches(null)).toBe(true);
  });

  test.each([
    [{ eventTypes: ["auth.*"] }, true],
    [{ eventTypes: ["user.*"] }, false],
    [{ severities: ["WARNING"] }, true],
    [{ severities: ["critical"] }, false],
    [{ providers: ["okta"] }, true],
    [{ providers: ["google"] }, false],
    [{ userIds: ["0b5b3a8e-6a4c-4d43-9d7c-52b3f3b1d1aa"] }, true],
    [{ userIds: ["1b5b3a8e-6a4c-4d43-9d7c-52b3f3b1d1aa"] }, false],
    [{ ipAddress: "10.1.*" }, true],
    [{ ipAddress: "10.2.0.0/16" }, false],
    [{ from: "2026-03-10" }, true],
    [{ from: "2026-03-11" }, false],
    [{ to: "2026-03-10" }, true],
    [{ to: "2026-03-09" }, false],
    [{ to: "2026-03-10T12:00:00Z" }, true],
    [{ search: "WRONG password" }, true],
    [{ search: "wrong passport" }, false],
    [{ search: "ann@example.test" }, true],
    [{ search: "nn@example.test" }, false],
  ])("%j → %s", (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });

  test("an event without an address never matches an address filter", () => {
    expect(matches({ ipAddress: "0.0.0.0/0" }, event({ ipAddress: null }))).toBe(false);
  });

  test("an IPv6 event is checked against an IPv6 range", () => {
    expect(matches({ ipAddress: "2001:db8:*" }, event({ ipAddress: "2001:db8::1" }))).toBe(true);
    expect(matches({ ipAddress: "2001:db9:*" }, event({ ipAddress: "2001:db8::1" }))).toBe(false);
  });
});

describe("parsing filters", () => {
  test.each([
    [{ eventTypes: ["nope.*"] }, /eventType/],
    [{ severities: ["loud"] }, /severity/],
    [{ userIds: ["42"] }, /userId/],
    [{ from: "2026-02-30" }, /from is not a valid date/],
    [{ to: "yesterday" }, /to must be an ISO 8601/],
    [{ ipAddress: "10.1.x" }, /ipAddress/],
  ])("%j is a 400 naming the value", (filter, message) => {
    expect(() => parseFilter(filter)).toThrow(BadRequestError);
    expect(() => parseFilter(filter)).toThrow(message);
  });

  test("an inclusive end date covers its whole day; a date-time without offset is UTC", () => {
    expect(parseFilter({ to: "2026-03-10" }).before).toEqual(new Date("2026-03-11T00:00:00Z"));
    expect(parseFilter({ from: "2026-03-10T08:30" }).from).toEqual(new Date("2026-03-10T08:30:00Z"));
  });
});

describe("paging", () => {
  test("cursors round-trip and a forged one is a 400", () => {
    const cursor = encodeCursor(event());
    expect(decodeCursor(cursor)).toEqual({ timestamp: event().timestamp, id: event().id });
    expect(() => decodeCursor("bm9wZQ")).toThrow(BadRequestError);
  });

  test("page sizes default to 50 and are capped at 100", () => {
    expect([clampLimit(undefined), clampLimit(0), clampLimit(2.5), clampLimit(7), clampLimit(1000)]).toEqual([50, 50, 50, 7, 100]);
  });
});
