import {
  AUDIT_EVENT_TYPES,
  SERVICE_EVENT_CATALOGUE,
  SPEC_EVENT_TYPES,
  defaultSeverity,
  effectiveSeverity,
  expandEventTypePattern,
  isAuditEventType,
} from "../../src/audit/log/audit.catalogue";
import { diffChanges, REDACTED, redactChanges } from "../../src/audit/log/audit-changes";
import { ipFilterToCidr, parseFilter } from "../../src/audit/log/audit-filter";

describe("the audit event catalogue", () => {
  test("holds the 24 event types of the spec with their default severities", () => {
    expect(SPEC_EVENT_TYPES).toHaveLength(24);
    expect(AUDIT_EVENT_TYPES).toEqual([...SPEC_EVENT_TYPES, ...Object.keys(SERVICE_EVENT_CATALOGUE)]);
    expect(defaultSeverity("auth.login.failed")).toBe("warning");
    expect(defaultSeverity("auth.token.revoked")).toBe("warning");
    expect(defaultSeverity("provider.deleted")).toBe("warning");
    expect(defaultSeverity("user.roles.synced")).toBe("info");
    expect(SPEC_EVENT_TYPES.filter((type) => defaultSeverity(type) === "warning").sort()).toEqual(
      [
        "account.disconnected",
        "account.unlinked",
        "auth.login.failed",
        "auth.token.revoked",
        "provider.deleted",
        "provider.disabled",
        "user.deleted",
        "user.suspended",
      ].sort(),
    );
    expect(isAuditEventType("auth.login.hacked")).toBe(false);
  });

  test("the service's own types: a removed or paused stream destination, a removed alert rule or channel, an alert limit that bites, a retention change, a deleted archive, a deleted valuation, trade, exchange rate, transaction or finance account, a family's financial data reset or restored from an export, a revoked API key, a recovery code used or a second factor reset and an unlocked account are warnings, a failing destination an error", () => {
    expect(
      Object.keys(SERVICE_EVENT_CATALOGUE)
        .filter((type) => defaultSeverity(type as never) === "warning")
        .sort(),
    ).toEqual([
      "alert.channel.deleted",
      "alert.channel.limited",
      "alert.rule.deleted",
      "alert.rule.limited",
      "audit.archive.deleted",
      "audit.retention.updated",
      "auth.api_key.revoked",
      "auth.mfa.recovery_code_used",
      "auth.mfa.reset",
      "exchange_rate.deleted",
      "family.reset",
      "family.restored",
      "finance_account.deleted",
      "stream.destination.deleted",
      "stream.destination.paused",
      "trade.deleted",
      "transaction.deleted",
      "user.unlocked",
      "valuation.deleted",
    ]);
    expect(defaultSeverity("stream.destination.failing")).toBe("error");
    expect(defaultSeverity("audit.export.failed")).toBe("error");
    expect(defaultSeverity("family_export.failed")).toBe("error");
  });

  test("an emitter may raise a severity but not lower it", () => {
    expect(effectiveSeverity("auth.token.revoked", "critical")).toBe("critical");
    expect(effectiveSeverity("auth.token.revoked", "info")).toBe("warning");
  });

  test("event type filters take exact types and prefixes", () => {
    expect(expandEventTypePattern("auth.*")).toHaveLength(14);
    expect(expandEventTypePattern("user.roles.*")).toEqual(["user.roles.synced", "user.roles.updated"]);
    expect(expandEventTypePattern("auth.logout")).toEqual(["auth.logout"]);
    expect(expandEventTypePattern("nope.*")).toBeNull();
    // The spec's account.* are SSO connected accounts: a filter, stream or report naming them gets no finance accounts.
    expect(expandEventTypePattern("account.*")).toEqual([
      "account.connected",
      "account.disconnected",
      "account.linked",
      "account.unlinked",
    ]);
    expect(expandEventTypePattern("finance_account.*")).toHaveLength(3);
    expect(() => parseFilter({ eventTypes: ["auth.login.hacked"] })).toThrow("is not a known event type");
  });

  test("IP wildcards become CIDRs", () => {
    expect(ipFilterToCidr("10.1.*")).toBe("10.1.0.0/16");
    expect(ipFilterToCidr("10.*")).toBe("10.0.0.0/8");
    expect(ipFilterToCidr("10.1.2.*")).toBe("10.1.2.0/24");
    expect(ipFilterToCidr("10.1.2.3")).toBe("10.1.2.3/32");
    expect(ipFilterToCidr("192.168.0.0/16")).toBe("192.168.0.0/16");
    expect(ipFilterToCidr("2001:db8:*")).toBe("2001:db8:0:0:0:0:0:0/32");
    expect(() => ipFilterToCidr("10.1.300.*")).toThrow();
    expect(() => ipFilterToCidr("not an ip")).toThrow();
  });

  test("dates: a date-only end includes its whole day; unparseable dates are refused", () => {
    const query = parseFilter({ from: "2024-01-01", to: "2024-01-31" });
    expect(query.from!.toISOString()).toBe("2024-01-01T00:00:00.000Z");
    expect(query.before!.toISOString()).toBe("2024-02-01T00:00:00.000Z");
    expect(parseFilter({ to: "2024-01-31T10:00:00Z" }).before!.toISOString()).toBe("2024-01-31T10:00:00.001Z");
    expect(() => parseFilter({ from: "yesterday" })).toThrow("ISO 8601");
    expect(() => parseFilter({ from: "2024-02-30" })).toThrow("not a valid date");
  });
});

describe("changes", () => {
  test("are computed field by field from the before and after states", () => {
    expect(diffChanges({ name: "A", role: "member", unchanged: 1 }, { name: "B", role: "admin", unchanged: 1 })).toEqual({
      name: { old: "A", new: "B" },
      role: { old: "member", new: "admin" },
    });
  });

  test("never carry secrets", () => {
    const changes = redactChanges({
      clientSecret: { old: "s3cret", new: "n3w" },
      password: { old: null, new: "hunter2" },
      config: { old: { apiKey: "abc", url: "https://user:pw@bank.example/x" }, new: { apiKey: "def", url: "https://bank.example/x" } },
      name: { old: "a", new: "b" },
    });
    expect(changes.clientSecret).toEqual({ old: REDACTED, new: REDACTED });
    expect(changes.password).toEqual({ old: null, new: REDACTED });
    expect(changes.config.old).toEqual({ apiKey: REDACTED, url: `https://${REDACTED}@bank.example/x` });
    expect(changes.name).toEqual({ old: "a", new: "b" });
    expect(JSON.stringify(diffChanges({ token: "t1" }, { token: "t2" }))).not.toContain("t2");
  });

  test("cut a URL's query credentials and leave an already masked URL as it is", () => {
    const { url } = redactChanges({
      url: { old: "https://hec.example/x?token=t0k&api_key=k3y&sig=s1g&region=eu", new: "http://***:***@h.example/x?token=***&a=1" },
    });
    expect(url).toEqual({
      old: `https://hec.example/x?token=${REDACTED}&api_key=${REDACTED}&sig=${REDACTED}&region=eu`,
      new: "http://***:***@h.example/x?token=***&a=1",
    });
    expect(redactChanges({ error: { old: null, new: "POST https://a:b@x.example/?auth_token=q9 failed" } }).error.new).toBe(
      `POST https://${REDACTED}@x.example/?auth_token=${REDACTED} failed`,
    );
  });
});
