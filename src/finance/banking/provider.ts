import Decimal from "decimal.js";
import type { AccountKind as AccountType } from "../accounts";
import type { Logger } from "../../platform/common/logger";
import { isKnownCurrency } from "../money";

/** What providers hand the sync engine, already in the service's conventions. */
export type ImportedHolding = {
  ticker: string | null;
  name: string | null;
  isin: string | null;
  figi: string | null;
  cusip: string | null;
  quantity: string;
  price: string | null;
  value: string;
  costBasis: string | null;
  currency: string;
};

export type ImportedAccount = {
  externalId: string;
  name: string;
  institution: string | null;
  /** ISO 4217, or XXX for a custom currency (its URL in currencyUrl). */
  currency: string;
  currencyUrl: string | null;
  accountType: AccountType;
  /** Present when this answer carries the current balance. */
  balance?: { amount: string; available: string | null; date: string };
  /** null: not asked or not supported by this account. */
  holdings?: { items: ImportedHolding[]; totalValue: string; currency: string; date: string } | null;
  /** Lunch Flow answers 501 for accounts whose type has no holdings: remember it and stop asking. */
  holdingsUnsupported?: boolean;
};

export type ImportedTransaction = {
  /** The provider's id, or null when it sent none (some pending rows). */
  externalId: string | null;
  date: string;
  /** Service convention: positive = money out. */
  amount: string;
  currency: string;
  name: string;
  merchant: string | null;
  pending: boolean;
};

export type ImportBatch = {
  accounts: ImportedAccount[];
  transactions: Map<string, ImportedTransaction[]>;
  /** The dates this answer covers completely, [start, end): rows of ours in it that it lacks are gone upstream. */
  range: { start: string; end: string };
  pendingRequested: boolean;
};

/** Durable progress of a connection's sync, kept in bank_connections.sync_state. */
export type SyncState = {
  historyComplete?: boolean;
  /** Epoch seconds up to which everything was imported. */
  syncedUntil?: number;
  /** An interrupted window walk, resumed where it stopped. */
  walk?: { from: number; to: number; cursor: number } | null;
  /** SimpleFIN protocol versions the Bridge announced at connect time. */
  versions?: string[];
};

export type SyncContext = {
  state: SyncState;
  includePending: boolean;
  /** Walk the whole history window again (what a first sync does). */
  fullHistory: boolean;
  historyDays: number;
  /** Provider account ids whose holdings are known to be unsupported. */
  holdingsUnsupported: Set<string>;
  importBatch(batch: ImportBatch): Promise<void>;
  saveState(state: SyncState): Promise<void>;
  /** Partial failures: recorded on the run, the sync goes on. */
  addErrors(messages: string[]): void;
  logger: Logger;
};

export interface ProviderSync {
  sync(context: SyncContext): Promise<void>;
}

export const DAY_SECONDS = 86_400;
/** How far back an incremental sync looks again: late postings and pending rows settle within this. */
export const INCREMENTAL_OVERLAP_DAYS = 10;

export function epochToDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

export function startOfTomorrowUtc(now = Date.now()): number {
  const today = Math.floor(now / 1000 / DAY_SECONDS) * DAY_SECONDS;
  return today + DAY_SECONDS;
}

/** Where a sync's history starts and ends, in epoch seconds. */
export function plannedRange(context: SyncContext): { from: number; to: number } {
  const to = startOfTomorrowUtc();
  const incremental = context.state.historyComplete && !context.fullHistory && context.state.syncedUntil;
  const from = incremental
    ? Math.min(context.state.syncedUntil!, to) - INCREMENTAL_OVERLAP_DAYS * DAY_SECONDS
    : to - context.historyDays * DAY_SECONDS;
  return { from, to };
}

/** A decimal string from a provider number or numeric string; null when absent or not a number. */
export function decimalOrNull(raw: unknown): string | null {
  if (raw === null || raw === undefined || raw === "") return null;
  try {
    const value = new Decimal(typeof raw === "number" ? String(raw) : String(raw).trim());
    return value.isFinite() ? value.toFixed() : null;
  } catch {
    return null;
  }
}

export function currencyOf(raw: unknown, fallback = "USD"): { currency: string; currencyUrl: string | null } {
  if (typeof raw === "string" && /^https?:\/\//i.test(raw)) return { currency: "XXX", currencyUrl: raw };
  const code = typeof raw === "string" ? raw.trim().toUpperCase() : "";
  return { currency: isKnownCurrency(code) ? code : fallback, currencyUrl: null };
}

/** A sensible account type from what providers tell: names and, for investments, holdings. */
export function guessAccountType(name: string, hints: { hasHoldings?: boolean; provider?: string | null } = {}): AccountType {
  const text = `${name} ${hints.provider ?? ""}`.toLowerCase();
  if (/credit|\bcards?\b|visa|mastercard|amex|american express/.test(text)) return "credit_card";
  if (/mortgage|loan|heloc/.test(text)) return "loan";
  if (/crypto|bitcoin|coinbase|kraken|wallet/.test(text)) return "crypto";
  if (hints.hasHoldings || /brokerage|invest|ira\b|401k|401\(k\)|roth|pension|stock|isa\b/.test(text)) return "investment";
  return "depository";
}
