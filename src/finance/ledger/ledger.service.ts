import type { Transaction } from "sequelize";
import Decimal from "decimal.js";
import { newId } from "../../platform/common/ids";
import { toAmountString } from "../money";
import type { AccountKind as AccountType } from "../accounts";
import { FULL_HISTORY, MOVING_ACCOUNT_TYPES } from "./ledger.sql";
import type { DayRefresh, LedgerMode, LedgerRepository } from "./ledger.repository";
import type { ValuationKind, ValuationRepository, ValuationRow } from "./valuation.repository";

/**
 * A day of an account whose entries a write changed. `valuation`: the write changed a valuation (or
 * holdings) of that day, not only transactions; the account's balance is then derived afresh.
 */
export type LedgerChange = { accountId: string; date: string; valuation?: boolean };

/** The changes grouped per account (in id order), each account's days in date order. */
function dayRefreshes(changes: readonly LedgerChange[]): DayRefresh[] {
  const days = new Map<string, { dates: Set<string>; flowsOnly: boolean }>();
  for (const { accountId, date, valuation } of changes) {
    const entry = days.get(accountId) ?? { dates: new Set<string>(), flowsOnly: true };
    entry.dates.add(date);
    if (valuation) entry.flowsOnly = false;
    days.set(accountId, entry);
  }
  return [...days]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([accountId, { dates, flowsOnly }]) => ({ accountId, dates: [...dates].sort(), flowsOnly }));
}

/**
 * Beyond this many changed days of one account, its rows are rebuilt from the first of them rather
 * than refreshed two days per statement: one pass over the days after it costs less than many lookups.
 */
const REFRESHED_DAYS_AT_MOST = 16;

/** The accounts a write holds, locked, and how each is derived. */
export type LedgerLock = { modes: Map<string, LedgerMode> };

/** The account fields the ledger's rules read. */
export type LedgerAccount = { id: string; familyId: string; accountType: AccountType; currency: string };

/** Today in UTC, the day upstream's anchors and reconciliations default to. */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

export function shiftDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function yearsAgo(date: string, years: number): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCFullYear(day.getUTCFullYear() - years);
  return day.toISOString().slice(0, 10);
}

/** Upstream's names for a valuation, by its kind and the account's type. */
export function valuationName(kind: ValuationKind, accountType: AccountType): string {
  const valued = ["investment", "crypto", "other_asset"].includes(accountType);
  const owned = accountType === "property" || accountType === "vehicle";
  if (kind === "opening_anchor")
    return owned
      ? "Original purchase price"
      : accountType === "loan"
        ? "Original principal"
        : valued
          ? "Opening account value"
          : "Opening balance";
  if (kind === "current_anchor")
    return owned
      ? "Current market value"
      : accountType === "loan"
        ? "Current loan balance"
        : valued
          ? "Current account value"
          : "Current balance";
  if (owned || valued) return "Manual value update";
  return accountType === "loan" ? "Manual principal update" : "Manual balance update";
}

/**
 * The ledger's write side (docs/ledger.md): every write of an entry locks the accounts it touches,
 * writes, then recomputes each account from the earliest day it changed, all in the write's own
 * transaction, so the next read sees the new balances. Nothing else sets a balance.
 */
