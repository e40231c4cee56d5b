/** A trade as the calculator reads it: `qty` signed (negative sells). Decimal strings, as PostgreSQL prints numerics. */
export type CalcTrade = { securityId: string; date: string; qty: string; price: string };

/**
 * A security's position at the end of a day its quantity changed: the quantity held, the cost basis
 * and the day's trade price: its first trade's of the day in the order recorded, as upstream's
 * portfolio cache keeps the first of a day's equally ranked trade prices (it values the holding from
 * that day until a newer day with a price, positions.sql.ts `heldPrice`).
 */
export type Position = { securityId: string; date: string; quantity: string; costBasis: string; tradePrice: string };

/** The first day on which a security's quantity would fall below zero (a sell beyond what is held). */
export type Oversell = { securityId: string; date: string; held: string; sold: string };

/**
 * Exact fixed-point arithmetic on BigInt: quantities and prices have at most 10 decimal places
 * (numeric(28, 10)), a cost basis 4. Decimal.js did the same work on every trade at twenty times the
 * cost: a whole recompute of 20,000 trades spent most of its time here.
 */
const QTY_SCALE = 10n ** 10n;
const COST_SCALE = 10n ** 4n;

/** A decimal string as an integer count of 10^-10 (PostgreSQL's numeric text: digits, one point, a sign). */
function scaled(text: string): bigint {
  const point = text.indexOf(".");
  // numeric(28, 10) prints exactly ten decimals: one parse of the digits without the point.
  if (point >= 0 && text.length - point === 11) return BigInt(text.slice(0, point) + text.slice(point + 1));
  const negative = text.startsWith("-");
  const [whole, fraction = ""] = (negative || text.startsWith("+") ? text.slice(1) : text).split(".");
  const units = BigInt(whole || "0") * QTY_SCALE + BigInt((fraction + "0000000000").slice(0, 10));
  return negative ? -units : units;
}

/** An integer count of 10^-`places` as its shortest decimal string ("12.5", "3"). */
function decimal(value: bigint, places: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(places + 1, "0");
  const whole = digits.slice(0, digits.length - places);
  const fraction = digits.slice(digits.length - places).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** numerator ÷ denominator rounded half up (both non-negative, the denominator positive). */
function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/**
 * Positions from trades (docs/investments.md, "Holdings from trades"), upstream's forward calculation
 * by average cost in our terms. A day's trades of a security apply buys first, then sells: a buy adds
 * its quantity and quantity × price to the cost basis (rounded to 4 places); a sell takes its quantity
 * away and the cost basis falls in proportion (cost × remaining ÷ held, rounded to 4 places), so the
 * average cost stays. At zero the cost basis is zero. One position per security per day it is traded.
 *
 * `start` is each security's newest position before the first trade given (a recompute from a later
 * day reads only the trades from that day on); prices play no part: values are derived in SQL.
 */
export function computePositions(
  trades: readonly CalcTrade[],
  start: readonly Position[] = [],
): { positions: Position[]; oversell: Oversell | null } {
  const quantity = new Map<string, bigint>();
  // Cost bases in 10^-4.
  const cost = new Map<string, bigint>();
  for (const held of start) {
    quantity.set(held.securityId, scaled(held.quantity));
    cost.set(held.securityId, scaled(held.costBasis) / (QTY_SCALE / COST_SCALE));
  }
  // A security's trades of one day, in the order given (date, then creation); then buys before sells.
  const days = new Map<string, CalcTrade[]>();
  for (const trade of trades) {
    const key = `${trade.date}|${trade.securityId}`;
    const list = days.get(key);
    if (list) list.push(trade);
    else days.set(key, [trade]);
  }
  const sells = (trade: CalcTrade) => Number(trade.qty.trimStart().startsWith("-"));
  const positions: Position[] = [];
  for (const todays of days.values()) {
    const { securityId, date } = todays[0];
    const ordered = todays.length === 1 ? todays : [...todays].sort((a, b) => sells(a) - sells(b));
    let held = quantity.get(securityId) ?? 0n;
    let basis = cost.get(securityId) ?? 0n;
    for (const trade of ordered) {
      const qty = scaled(trade.qty);
      if (qty > 0n) {
        held += qty;
        // qty × price is in 10^-20; the cost basis keeps 4 places.
        basis += divideHalfUp(qty * scaled(trade.price), (QTY_SCALE * QTY_SCALE) / COST_SCALE);
        continue;
      }
      const remaining = held + qty;
      if (remaining < 0n) return { positions, oversell: { securityId, date, held: decimal(held, 10), sold: decimal(-qty, 10) } };
      basis = remaining === 0n ? 0n : divideHalfUp(basis * remaining, held);
      held = remaining;
    }
    quantity.set(securityId, held);
    cost.set(securityId, basis);
    positions.push({
      securityId,
      date,
      quantity: decimal(held, 10),
      costBasis: decimal(basis, 4),
      tradePrice: todays[0].price,
    });
  }
  return { positions, oversell: null };
}
