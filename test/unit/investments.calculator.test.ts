import fc from "fast-check";
import { computeHoldings, type CalcPrice, type CalcStart, type CalcTrade } from "../../src/finance/investments/holdings.calculator";

/**
 * A recompute from a later day (a write dated after the account's first trade) starts from the stored
 * snapshot of the last day before it, and reads only the trades from that day on and the prices from
 * that day on with each security's newest one before it. Over random trades and prices, every day it
 * computes equals what the whole recompute computes for that day, and a sell beyond what is held is
 * found on the same day.
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
const price = fc.record({
  security: fc.constantFrom(...SECURITIES),
  day: fc.integer({ min: -5, max: DAYS }),
  cents: fc.integer({ min: 1, max: 90_000 }),
});

/** What the repository reads for a recompute from `from`, given the whole recompute's rows as the stored snapshots. */
function startFrom(trades: CalcTrade[], prices: CalcPrice[], from: string) {
  const whole = computeHoldings(trades, prices);
  const before = whole.holdings.filter((row) => row.date < from);
  const first = trades.map((row) => row.date).sort()[0];
  const last = before
    .map((row) => row.date)
    .sort()
    .at(-1);
  if (!last || first >= from) return null;
  const start: CalcStart = {
    from,
    firstTradeDay: first,
    traded: [...new Set(trades.map((row) => row.securityId))],
    held: before
      .filter((row) => row.date === last && Number(row.quantity) !== 0)
      .map((row) => ({ securityId: row.securityId, quantity: row.quantity, costBasis: row.costBasis, price: row.price })),
  };
  const seeds = new Map<string, CalcPrice>();
  for (const row of prices) if (row.date < from && (seeds.get(row.securityId)?.date ?? "") < row.date) seeds.set(row.securityId, row);
  return {
    trades: trades.filter((row) => row.date >= from),
    prices: [...seeds.values(), ...prices.filter((row) => row.date >= from)],
    start,
  };
}

test("a recompute from a later day's snapshot computes the days from it as the whole recompute does", () => {
  fc.assert(
    fc.property(
      fc.array(trade, { minLength: 1, maxLength: 25 }),
      fc.array(price, { maxLength: 20 }),
      fc.integer({ min: 1, max: DAYS }),
      (raw, rawPrices, cut) => {
        const trades = raw
          .map((row) => ({ securityId: row.security, date: day(row.day), qty: String(row.qty), price: (row.cents / 100).toFixed(2) }))
          .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
        const seen = new Set<string>();
        const prices = rawPrices
          .filter((row) => !seen.has(`${row.security} ${row.day}`) && seen.add(`${row.security} ${row.day}`))
          .map((row) => ({ securityId: row.security, date: day(row.day), price: (row.cents / 100).toFixed(2) }))
          .sort((a, b) => (a.date < b.date ? -1 : 1));
        const from = day(cut);
        const whole = computeHoldings(trades, prices);
        const later = startFrom(trades, prices, from);
        fc.pre(later !== null && (!whole.oversell || whole.oversell.date >= from));
        const part = computeHoldings(later!.trades, later!.prices, later!.start);
        expect(part.oversell).toEqual(whole.oversell);
        const norm = (rows: typeof whole.holdings) =>
          rows
            .filter((row) => row.date >= from)
            .map(
              (row) =>
                `${row.date} ${row.securityId} ${Number(row.quantity)} ${Number(row.price)} ${Number(row.value)} ${Number(row.costBasis)}`,
            );
        expect(norm(part.holdings)).toEqual(norm(whole.holdings));
      },
    ),
    { numRuns: 500 },
  );
});
