import type { Sequelize } from "sequelize";
import type { AuditEventType, Severity } from "../../audit/log/audit.catalogue";
import type { Changes } from "../../audit/log/audit-changes";
import type { NewAuditEvent } from "../../audit/log/audit.repository";
import { newId } from "../../platform/common/ids";
import type { Services } from "../services";
import { DEMO_EMAIL, random } from "./demo";
import { DemoRepository } from "./demo.repository";

/** What every demo history event carries as its user agent: nobody should mistake it for real activity. */
export const DEMO_HISTORY_AGENT = "finance-gateway demo history";

export type DemoHistoryResult = {
  /** Events recorded by this run: 0 when the history was already there. */
  recorded: number;
  /** Events per month ("2026-03"), oldest first: this run's, or the ones already recorded. */
  months: Array<{ month: string; events: number }>;
};

/** Where the demo user signs in from: home, phone, office; failed attempts also from two strangers. */
const HOME_IPS = ["192.0.2.10", "198.51.100.23", "198.51.100.77"];
const STRANGER_IPS = ["203.0.113.45", "203.0.113.190"];
const ACCOUNTS = ["Family Home", "Family Car"];
const BUDGET_CATEGORIES = ["Groceries", "Food & Drink", "Shopping", "Travel"];

const monthKey = (date: Date) => date.toISOString().slice(0, 7);

/**
 * A past year of audit events for the demo family (`demo --audit-history`), so a fresh install has
 * months old enough for retention to archive: sign-ins (some failed, some from strangers), API key use,
 * valuation and budget changes, rules applied to transactions, profile updates, spread over the last 12
 * full months. Stored as record() stores events (each with its queue entry, for the sequencer to link),
 * in their month partitions, in one transaction. Each event's user agent says "demo history". The same
 * seed every time: month N back always holds the same number of events. Run again, it adds nothing.
 */
export async function seedAuditHistory(sequelize: Sequelize, services: Services, today = new Date()): Promise<DemoHistoryResult> {
  const user = await services.users.findByEmail(DEMO_EMAIL);
  if (!user) throw new Error("no demo user: run `finance-gateway demo` first");
  const repository = new DemoRepository(sequelize);
  const existing = await repository.historyMonths(DEMO_HISTORY_AGENT);
  if (existing.length > 0) return { recorded: 0, months: existing };

  const rng = random(20250301);
  const events: NewAuditEvent[] = [];
  const months: DemoHistoryResult["months"] = [];
  for (let monthsAgo = 12; monthsAgo >= 1; monthsAgo--) {
    const start = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - monthsAgo, 1));
    const end = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - monthsAgo + 1, 1));
    // Times within the month, in waking hours of the day drawn.
    const at = () => {
      const day = new Date(start.getTime() + Math.floor(rng.next() * ((end.getTime() - start.getTime()) / 86_400_000)) * 86_400_000);
      return new Date(day.getTime() + rng.int(7 * 3600, 23 * 3600 - 1) * 1000 + rng.int(0, 999));
    };
    const base = (eventType: AuditEventType, severity: Severity, action: string, more: Partial<NewAuditEvent> = {}): NewAuditEvent => ({
      id: newId(),
      timestamp: at(),
      eventType,
      severity,
      userId: user.id,
      userEmail: user.email,
      provider: null,
      action,
      resourceType: null,
      resourceId: null,
      resourceLabel: null,
      ipAddress: rng.pick(HOME_IPS),
      userAgent: DEMO_HISTORY_AGENT,
      sessionId: null,
      requestId: `demo-history:${newId()}`,
      changes: null,
      error: null,
      ...more,
    });
    const month: NewAuditEvent[] = [];
    const logins = rng.int(14, 24);
    for (let i = 0; i < logins; i++) month.push(base("auth.login.success", "info", "login", { sessionId: newId() }));
    const typos = rng.int(1, 3);
    for (let i = 0; i < typos; i++) month.push(base("auth.login.failed", "warning", "login", { error: "invalid_password" }));
    const strangers = rng.int(0, 4);
    for (let i = 0; i < strangers; i++)
      month.push(
        base("auth.login.failed", "warning", "login", {
          userId: null,
          userEmail: rng.pick(["admin@finance-gateway.local", "root@finance-gateway.local"]),
          ipAddress: rng.pick(STRANGER_IPS),
          error: "unknown_user",
        }),
      );
    const tokens = rng.int(4, 10);
    for (let i = 0; i < tokens; i++)
      month.push(base("auth.token.issued", "info", "api_key", { resourceType: "api_key", resourceLabel: "Demo read/write key" }));
    month.push(
      base("rule.applied", "info", "apply", {
        resourceType: "rule",
        resourceLabel: "Coffee shops → Food & Drink",
        changes: { transactions: { old: null, new: rng.int(3, 12) } } as Changes,
      }),
    );
    if (rng.next() < 0.5) {
      const category = rng.pick(BUDGET_CATEGORIES);
      const old = rng.int(2, 8) * 50;
      month.push(
        base("budget.updated", "info", "update", {
          resourceType: "budget",
          resourceLabel: category,
          changes: { budgeted_spending: { old: `${old}.00`, new: `${old + 50}.00` } } as Changes,
        }),
      );
    }
    if (monthsAgo % 6 === 0) {
      const account = rng.pick(ACCOUNTS);
      month.push(
        base("valuation.created", "info", "create", {
          resourceType: "account",
          resourceLabel: account,
          changes: { balance: { old: null, new: `${rng.int(20_000, 520_000)}.00` } } as Changes,
        }),
      );
    }
    if (monthsAgo === 9 || monthsAgo === 3)
      month.push(
        base("user.updated", "info", "update", {
          resourceType: "user",
          resourceId: user.id,
          resourceLabel: user.email,
          changes: { name: { old: "Demo", new: "Demo User" } } as Changes,
        }),
      );
    events.push(...month);
    months.push({ month: monthKey(start), events: month.length });
  }
  events.sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());

  await repository.insertAuditHistory(
    months.map(({ month }) => month),
    events,
  );
  await services.audit.chainCommitted();
  return { recorded: events.length, months };
}
