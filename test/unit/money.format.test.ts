import { formatMoney, isKnownCurrency, minorUnitDigits, parseAmount, toMinorUnits } from "../../src/finance/money/money";

describe("money", () => {
  test.each([
    ["75.5", "USD", "$75.50", 7550],
    ["-2", "USD", "-$2.00", 200],
    ["7550", "JPY", "¥7,550", 7550],
    ["1.234", "KWD", "KWD\u00a01.234", 1234],
    ["0.005", "USD", "$0.01", 1],
    ["-0.005", "USD", "-$0.01", 1],
    ["999999999999.9999", "USD", "$1,000,000,000,000.00", 100000000000000],
  ])("%s %s formats as %s and is %i minor units", (amount, currency, formatted, minor) => {
    expect(formatMoney(amount, currency)).toBe(formatted);
    expect(toMinorUnits(amount, currency)).toBe(minor);
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
