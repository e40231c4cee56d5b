import Decimal from "decimal.js";
import { minorUnitDigits, toAmountString } from "../money";

/** A rate in force: one unit of the account's currency is `rate` units of the family's, as entered for `date`. */
export type RateInForce = { currency: string; rate: string; date: string };

/** Each currency's rates into the family's, oldest first. */
export type RateBook = Map<string, Array<{ date: string; rate: string }>>;

/** The newest rate of `currency` dated on or before `date`, or null: a rate is never used before its day. */
export function rateOn(book: RateBook, currency: string, date: string): RateInForce | null {
  const rates = book.get(currency);
  if (!rates || rates.length === 0 || rates[0].date > date) return null;
  let low = 0;
  let high = rates.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (rates[middle].date <= date) low = middle;
    else high = middle - 1;
  }
  return { currency, rate: rates[low].rate, date: rates[low].date };
}

/** An amount held in one currency, on the asset or the liability side (liabilities positive, as owed). */
export type Holding = { currency: string; classification: string; balance: string };

export type ConvertedTotals<T extends Holding> = {
  currency: string;
  assets: string;
  liabilities: string;
  netWorth: string;
  /** The currencies converted into the family's, with the rate used. */
  conversions: RateInForce[];
  /** What had no rate: left out of the totals above, never added as if it were the family's currency. */
  unconverted: T[];
};

/**
 * The family's totals in its currency: its own currency's amounts as they are, another currency's
 * multiplied by the rate in force, and anything without a rate left out and returned as such. Converted
 * totals are exact until the end, then rounded half away from zero to the currency's minor unit.
 */
export function convertTotals<T extends Holding>(
  currency: string,
  holdings: readonly T[],
  rateFor: (currency: string) => RateInForce | null,
): ConvertedTotals<T> {
  let assets = new Decimal(0);
  let liabilities = new Decimal(0);
  const conversions = new Map<string, RateInForce>();
  const unconverted: T[] = [];
  for (const holding of holdings) {
    let amount = new Decimal(holding.balance);
    if (holding.currency !== currency) {
      const rate = conversions.get(holding.currency) ?? rateFor(holding.currency);
      if (!rate) {
        unconverted.push(holding);
        continue;
      }
      conversions.set(holding.currency, rate);
      amount = amount.times(rate.rate);
    }
    if (holding.classification === "liability") liabilities = liabilities.plus(amount);
    else assets = assets.plus(amount);
  }
  if (conversions.size > 0) {
    const digits = minorUnitDigits(currency);
    assets = assets.toDecimalPlaces(digits, Decimal.ROUND_HALF_UP);
    liabilities = liabilities.toDecimalPlaces(digits, Decimal.ROUND_HALF_UP);
  }
  return {
    currency,
    assets: toAmountString(assets),
    liabilities: toAmountString(liabilities),
    netWorth: toAmountString(assets.minus(liabilities)),
    conversions: [...conversions.values()].sort((a, b) => a.currency.localeCompare(b.currency)),
    unconverted,
  };
}

/** One point of net worth in one currency, as the ledger totals it per currency. */
export type CurrencyPoint = { date: string; currency: string; assets: string; liabilities: string };

export type ConvertedPoint = {
  date: string;
  currency: string;
  assets: string;
  liabilities: string;
  netWorth: string;
  /** The currencies whose balances this point totals: its own and those converted into it. */
  includedCurrencies: string[];
  /** On the family's currency's point: the currencies of that day without a rate, each its own point. */
  unconvertedCurrencies: string[];
};

/**
 * A per-currency series turned into the family's: on each day, every currency with a rate in force
 * that day is converted into the family's point; the others stay points of their own, named on it.
 */
export function convertSeries(currency: string, points: readonly CurrencyPoint[], book: RateBook): ConvertedPoint[] {
  const byDate = new Map<string, CurrencyPoint[]>();
  for (const point of points) {
    const day = byDate.get(point.date);
    if (day) day.push(point);
    else byDate.set(point.date, [point]);
  }
  const result: ConvertedPoint[] = [];
  for (const [date, day] of [...byDate.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const holdings = day.flatMap((point) => [
      { currency: point.currency, classification: "asset", balance: point.assets },
      { currency: point.currency, classification: "liability", balance: point.liabilities },
    ]);
    const totals = convertTotals(currency, holdings, (other) => rateOn(book, other, date));
    const left = [...new Set(totals.unconverted.map((holding) => holding.currency))].sort();
    const own = day.some((point) => point.currency === currency) ? [currency] : [];
    result.push({
      date,
      currency,
      assets: totals.assets,
      liabilities: totals.liabilities,
      netWorth: totals.netWorth,
      includedCurrencies: [...own, ...totals.conversions.map((rate) => rate.currency)],
      unconvertedCurrencies: left,
    });
    for (const point of day.filter((candidate) => left.includes(candidate.currency)))
      result.push({
        date,
        currency: point.currency,
        assets: toAmountString(point.assets),
        liabilities: toAmountString(point.liabilities),
        netWorth: toAmountString(new Decimal(point.assets).minus(point.liabilities)),
        includedCurrencies: [point.currency],
        unconvertedCurrencies: [],
      });
  }
  return result;
}

/** Rates as the repository lists them (ordered by currency, then date) into a book. */
export function rateBook(rows: ReadonlyArray<{ fromCurrency: string; date: string; rate: string }>): RateBook {
  const book: RateBook = new Map();
  for (const row of rows) {
    const currency = row.fromCurrency.trim();
    const rates = book.get(currency);
    if (rates) rates.push({ date: row.date, rate: row.rate });
    else book.set(currency, [{ date: row.date, rate: row.rate }]);
  }
  for (const rates of book.values()) rates.sort((a, b) => a.date.localeCompare(b.date));
  return book;
}