export class LedgerService {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly valuations: ValuationRepository,
  ) {}

  /** Locks the accounts a write is about to touch; call it before writing (docs/ledger.md: why first). */
  async lock(accountIds: readonly string[], transaction: Transaction): Promise<LedgerLock> {
    return { modes: await this.ledger.lockAccounts([...new Set(accountIds)].sort(), transaction) };
  }

  /**
   * Brings each changed account's day rows up to date, in the write's transaction: one statement per
   * account rewrites the changed days' rows (never the days after them: balances are derived when
   * read) and moves the account's balance by the flows' difference; a valuation's change sets the
   * balance afresh instead. An account the lock does not hold is left alone.
   */
  async recompute(lock: LedgerLock, changes: readonly LedgerChange[], transaction: Transaction): Promise<void> {
    for (const refresh of dayRefreshes(changes)) {
      const mode = lock.modes.get(refresh.accountId);
      if (!mode) continue;
      // A file import touches hundreds of days: one rebuild from its first day (a statement, then the
      // balance set afresh) instead of a refresh per two days.
      if (refresh.dates.length > REFRESHED_DAYS_AT_MOST)
        await this.ledger.recompute(refresh.accountId, mode, refresh.dates[0], transaction);
      else await this.ledger.refreshDays(refresh.accountId, refresh.dates, refresh.flowsOnly, transaction);
    }
  }

  /**
   * recompute for a write that took no lock before writing its rows (creating a transaction): locks
   * the changed accounts, then refreshes their days, sent together in one round trip. Safe without
   * the earlier lock because the refresh derives the days from the sources once the lock is held:
   * a concurrent write to the account has committed by then, and its rows are seen. A write that must
   * read something under the lock before writing (an update's previous date) locks first instead.
   */
  async settle(changes: readonly LedgerChange[], transaction: Transaction): Promise<void> {
    await this.ledger.lockAndRefresh(dayRefreshes(changes), transaction);
  }

  /**
   * The seam for holdings values (docs/ledger.md): whatever writes an investment account's holdings
   * values (a bank sync's snapshot; a trades feature later) calls this in its transaction with the
   * earliest day it changed. The account's rows from that day on (each holds the value carried
   * forward) and its balance follow.
   */
  async holdingsChanged(accountId: string, from: string, transaction: Transaction): Promise<void> {
    const lock = await this.lock([accountId], transaction);
    const mode = lock.modes.get(accountId);
    if (mode) await this.ledger.recompute(accountId, mode, from, transaction);
  }

  /** Recomputes these accounts whole (bank sync, once per sync; an account whose type changed). */
  async recomputeWhole(accountIds: readonly string[], transaction: Transaction): Promise<void> {
    const lock = await this.lock(accountIds, transaction);
    await this.recompute(
      lock,
      [...lock.modes.keys()].map((accountId) => ({ accountId, date: FULL_HISTORY, valuation: true })),
      transaction,
    );
  }

  /**
   * Gives a new account its opening anchor, dated as upstream dates one (the earlier of the day before
   * its oldest transaction and two years ago), holding the balance it was opened with; or on the day
   * given (an account import's balance date, as upstream's opening balance manager takes one).
   */
  async open(account: LedgerAccount, balance: string, transaction: Transaction, on: string | null = null): Promise<void> {
    const oldest = on ? null : await this.ledger.oldestTransactionDate(account.id, transaction);
    const twoYearsAgo = yearsAgo(today(), 2);
    const date = on ?? (oldest && shiftDays(oldest, -1) < twoYearsAgo ? shiftDays(oldest, -1) : twoYearsAgo);
    await this.valuations.insert(
      {
        id: newId(),
        familyId: account.familyId,
        accountId: account.id,
        date,
        amount: toAmountString(balance),
        currency: account.currency,
        kind: "opening_anchor",
        name: valuationName("opening_anchor", account.accountType),
      },
      transaction,
    );
    await this.ledger.recompute(account.id, "forward", FULL_HISTORY, transaction);
  }

  /**
   * A client setting an account's balance, as upstream's current balance manager: a bank-fed account
   * moves its current anchor; a manual cash account without reconciliations shifts its opening anchor
   * by the difference (its transactions keep telling the story); any other account is reconciled today.
   */
  async setCurrentBalance(account: LedgerAccount & { balance: string }, balance: string, transaction: Transaction): Promise<void> {
    const lock = await this.lock([account.id], transaction);
    const mode = lock.modes.get(account.id)!;
    if (mode === "reverse") {
      await this.setCurrentAnchor(account, today(), balance, transaction, lock);
      return this.recompute(lock, [{ accountId: account.id, date: FULL_HISTORY, valuation: true }], transaction);
    }
    const cash = (MOVING_ACCOUNT_TYPES as readonly string[]).includes(account.accountType) && account.accountType !== "loan";
    const opening = await this.valuations.ofKind(account.id, "opening_anchor", transaction);
    if (cash && opening && (await this.valuations.countOthers(account.id, transaction)) === 0) {
      const shifted = toAmountString(new Decimal(opening.amount).plus(balance).minus(account.balance));
      await this.valuations.update(opening.id, { amount: shifted }, transaction);
      return this.recompute(lock, [{ accountId: account.id, date: opening.date, valuation: true }], transaction);
    }
    await this.reconcile(account, today(), balance, null, transaction, lock);
  }

  /**
   * Upstream's reconciliation: the valuation on `date` takes `amount` (a new reconciliation when the
   * day has none; an existing valuation keeps its kind). `existing`, when given, is moved to `date`.
   * Returns the valuation written and whether it was created.
   */
  async reconcile(
    account: LedgerAccount,
    date: string,
    amount: string,
    existing: ValuationRow | null,
    transaction: Transaction,
    lock?: LedgerLock,
  ): Promise<{ id: string; created: boolean }> {
    const held = lock ?? (await this.lock([account.id], transaction));
    const onDate = await this.valuations.onDate(account.id, date, transaction);
    const target = existing ?? onDate;
    const changes: LedgerChange[] = [{ accountId: account.id, date, valuation: true }];
    let id: string;
    if (target) {
      // Moving a valuation onto a day that already has one replaces that day's.
      if (onDate && onDate.id !== target.id) await this.valuations.delete(onDate.id, transaction);
      await this.valuations.update(target.id, { date, amount: toAmountString(amount) }, transaction);
      changes.push({ accountId: account.id, date: target.date, valuation: true });
      id = target.id;
    } else {
      id = newId();
      await this.valuations.insert(
        {
          id,
          familyId: account.familyId,
          accountId: account.id,
          date,
          amount: toAmountString(amount),
          currency: account.currency,
          kind: "reconciliation",
          name: valuationName("reconciliation", account.accountType),
        },
        transaction,
      );
    }
    await this.recompute(held, changes, transaction);
    return { id, created: !target };
  }

  /**
   * The provider's balance of a bank-fed account: its current anchor moves to `date` with `amount`.
   * An anchor left from an earlier day stays as a reconciliation (upstream keeps the provider's past
   * balances as waypoints). No recompute here: a sync recomputes once at its end.
   */
  async setCurrentAnchor(account: LedgerAccount, date: string, amount: string, transaction: Transaction, lock?: LedgerLock): Promise<void> {
    const held = lock ?? (await this.lock([account.id], transaction));
    const current = await this.valuations.ofKind(account.id, "current_anchor", transaction);
    if (current && current.date !== date) {
      await this.valuations.update(
        current.id,
        { kind: "reconciliation", name: valuationName("reconciliation", account.accountType) },
        transaction,
      );
    }
    const onDate = current && current.date === date ? current : await this.valuations.onDate(account.id, date, transaction);
    const values = {
      amount: toAmountString(amount),
      kind: "current_anchor" as const,
      name: valuationName("current_anchor", account.accountType),
    };
    if (onDate) await this.valuations.update(onDate.id, values, transaction);
    else
      await this.valuations.insert(
        { id: newId(), familyId: account.familyId, accountId: account.id, date, currency: account.currency, ...values },
        transaction,
      );
    // The account is derived backwards from now on; the caller recomputes (a sync: once, at its end).
    held.modes.set(account.id, "reverse");
  }
}
