import { createHash } from "node:crypto";
import Decimal from "decimal.js";
import type { ExistingTransaction } from "./bank-import.repository";
import type { ImportBatch, ImportedTransaction } from "./provider";

/**
 * How a bank answer meets what is stored: which incoming rows are new, changed, unchanged, a pending
 * row that posted, or an old row under a re-issued id, and which pending rows expire (or go, when the
 * connection no longer asks for pending rows). Pure: the sync
 * service reads the stored rows and writes the plan.
 */

/** A pending row and its posted form are the same purchase when account, amount and currency agree within this. */
export const PENDING_MATCH_DAYS = 7;
/** A pending row missing from an answer that covers its date is dropped once it is this old... */
const PENDING_MISSING_EXPIRY_DAYS = 5;
/** ...and any pending row is dropped after this long, answer or not: some never post. */
export const PENDING_MAX_AGE_DAYS = 30;

export type ReconcilePlan = {
  writes: Array<{ row: ImportedTransaction; key: string; fingerprint: string; existingId?: string }>;
  unchanged: number;
  expired: string[];
};

/**
 * Decides, for one account's answer, what each incoming row is: an unchanged row (skipped without a
 * write), a new or changed row under a known key (upserted), or a known row under a new key (re-keyed in
 * place so its id and the user's edits survive): a pending row that posted under a new id, or an old
 * row whose id the bank re-issued. Pending rows that the answer no longer carries expire.
 */
export function reconcile(
  incoming: ImportedTransaction[],
  existing: ExistingTransaction[],
  batch: ImportBatch,
  accountCurrency: string,
): ReconcilePlan {
  const plan: ReconcilePlan = { writes: [], unchanged: 0, expired: [] };
  const byKey = new Map<string, ExistingTransaction>();
  for (const row of existing) if (row.externalId) byKey.set(row.externalId, row);
  const keyed = keyRows(incoming.map((row) => ({ ...row, currency: row.currency || accountCurrency })));
  const incomingKeys = new Set(keyed.map(({ key }) => key));
  // Rows of ours the answer did not mention: the only candidates for a re-key or expiry.
  const unclaimed = existing.filter((row) => row.externalId && !incomingKeys.has(row.externalId));
  const claimed = new Set<string>();
  const inRange = (date: string) => date >= batch.range.start && date < batch.range.end;

  for (const { row, key, fingerprint } of keyed) {
    const known = byKey.get(key);
    if (known) {
      if (known.providerFingerprint === fingerprint) plan.unchanged += 1;
      else plan.writes.push({ row, key, fingerprint });
      continue;
    }
    const match = row.pending ? null : (postedMatch(row, unclaimed, claimed) ?? reissuedMatch(row, unclaimed, claimed, inRange));
    if (match) {
      claimed.add(match.id);
      plan.writes.push({ row, key, fingerprint, existingId: match.id });
    } else plan.writes.push({ row, key, fingerprint });
  }
  if (batch.pendingRequested) {
    const cutoff = daysAgo(PENDING_MISSING_EXPIRY_DAYS);
    for (const row of unclaimed)
      if (row.pending && !claimed.has(row.id) && inRange(row.date) && row.date < cutoff) plan.expired.push(row.id);
  } else {
    // Pending turned off: the connection keeps no pending rows. Those that posted were claimed above
    // (re-keyed in place); the rest go, and come back at the next sync that asks for them.
    for (const row of unclaimed) if (row.pending && !claimed.has(row.id) && inRange(row.date)) plan.expired.push(row.id);
  }
  return plan;
}

/** A posted row's pending original: same amount and currency, posted within a week of it, the closest one. */
function postedMatch(row: ImportedTransaction, candidates: ExistingTransaction[], claimed: Set<string>): ExistingTransaction | null {
  let best: ExistingTransaction | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (!candidate.pending || claimed.has(candidate.id) || candidate.currency !== row.currency) continue;
    if (!new Decimal(candidate.amount).equals(row.amount)) continue;
    const distance = Math.abs(daysBetween(candidate.date, row.date));
    if (distance <= PENDING_MATCH_DAYS && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** An old row under a re-issued id: same date, amount, currency and description, its old id gone from the answer. */
function reissuedMatch(
  row: ImportedTransaction,
  candidates: ExistingTransaction[],
  claimed: Set<string>,
  inRange: (date: string) => boolean,
): ExistingTransaction | null {
  return (
    candidates.find(
      (candidate) =>
        !candidate.pending &&
        !claimed.has(candidate.id) &&
        inRange(candidate.date) &&
        candidate.date === row.date &&
        candidate.currency === row.currency &&
        candidate.providerName === row.name &&
        new Decimal(candidate.amount).equals(row.amount),
    ) ?? null
  );
}

/**
 * The provider key of each row: its id, or for rows without one (Lunch Flow pending rows) a key derived
 * from the content, numbered when identical rows repeat (two coffees of the same price on one day).
 */
function keyRows(rows: ImportedTransaction[]): Array<{ row: ImportedTransaction; key: string; fingerprint: string }> {
  const seen = new Map<string, number>();
  const result = new Map<string, { row: ImportedTransaction; key: string; fingerprint: string }>();
  for (const row of rows) {
    let key = row.externalId;
    if (!key) {
      const content = `content:${hash([row.date, row.amount, row.currency, row.name, row.merchant ?? ""].join("|"))}`;
      const occurrence = (seen.get(content) ?? 0) + 1;
      seen.set(content, occurrence);
      key = occurrence === 1 ? content : `${content}#${occurrence}`;
    }
    // The same id twice in one answer is one row (the last word wins); an upsert cannot touch a row twice.
    result.set(key, { row, key, fingerprint: fingerprintOf(row) });
  }
  return [...result.values()];
}

/** Amounts arrive canonical (Decimal#toFixed from the provider clients), so the text is stable. */
export function fingerprintOf(row: ImportedTransaction): string {
  return hash([row.date, row.amount, row.currency, row.name, row.merchant ?? "", row.pending ? "p" : ""].join("|"));
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 22);
}

export function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function daysBetween(a: string, b: string): number {
  return (Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000;
}

export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}
