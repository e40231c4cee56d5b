/**
 * Which rows one page of `GET /holdings` holds, worked out from intervals, never from a row per day
 * (docs/investments.md, "`GET /holdings` and `/holdings/{id}`").
 *
 * A manual account's security is a holding on every day from its first (its first trade, or an earlier
 * price on or after the account's start) to today, as upstream's forward calculator writes one for
 * every security on every day: a **line** of consecutive days. A provider's snapshots are stored rows;
 * on a day, one account's are a **block** of known size. The list is in upstream's order, oldest day
 * first (its controller's `chronological`, `order(:date)`, which clients page through as served), then,
 * where upstream leaves the order of a day's rows open, by account, then within an account: a line by
 * ticker and security, a block in its own stored order. So a day's row count changes only where a line
 * starts or ends or a block sits, and the rows before any day are a sum over lines and blocks: the page
 * is found by walking those change days from the oldest (a few per security and per reported day), not
 * the days between them, and only its own days are expanded.
 */

/** A calendar day as its number of days since 1970-01-01. */
export const dayNumber = (date: string): number => Math.round(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
export const dayText = (day: number): string => new Date(day * 86_400_000).toISOString().slice(0, 10);

/**
 * The days a list asks for, as day numbers (null: unbounded): `date` alone, or from `startDate` to
 * `endDate`, each inclusive; all of them narrow, as upstream's filters all apply.
 */
export function holdingWindow(filter: { date?: string; startDate?: string; endDate?: string }): { from: number | null; to: number | null } {
  const bounds = (values: Array<string | undefined>, pick: (...days: number[]) => number) => {
    const days = values.flatMap((value) => (value ? [dayNumber(value)] : []));
    return days.length > 0 ? pick(...days) : null;
  };
  return { from: bounds([filter.date, filter.startDate], Math.max), to: bounds([filter.date, filter.endDate], Math.min) };
}

/** One security of one manual account, a holding on each day from `first` to `last` (day numbers, inclusive). */
export type HoldingLine = { accountId: string; securityId: string; ticker: string; first: number; last: number };
/** One account's reported snapshot rows of one day. */
export type ReportedBlock = { accountId: string; day: number; count: number };

/** A page's rows in order: a line's row of a day, or `take` rows of a block after its first `skip`. */
export type HoldingSlot =
  | { kind: "position"; accountId: string; securityId: string; day: number }
  | { kind: "reported"; accountId: string; day: number; skip: number; take: number };

/** A run of days on which the same lines hold and no block sits, or one block's day: `from` up to `to`. */
type Segment = { from: number; to: number; perDay: number };

/** Within a day: accounts by id (as PostgreSQL orders uuids: their hex text), then a line by ticker, then security. */
function byListOrder(a: HoldingLine, b: HoldingLine): number {
  if (a.accountId !== b.accountId) return a.accountId < b.accountId ? -1 : 1;
  if (a.ticker !== b.ticker) return a.ticker < b.ticker ? -1 : 1;
  return a.securityId < b.securityId ? -1 : a.securityId > b.securityId ? 1 : 0;
}

/**
 * The days on which the row count changes, oldest first, cut into segments of a constant count per day:
 * a line counts from its `first` day up to its `last`, a block on its day only.
 */
function segmentsOf(lines: readonly HoldingLine[], blocks: readonly ReportedBlock[]): Segment[] {
  const delta = new Map<number, number>();
  const reported = new Map<number, number>();
  const bump = (day: number, by: number) => delta.set(day, (delta.get(day) ?? 0) + by);
  for (const line of lines) {
    bump(line.first, 1);
    bump(line.last + 1, -1);
  }
  for (const block of blocks) {
    reported.set(block.day, (reported.get(block.day) ?? 0) + block.count);
    bump(block.day, 0);
    bump(block.day + 1, 0);
  }
  const days = [...delta.keys()].sort((a, b) => a - b);
  const segments: Segment[] = [];
  let holding = 0;
  for (let i = 0; i < days.length - 1; i++) {
    holding += delta.get(days[i]) ?? 0;
    const perDay = holding + (reported.get(days[i]) ?? 0);
    if (perDay > 0) segments.push({ from: days[i], to: days[i + 1] - 1, perDay });
  }
  return segments;
}

const rowsIn = (segment: Segment): number => segment.perDay * (segment.to - segment.from + 1);

/**
 * The total and the rows from `offset` (at most `limit`) of the list the lines and blocks make. Costs
 * what the lines and blocks number plus the page's days, whatever the span of days they cover.
 */
export function pageHoldingDays(
  lines: readonly HoldingLine[],
  blocks: readonly ReportedBlock[],
  offset: number,
  limit: number,
): { total: number; slots: HoldingSlot[] } {
  const segments = segmentsOf(lines, blocks);
  const total = segments.reduce((sum, segment) => sum + rowsIn(segment), 0);
  const slots: HoldingSlot[] = [];
  if (offset >= total || limit <= 0) return { total, slots };
  const ordered = [...lines].sort(byListOrder);
  const blocksOn = new Map<number, ReportedBlock[]>();
  for (const block of blocks) blocksOn.set(block.day, [...(blocksOn.get(block.day) ?? []), block]);
  let before = 0;
  let index = 0;
  while (before + rowsIn(segments[index]) <= offset) before += rowsIn(segments[index++]);
  let skip = offset - before;
  let wanted = limit;
  for (; index < segments.length && wanted > 0; index++) {
    const segment = segments[index];
    // Every day of a segment has the same rows: by account (stable, so a line keeps its ticker order); a
    // block's account never has a line (a provider-fed account has no computed rows).
    const entries: Array<HoldingLine | ReportedBlock> = [
      ...ordered.filter((line) => line.first <= segment.from && segment.from <= line.last),
      ...(blocksOn.get(segment.from) ?? []),
    ].sort((a, b) => (a.accountId === b.accountId ? 0 : a.accountId < b.accountId ? -1 : 1));
    const day0 = segment.from + Math.floor(skip / segment.perDay);
    skip %= segment.perDay;
    for (let day = day0; day <= segment.to && wanted > 0; day++) {
      for (const entry of entries) {
        if (wanted === 0) break;
        const size = "count" in entry ? entry.count : 1;
        if (skip >= size) {
          skip -= size;
          continue;
        }
        if ("count" in entry) {
          const take = Math.min(size - skip, wanted);
          slots.push({ kind: "reported", accountId: entry.accountId, day, skip, take });
          wanted -= take;
        } else {
          slots.push({ kind: "position", accountId: entry.accountId, securityId: entry.securityId, day });
          wanted -= 1;
        }
        skip = 0;
      }
    }
  }
  return { total, slots };
}
