import Decimal from "decimal.js";
import type { ImportBatch, ImportedTransaction } from "./provider";

/** numeric(19,4): the largest absolute amount a transaction can hold. */
const MAX_AMOUNT = new Decimal("1e15");

/**
 * Splits an answer's transactions into the rows that can be stored and one message per row that
 * cannot (a NUL character, an impossible date, an amount out of range). One malformed row must not
 * fail every sync of its connection: it is skipped and named on the run, and the rest is imported.
 */
export function withoutMalformedRows(batch: ImportBatch): { batch: ImportBatch; problems: string[] } {
  const problems: string[] = [];
  const names = new Map(batch.accounts.map((account) => [account.externalId, account.name]));
  const transactions = new Map<string, ImportedTransaction[]>();
  for (const [accountId, rows] of batch.transactions) {
    transactions.set(
      accountId,
      rows.filter((row) => {
        const problem = problemOf(row);
        if (problem)
          problems.push(
            `${(names.get(accountId) ?? accountId).replaceAll("\u0000", "")}: skipped transaction ${printable(row.externalId ?? "without id")}: ${problem}`,
          );
        return !problem;
      }),
    );
  }
  return { batch: problems.length ? { ...batch, transactions } : batch, problems };
}

function problemOf(row: ImportedTransaction): string | null {
  if (!isCalendarDate(row.date)) return `unusable date ${printable(row.date)}`;
  for (const [field, value] of [
    ["id", row.externalId],
    ["name", row.name],
    ["merchant", row.merchant],
  ] as const)
    if (value?.includes("\u0000")) return `NUL character in its ${field}`;
  if (new Decimal(row.amount).abs().gte(MAX_AMOUNT)) return `amount ${printable(row.amount)} is out of range`;
  return null;
}

function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Upstream text quoted in a run's errors: NULs written out (the errors are stored as text), and short. */
function printable(text: string): string {
  const shown = JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  return shown.replace(/\\u0000/g, "\\0");
}
