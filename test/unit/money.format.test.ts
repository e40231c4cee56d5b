import Decimal from "decimal.js";
import {
  formatMoney,
  isKnownCurrency,
  minorUnitDigits,
  parseAmount,
  toMinorUnits,
  toSignedMinorUnits,
} from "../../src/finance/money/money";

describe("money", () => {
  test.each([
    ["75.5", "USD", "$75.50", 7550],
    ["-2", "USD", "-$2.00", 200],
    ["7550", "JPY", "¥7,550", 7550],
    ["1.234", "KWD", "KWD\u00a01.234", 1234],
    ["0.005", "USD", "$0.01", 1],
    ["-0.005", "USD", "-$0.01", 1],
    ["999999999999.9999", "USD", "$1,000,000,000,000.00", 100000000000000],
    ["-0.004", "USD", "$0.00", 0],
    ["-0.5", "JPY", "-¥1", 1],
    ["0999.995", "EUR", "€1,000.00", 100000],
    ["1e3", "USD", "$1,000.00", 100000],
    ["-7947573.8200", "USD", "-$7,947,573.82", 794757382],
  ])("%s %s formats as %s and is %i minor units", (amount, currency, formatted, minor) => {
    expect(formatMoney(amount, currency)).toBe(formatted);
    expect(toMinorUnits(amount, currency)).toBe(minor);
  });

  test("every currency's text is Intl's, and its minor units decimal.js's, for amounts of every shape", () => {
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    const amounts = Array.from({ length: 60 }, () => {
      const digits = String(next() % 10 ** (next() % 13)) + (next() % 2 ? `.${String(next()).slice(0, next() % 6)}` : "");
      return next() % 2 ? `-${digits}` : digits;
    });
    for (const currency of Intl.supportedValuesOf("currency")) {
      const places = minorUnitDigits(currency);
      const intl = new Intl.NumberFormat("en-US", { style: "currency", currency });
      for (const amount of amounts) {
        const rounded = new Decimal(amount).toDecimalPlaces(places, Decimal.ROUND_HALF_UP);
        expect([currency, amount, formatMoney(amount, currency)]).toEqual([
          currency,
          amount,
          intl.format(rounded.toFixed() as unknown as number),
        ]);
        const units = rounded.abs().times(new Decimal(10).pow(places)).toNumber();
        expect(toSignedMinorUnits(amount, currency)).toBe(rounded.isNegative() && units !== 0 ? -units : units);
      }
    }
  });

  test("minor unit digits follow the currency", () => {
    expect([minorUnitDigits("USD"), minorUnitDigits("JPY"), minorUnitDigits("KWD")]).toEqual([2, 0, 3]);
  });

  test("amounts are parsed exactly, never through a float", () => {
    const parsed = parseAmount("0.1");
    expect(parsed.ok && parsed.value.plus("0.2").toFixed()).toBe("0.3");
  });

  test.each([
    ["abc", "must be a number"],
    ["", "must be a number"],
    [Number.NaN, "must be a number"],
    [true, "must be a number"],
    ["1.23456", "must have at most 4 decimal places"],
    ["1000000000000", "must be less than 1,000,000,000,000"],
    ["1e13", "must be less than 1,000,000,000,000"],
  ])("%p is refused: %s", (raw, reason) => {
    expect(parseAmount(raw)).toEqual({ ok: false, reason });
  });

  test("currency codes are ISO 4217, upper case", () => {
    expect(isKnownCurrency("EUR")).toBe(true);
    expect(isKnownCurrency("eur")).toBe(false);
    expect(isKnownCurrency("XXY")).toBe(false);
  });
});
