import DecimalBase from "decimal.js";

// Products and quotients exact enough that only the documented roundings (4 places) ever apply.
const Decimal = DecimalBase.clone({ precision: 60 });
type Decimal = InstanceType<typeof Decimal>;

/** A trade as the calculator reads it: `qty` signed (negative sells). */
export type CalcTrade = { securityId: string; date: string; qty: string; price: string };
/** A security's price on a day. */
export type CalcPrice = { securityId: string; date: string; price: string };

/** A computed holding of one security at the end of a day. */
export type ComputedHolding = {
  securityId: string;
  date: string;
  quantity: string;
  price: string;
  value: string;
  costBasis: string;
};

/**
 * Where a recompute from a later day starts (the trades and prices given are then those from `from` on,
 * with each security's newest price before it): the account's first trade day, every security it has
 * traded, and its stored snapshot of the last day before `from`, which holds every trade before it.
 */
export type CalcStart = {
  from: string;
  firstTradeDay: string;
  traded: readonly string[];
  held: ReadonlyArray<{ securityId: string; quantity: string; costBasis: string; price: string }>;
};

/** The first day on which a security's quantity would fall below zero (a sell beyond what is held). */
export type Oversell = { securityId: string; date: string; held: string; sold: string };

const SCALE = 4;

/**
 * Holdings from trades (docs/investments.md, "Holdings from trades"), upstream's forward calculation
 * in our terms. A day's trades of a security apply buys first, then sells: a buy adds its quantity
 * and quantity × price to the cost basis; a sell takes its quantity away and the cost basis falls in
 * proportion (average cost: cost × remaining ÷ held, rounded to 4 places), so the average cost stays.
 * At zero the cost basis is zero. A snapshot of every held security is emitted on each day a trade
 * happens or a price of a traded security is known (from the first trade on); a security sold out
 * that day appears once with quantity 0, so the day's sum is the account's holdings value. The price
 * of a day is the newest price on or before it, or, without one, the newest trade price; value =
 * quantity × price rounded to 4 places.
 */
export function computeHoldings(
  trades: readonly CalcTrade[],
  prices: readonly CalcPrice[],
  start: CalcStart | null = null,
): { holdings: ComputedHolding[]; oversell: Oversell | null } {
  if (trades.length === 0 && !start) return { holdings: [], oversell: null };
  const byDay = new Map<string, CalcTrade[]>();
  for (const trade of trades) {
    const list = byDay.get(trade.date) ?? [];
    list.push(trade);
    byDay.set(trade.date, list);
  }
  const first = start?.firstTradeDay ?? [...byDay.keys()].sort()[0];
  // Days before this one are known already (the start's snapshot): their prices only seed the carried ones.
  const begin = start && start.from > first ? start.from : first;
  const traded = new Set(start?.traded ?? trades.map((trade) => trade.securityId));
  const priceDays = new Map<string, Array<{ securityId: string; price: string }>>();
  for (const price of prices) {
    if (!traded.has(price.securityId) || price.date < begin) continue;
    const list = priceDays.get(price.date) ?? [];
    list.push(price);
    priceDays.set(price.date, list);
  }
  // The newest known price of each security before the first day computed seeds the carried prices.
  const marketPrice = new Map<string, string>();
  const seed = new Map<string, string>();
  for (const price of prices)
    if (traded.has(price.securityId) && price.date < begin && (seed.get(price.securityId) ?? "") < price.date) {
      seed.set(price.securityId, price.date);
      marketPrice.set(price.securityId, price.price);
    }
  const tradePrice = new Map<string, string>();
  const quantity = new Map<string, Decimal>();
  const cost = new Map<string, Decimal>();
  // A later start carries the snapshot's state: its price stands in for the newest trade price.
  for (const held of start?.held ?? []) {
    quantity.set(held.securityId, new Decimal(held.quantity));
    cost.set(held.securityId, new Decimal(held.costBasis));
    tradePrice.set(held.securityId, held.price);
  }
  const holdings: ComputedHolding[] = [];
  const days = [...new Set([...byDay.keys(), ...priceDays.keys()])].sort();
  for (const day of days) {
    for (const price of priceDays.get(day) ?? []) marketPrice.set(price.securityId, price.price);
    const todays = byDay.get(day) ?? [];
    const ordered = [...todays].sort((a, b) => Number(new Decimal(b.qty).isPositive()) - Number(new Decimal(a.qty).isPositive()));
    const touched = new Set<string>();
    for (const trade of ordered) {
      const qty = new Decimal(trade.qty);
      const held = quantity.get(trade.securityId) ?? new Decimal(0);
      const basis = cost.get(trade.securityId) ?? new Decimal(0);
      touched.add(trade.securityId);
      tradePrice.set(trade.securityId, trade.price);
      if (qty.isPositive()) {
        quantity.set(trade.securityId, held.plus(qty));
        cost.set(trade.securityId, basis.plus(qty.times(trade.price)).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_UP));
        continue;
      }
      const remaining = held.plus(qty);
      if (remaining.isNegative())
        return { holdings, oversell: { securityId: trade.securityId, date: day, held: held.toFixed(), sold: qty.negated().toFixed() } };
      quantity.set(trade.securityId, remaining);
      cost.set(
        trade.securityId,
        remaining.isZero() ? new Decimal(0) : basis.times(remaining).dividedBy(held).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_UP),
      );
    }
    for (const [securityId, held] of [...quantity].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (held.isZero() && !touched.has(securityId)) continue;
      const price = marketPrice.get(securityId) ?? tradePrice.get(securityId)!;
      holdings.push({
        securityId,
        date: day,
        quantity: held.toFixed(),
        price,
        value: held.times(price).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_UP).toFixed(),
        costBasis: cost.get(securityId)!.toFixed(),
      });
    }
  }
  return { holdings, oversell: null };
}
