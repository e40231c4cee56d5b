import fc from "fast-check";
import { pageHoldingDays, type HoldingLine, type HoldingSlot, type ReportedBlock } from "../../src/finance/investments/holding-days";

/**
 * GET /holdings' pages are worked out from intervals (a manual account's security held from one day
 * to another) and reported blocks (a provider account's rows of a day), never a row per day. Over random
 * lines and blocks of several accounts of both kinds, every page equals the same slice of the list
 * written out row by row (every day, oldest first as upstream serves it; accounts by id; a line by
 * ticker then security; a block's rows in order), and the total is that list's length.
 */
const ACCOUNTS = ["1a", "2b", "3c", "4d"];

const line = fc.record({
  account: fc.constantFrom(0, 1),
  security: fc.constantFrom("s1", "s2", "s3", "s4"),
  ticker: fc.constantFrom("AAA", "BBB", "ZZ"),
  first: fc.integer({ min: 0, max: 60 }),
  length: fc.integer({ min: 0, max: 30 }),
});
const block = fc.record({ account: fc.constantFrom(2, 3), day: fc.integer({ min: -5, max: 70 }), count: fc.integer({ min: 1, max: 6 }) });

/** The list the slow way: one entry per row, in the list's order. */
function everyRow(lines: readonly HoldingLine[], blocks: readonly ReportedBlock[]): string[] {
  const rows: Array<{ day: number; account: string; key: string; text: string }> = [];
  for (const held of lines)
    for (let day = held.first; day <= held.last; day++)
      rows.push({
        day,
        account: held.accountId,
        key: `${held.ticker}|${held.securityId}`,
        text: `${day} ${held.accountId} ${held.securityId}`,
      });
  for (const reported of blocks)
    for (let n = 0; n < reported.count; n++)
      rows.push({
        day: reported.day,
        account: reported.accountId,
        key: String(n).padStart(3, "0"),
        text: `${reported.day} ${reported.accountId} #${n}`,
      });
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return rows.sort((a, b) => a.day - b.day || compare(a.account, b.account) || compare(a.key, b.key)).map((row) => row.text);
}

const rowsOf = (slots: readonly HoldingSlot[]) =>
  slots.flatMap((slot) =>
    slot.kind === "position"
      ? [`${slot.day} ${slot.accountId} ${slot.securityId}`]
      : Array.from({ length: slot.take }, (_, n) => `${slot.day} ${slot.accountId} #${slot.skip + n}`),
  );

test("every page of lines and reported blocks equals the same slice of the list written out row by row", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(line, { maxLength: 8, selector: (held) => `${held.account}|${held.security}` }),
      fc.uniqueArray(block, { maxLength: 8, selector: (reported) => `${reported.account}|${reported.day}` }),
      fc.integer({ min: 1, max: 30 }),
      (drawnLines, drawnBlocks, perPage) => {
        const lines = drawnLines.map((held) => ({
          accountId: ACCOUNTS[held.account],
          securityId: held.security,
          ticker: held.ticker,
          first: held.first,
          last: held.first + held.length,
        }));
        const blocks = drawnBlocks.map((reported) => ({ accountId: ACCOUNTS[reported.account], day: reported.day, count: reported.count }));
        const list = everyRow(lines, blocks);
        for (let offset = 0; offset <= list.length; offset += perPage) {
          const { total, slots } = pageHoldingDays(lines, blocks, offset, perPage);
          expect(total).toBe(list.length);
          expect(rowsOf(slots)).toEqual(list.slice(offset, offset + perPage));
        }
      },
    ),
    { numRuns: 300 },
  );
});

test("the first page of ten years of 200 securities holds the oldest rows, the last page the newest", () => {
  const lines = Array.from({ length: 200 }, (_, n) => ({
    accountId: "a",
    securityId: `s${String(n).padStart(3, "0")}`,
    ticker: `T${String(n).padStart(3, "0")}`,
    first: n * 18,
    last: 3650,
  }));
  const total = lines.reduce((sum, held) => sum + held.last - held.first + 1, 0);
  // The oldest rows: the first security's first three days, alone in the list then.
  const first = pageHoldingDays(lines, [], 0, 3);
  expect(first.total).toBe(total);
  expect(first.slots).toEqual([0, 1, 2].map((day) => ({ kind: "position", accountId: "a", securityId: "s000", day })));
  // The newest: the last day's rows of the last three securities by ticker.
  const last = pageHoldingDays(lines, [], total - 3, 25);
  expect(last.total).toBe(total);
  expect(last.slots).toEqual(["s197", "s198", "s199"].map((securityId) => ({ kind: "position", accountId: "a", securityId, day: 3650 })));
});
