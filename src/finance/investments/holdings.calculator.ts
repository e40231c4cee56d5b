import DecimalBase from "decimal.js";

// Products and quotients exact enough that only the documented roundings (4 places) ever apply.
const Decimal = DecimalBase.clone({ precision: 60 });
type Decimal = InstanceType<typeof Decimal>;

/** A trade as the calculator reads it: `qty` signed (negative sells). */
export type CalcTrade = { securityId: string; date: string; qty: string; price: string };

/**
 * A security's position at the end of a day its quantity changed: the quantity held, the cost basis
 * and the newest trade price (what values the holding while the security has no price).
 */
export type Position = { securityId: string; date: string; quantity: string; costBasis: string; tradePrice: string };

/** The first day on which a security's quantity would fall below zero (a sell beyond what is held). */
export type Oversell = { securityId: string; date: string; held: string; sold: string };

const SCALE = 4;

/**
 * Positions from trades (docs/investments.md, "Holdings from trades"), upstream's forward calculation
 * by average cost in our terms. A day's trades of a security apply buys first, then sells: a buy adds
 * its quantity and quantity × price to the cost basis; a sell takes its quantity away and the cost
 * basis falls in proportion (cost × remaining ÷ held, rounded to 4 places), so the average cost stays.
 * At zero the cost basis is zero. One position per security per day it is traded.
 *
 * `start` is each security's newest position before the first trade given (a recompute from a later
 * day reads only the trades from that day on); prices play no part: values are derived in SQL.
 */
export function computePositions(
  trades: readonly CalcTrade[],
  start: readonly Position[] = [],
): { positions: Position[]; oversell: Oversell | null } {
  const quantity = new Map<string, Decimal>();
  const cost = new Map<string, Decimal>();
  for (const held of start) {
    quantity.set(held.securityId, new Decimal(held.quantity));
    cost.set(held.securityId, new Decimal(held.costBasis));
  }
  // A security's trades of one day, in the order given (date, then creation); then buys before sells.
  const days = new Map<string, CalcTrade[]>();
  for (const trade of trades) {
    const key = `${trade.date}|${trade.securityId}`;
    const list = days.get(key) ?? [];
    list.push(trade);
    days.set(key, list);
  }
  const positions: Position[] = [];
  for (const todays of days.values()) {
    const { securityId, date } = todays[0];
    const ordered = [...todays].sort((a, b) => Number(new Decimal(b.qty).isPositive()) - Number(new Decimal(a.qty).isPositive()));
    let held = quantity.get(securityId) ?? new Decimal(0);
    let basis = cost.get(securityId) ?? new Decimal(0);
    for (const trade of ordered) {
      const qty = new Decimal(trade.qty);
      if (qty.isPositive()) {
        held = held.plus(qty);
        basis = basis.plus(qty.times(trade.price)).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_UP);
        continue;
      }
      const remaining = held.plus(qty);
      if (remaining.isNegative()) return { positions, oversell: { securityId, date, held: held.toFixed(), sold: qty.negated().toFixed() } };
      basis = remaining.isZero() ? new Decimal(0) : basis.times(remaining).dividedBy(held).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_UP);
      held = remaining;
    }
    quantity.set(securityId, held);
    cost.set(securityId, basis);
    positions.push({
      securityId,
      date,
      quantity: held.toFixed(),
      costBasis: basis.toFixed(),
      tradePrice: ordered[ordered.length - 1].price,
    });
  }
  return { positions, oversell: null };
}
