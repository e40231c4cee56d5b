import { daysAgo, fingerprintOf, reconcile } from "../../src/finance/banking/bank-sync.reconcile";
import type { ExistingTransaction } from "../../src/finance/banking/bank-import.repository";
import type { ImportBatch, ImportedTransaction } from "../../src/finance/banking/provider";

const batch = (pendingRequested = true): ImportBatch => ({
  accounts: [],
  transactions: new Map(),
  range: { start: daysAgo(60), end: daysAgo(-1) },
  pendingRequested,
});

function incoming(overrides: Partial<ImportedTransaction> = {}): ImportedTransaction {
  return {
    externalId: "tx-1",
    date: daysAgo(2),
    amount: "12.5000",
    currency: "USD",
    name: "Coffee",
    merchant: null,
    pending: false,
    ...overrides,
  };
}

function stored(row: ImportedTransaction, overrides: Partial<ExistingTransaction> = {}): ExistingTransaction {
  return {
    id: `id-${row.externalId ?? "x"}`,
    accountId: "account-1",
    externalId: row.externalId,
    date: row.date,
    amount: row.amount,
    currency: row.currency,
    pending: row.pending,
    providerName: row.name,
    providerFingerprint: fingerprintOf(row),
    ...overrides,
  };
}

describe("reconciling one account's answer with what is stored", () => {
  test("a new row is written, an unchanged one is skipped, a changed one is rewritten under its key", () => {
    const same = incoming({ externalId: "same" });
    const changed = incoming({ externalId: "changed", name: "Coffee beans" });
    const plan = reconcile(
      [incoming({ externalId: "new" }), same, changed],
      [stored(same), stored(incoming({ externalId: "changed" }))],
      batch(),
      "USD",
    );
    expect(plan.unchanged).toBe(1);
    expect(plan.writes.map((write) => [write.key, write.existingId])).toEqual([
      ["new", undefined],
      ["changed", undefined],
    ]);
    expect(plan.expired).toEqual([]);
  });

  test("a posted row takes over its pending original (same amount and currency, within a week): the closest one", () => {
    const far = stored(incoming({ externalId: "pending-far", pending: true, date: daysAgo(8) }));
    const near = stored(incoming({ externalId: "pending-near", pending: true, date: daysAgo(3) }));
    const plan = reconcile([incoming({ externalId: "posted", date: daysAgo(1) })], [far, near], batch(), "USD");
    expect(plan.writes).toEqual([expect.objectContaining({ key: "posted", existingId: near.id })]);
  });

  test("another amount or currency is not the same purchase", () => {
    const pending = stored(incoming({ externalId: "pending", pending: true, date: daysAgo(3) }));
    expect(reconcile([incoming({ externalId: "p", amount: "12.5100" })], [pending], batch(), "USD").writes[0].existingId).toBeUndefined();
    expect(reconcile([incoming({ externalId: "p", currency: "EUR" })], [pending], batch(), "USD").writes[0].existingId).toBeUndefined();
  });

  test("an old row whose id the bank re-issued keeps its id: same date, amount, currency and description", () => {
    const old = stored(incoming({ externalId: "old-id" }));
    const plan = reconcile([incoming({ externalId: "new-id" })], [old], batch(), "USD");
    expect(plan.writes).toEqual([expect.objectContaining({ key: "new-id", existingId: old.id })]);
  });

  test("rows without an id get a content key, numbered when identical rows repeat; a repeated id is one row", () => {
    const coffee = incoming({ externalId: null, pending: true });
    const plan = reconcile(
      [coffee, coffee, incoming({ externalId: "dup" }), incoming({ externalId: "dup", name: "Tea" })],
      [],
      batch(),
      "USD",
    );
    const keys = plan.writes.map((write) => write.key);
    expect(keys[0]).toMatch(/^content:/);
    expect(keys[1]).toBe(`${keys[0]}#2`);
    expect(plan.writes.filter((write) => write.key === "dup")).toEqual([
      expect.objectContaining({ row: expect.objectContaining({ name: "Tea" }) }),
    ]);
  });

  test("a row without a currency takes the account's", () => {
    const plan = reconcile([incoming({ currency: "" })], [], batch(), "EUR");
    expect(plan.writes[0].row.currency).toBe("EUR");
  });

  test("a pending row the answer no longer carries expires once old enough, when pending rows were asked for", () => {
    const recent = stored(incoming({ externalId: "recent", pending: true, date: daysAgo(1) }));
    const old = stored(incoming({ externalId: "old", pending: true, date: daysAgo(10), amount: "99.0000" }));
    const posted = stored(incoming({ externalId: "posted-long-ago", date: daysAgo(10) }));
    expect(reconcile([], [recent, old, posted], batch(), "USD").expired).toEqual([old.id]);
  });

  test("with pending turned off, every stored pending row goes, except one that posted (re-keyed in place)", () => {
    const recent = stored(incoming({ externalId: "recent", pending: true, date: daysAgo(1), amount: "-12.5000" }));
    const old = stored(incoming({ externalId: "old", pending: true, date: daysAgo(10), amount: "99.0000" }));
    const posted = stored(incoming({ externalId: "posted-long-ago", date: daysAgo(10) }));
    expect(reconcile([], [recent, old, posted], batch(false), "USD").expired.sort()).toEqual([recent.id, old.id].sort());
    const nowPosted = incoming({ externalId: "recent-posted", pending: false, date: daysAgo(0), amount: "-12.5000" });
    const plan = reconcile([nowPosted], [recent, old, posted], batch(false), "USD");
    expect(plan.expired).toEqual([old.id]);
    expect(plan.writes).toEqual([expect.objectContaining({ existingId: recent.id })]);
  });
});
