import fc from "fast-check";
import { computePositions, type CalcTrade, type Position } from "../../src/finance/investments/holdings.calculator";

/**
 * A recompute from a later day (a write dated after the account's first trade) starts from each
 * security's newest position before that day and reads only the trades from that day on. Over random
 * trades, every position it computes equals what the whole recompute computes, and a sell beyond what
 * is held is found on the same day.
 */
const DAYS = 40;
const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10);
const SECURITIES = ["s-a", "s-b", "s-c"];

const trade = fc.record({
  security: fc.constantFrom(...SECURITIES),
  day: fc.integer({ min: 0, max: DAYS }),
  qty: fc.integer({ min: -30, max: 60 }).filter((qty) => qty !== 0),
  cents: fc.integer({ min: 1, max: 90_000 }),
});

/** Each security's newest position before `from`, as the repository reads it. */
function startFrom(positions: readonly Position[], from: string): Position[] {
  const newest = new Map<string, Position>();
  for (const row of positions) if (row.date < from) newest.set(row.securityId, row);
  return [...newest.values()];
}

const norm = (rows: readonly Position[], from: string) =>
  rows
    .filter((row) => row.date >= from)
    .map((row) => `${row.date} ${row.securityId} ${Number(row.quantity)} ${Number(row.costBasis)} ${Number(row.tradePrice)}`)
    .sort();

test("a recompute from a later day's positions computes the positions from it as the whole recompute does", () => {
  fc.assert(
    fc.property(fc.array(trade, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: DAYS }), (raw, cut) => {
      const trades: CalcTrade[] = raw
        .map((row) => ({ securityId: row.security, date: day(row.day), qty: String(row.qty), price: (row.cents / 100).toFixed(2) }))
        .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
      const from = day(cut);
      const whole = computePositions(trades);
      fc.pre(!whole.oversell || whole.oversell.date >= from);
      const part = computePositions(
        trades.filter((row) => row.date >= from),
        startFrom(whole.positions, from),
      );
      expect(part.oversell).toEqual(whole.oversell);
      if (!whole.oversell) expect(norm(part.positions, from)).toEqual(norm(whole.positions, from));
    }),
    { numRuns: 500 },
  );
});

test("average cost: a day's buys before its sells, a sell keeps the average, selling out zeroes the cost; one position per security per day, at its first trade's price", () => {
  const { positions, oversell } = computePositions([
    { securityId: "a", date: "2026-01-01", qty: "10", price: "10" },
    { securityId: "a", date: "2026-01-02", qty: "-4", price: "30" },
    { securityId: "a", date: "2026-01-02", qty: "2", price: "16" },
    { securityId: "b", date: "2026-01-02", qty: "3", price: "1.005" },
    { securityId: "a", date: "2026-01-03", qty: "3", price: "20" },
    { securityId: "a", date: "2026-01-03", qty: "-1", price: "22" },
    { securityId: "a", date: "2026-01-03", qty: "1", price: "21" },
    { securityId: "a", date: "2026-01-04", qty: "-11", price: "12" },
  ]);
  expect(oversell).toBeNull();
  expect(positions).toEqual([
    { securityId: "a", date: "2026-01-01", quantity: "10", costBasis: "100", tradePrice: "10" },
    // 10 + 2 held at a cost of 132, then 4 sold: 132 × 8 ÷ 12 = 88.
    // The day's first trade recorded (the sell) prices it, as upstream's portfolio cache keeps it.
    { securityId: "a", date: "2026-01-02", quantity: "8", costBasis: "88", tradePrice: "30" },
    { securityId: "b", date: "2026-01-02", quantity: "3", costBasis: "3.015", tradePrice: "1.005" },
    // 8 + 3 + 1 held at 88 + 60 + 21 = 169, then 1 sold: 169 × 11 ÷ 12 = 154.9167; priced by the first buy
    // recorded, not by the sell that is applied last.
    { securityId: "a", date: "2026-01-03", quantity: "11", costBasis: "154.9167", tradePrice: "20" },
    { securityId: "a", date: "2026-01-04", quantity: "0", costBasis: "0", tradePrice: "12" },
  ]);
  expect(computePositions([{ securityId: "a", date: "2026-01-01", qty: "-1", price: "5" }]).oversell).toEqual({
    securityId: "a",
    date: "2026-01-01",
    held: "0",
    sold: "1",
  });
});
