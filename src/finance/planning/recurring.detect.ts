/**
 * Upstream's recurring-pattern rules (RecurringTransaction::Identifier), as pure functions over the
 * days of month a group of transactions fell on.
 */

/** Distance between two days of month on a 31-day circle (the 30th and the 2nd are 3 apart). */
export function circularDistance(a: number, b: number): number {
  const linear = Math.abs(a - b);
  return Math.min(linear, 31 - linear);
}

/** The typical day of month: the median after rotating the circle so the days sit closest together. */
export function expectedDay(days: number[]): number {
  if (days.length === 1) return days[0];
  let best: { spread: number; pivot: number; rotated: number[] } | null = null;
  for (let pivot = 0; pivot < 31; pivot++) {
    const rotated = days.map((day) => (((day - 1 - pivot) % 31) + 31) % 31).sort((a, b) => a - b);
    const spread = rotated[rotated.length - 1] - rotated[0];
    if (!best || spread < best.spread) best = { spread, pivot, rotated };
  }
  const { rotated, pivot } = best!;
  const mid = Math.floor(rotated.length / 2);
  const median = rotated.length % 2 === 1 ? rotated[mid] : Math.round((rotated[mid - 1] + rotated[mid]) / 2);
  return ((median + pivot) % 31) + 1;
}

/** Whether the days cluster: the standard deviation of their distances to the typical day is at most 5. */
export function daysClusterTogether(days: number[]): boolean {
  if (days.length === 0) return false;
  const median = expectedDay(days);
  const distances = days.map((day) => circularDistance(day, median));
  const mean = distances.reduce((sum, d) => sum + d, 0) / distances.length;
  const variance = distances.reduce((sum, d) => sum + (d - mean) ** 2, 0) / distances.length;
  return Math.sqrt(variance) <= 5;
}

/** The month after `from`, on the expected day (the month's last day when it has no such day). */
export function nextExpectedDate(from: string, day: number): string {
  const [year, month] = from.split("-").map(Number);
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(day, last))).toISOString().slice(0, 10);
}

export function shiftDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export function shiftMonths(date: string, months: number): string {
  const [year, month, day] = date.split("-").map(Number);
  const last = new Date(Date.UTC(year, month - 1 + months + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month - 1 + months, Math.min(day, last))).toISOString().slice(0, 10);
}
