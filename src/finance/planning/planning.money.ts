import Decimal from "decimal.js";
import { formatMoney, toSignedMinorUnits } from "../money";

/** An amount as upstream's planning views show it: formatted ("$1,200.00") and in signed minor units. */
export type MoneyView = { formatted: string; cents: number };

export function moneyView(amount: Decimal.Value | null, currency: string): MoneyView | null {
  if (amount === null) return null;
  const text = new Decimal(amount).toFixed();
  return { formatted: formatMoney(text, currency), cents: toSignedMinorUnits(text, currency) };
}

export const ZERO = new Decimal(0);

export function maxZero(value: Decimal): Decimal {
  return value.isNegative() ? ZERO : value;
}

/** First and last day of the calendar month holding `date` (YYYY-MM-DD). */
export function monthOf(date: string): { start: string; end: string } {
  const [year, month] = date.split("-").map(Number);
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const mm = String(month).padStart(2, "0");
  return { start: `${year}-${mm}-01`, end: `${year}-${mm}-${String(last).padStart(2, "0")}` };
}

export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** "November 2026": upstream's budget name for a calendar month. */
export function monthName(start: string): string {
  const [year, month] = start.split("-").map(Number);
  return `${MONTHS[month - 1]} ${year}`;
}
