import Decimal from "decimal.js";

/**
 * Money is stored as numeric(19,4) and travels as decimal strings. Arithmetic goes through decimal.js,
 * never JS floats. Amounts are bounded so that minor units stay exact JavaScript integers.
 */
export const MAX_ABS_AMOUNT = new Decimal("1000000000000");
const STORED_DECIMALS = 4;

export type AmountCheck = { ok: true; value: Decimal } | { ok: false; reason: string };

export function parseAmount(raw: unknown): AmountCheck {
  if (typeof raw !== "string" && typeof raw !== "number") return { ok: false, reason: "must be a number" };
  if (typeof raw === "number" && !Number.isFinite(raw)) return { ok: false, reason: "must be a number" };
  const text = typeof raw === "number" ? String(raw) : raw.trim();
  if (!/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text)) return { ok: false, reason: "must be a number" };
  const value = new Decimal(text);
  if (value.abs().gte(MAX_ABS_AMOUNT)) return { ok: false, reason: "must be less than 1,000,000,000,000" };
  if (value.decimalPlaces() > STORED_DECIMALS) {
    return { ok: false, reason: `must have at most ${STORED_DECIMALS} decimal places` };
  }
  return { ok: true, value };
}

/** Canonical text form used in the database and in GraphQL (no exponent, no trailing noise). */
export function toAmountString(value: Decimal.Value): string {
  return new Decimal(value).toFixed();
}

const currencyCodes = new Set(Intl.supportedValuesOf("currency"));

export function isKnownCurrency(code: string): boolean {
  return currencyCodes.has(code);
}

const formatters = new Map<string, Intl.NumberFormat>();

function formatterFor(currency: string): Intl.NumberFormat {
  let formatter = formatters.get(currency);
  if (!formatter) {
    formatter = new Intl.NumberFormat("en-US", { style: "currency", currency });
    formatters.set(currency, formatter);
  }
  return formatter;
}

const minorDigits = new Map<string, number>();

/** Digits after the decimal point in the currency's minor unit (USD 2, JPY 0, KWD 3). */
export function minorUnitDigits(currency: string): number {
  // resolvedOptions() builds a fresh object through ICU on every call; it dominated money formatting.
  let digits = minorDigits.get(currency);
  if (digits === undefined) {
    digits = formatterFor(currency).resolvedOptions().maximumFractionDigits ?? 2;
    minorDigits.set(currency, digits);
  }
  return digits;
}

/** "$75.50", "-$2.00", "¥7,550", "KWD 1.234": the currency's own precision, rounded half away from zero. */
export function formatMoney(amount: string, currency: string): string {
  const digits = minorUnitDigits(currency);
  const minor = roundToMinorUnits(amount, digits);
  if (minor) return writeMoney(patternFor(currency), minor, digits);
  const rounded = new Decimal(amount).toDecimalPlaces(digits, Decimal.ROUND_HALF_UP).toFixed();
  // Intl formats a numeric string exactly (no float conversion) since Intl.NumberFormat v3.
  return formatterFor(currency).format(rounded as unknown as number);
}

/** What Intl writes around an amount's digits in one currency: before and after them, by sign, and its separators. */
type MoneyPattern = { positive: [string, string]; negative: [string, string]; group: string; decimal: string };

const patterns = new Map<string, MoneyPattern>();

/**
 * The currency's pattern, read once from Intl's own parts of a sample amount. Writing the digits
 * into it gives Intl's text (checked equal on every currency Intl knows) for a fraction of the cost
 * of format(), which a page of balances called 1,500 times.
 */
function patternFor(currency: string): MoneyPattern {
  let pattern = patterns.get(currency);
  if (!pattern) {
    const formatter = formatterFor(currency);
    const parts = (sample: string) => formatter.formatToParts(sample as unknown as number);
    const around = (sample: string): [string, string] => {
      const all = parts(sample);
      const digits = all
        .map((part, index) => (part.type === "integer" || part.type === "fraction" ? index : -1))
        .filter((index) => index >= 0);
      const text = (from: number, to: number) =>
        all
          .slice(from, to)
          .map((part) => part.value)
          .join("");
      return [text(0, digits[0]), text(digits[digits.length - 1] + 1, all.length)];
    };
    const sample = parts("1234567.5");
    pattern = {
      positive: around("1234567.5"),
      negative: around("-1234567.5"),
      group: sample.find((part) => part.type === "group")?.value ?? "",
      decimal: sample.find((part) => part.type === "decimal")?.value ?? ".",
    };
    patterns.set(currency, pattern);
  }
  return pattern;
}

/** Rounded minor units written in the currency's pattern: digits grouped by thousands, as en-US groups them. */
function writeMoney(pattern: MoneyPattern, { negative, units }: { negative: boolean; units: string }, digits: number): string {
  const padded = units.padStart(digits + 1, "0");
  const whole = padded.slice(0, padded.length - digits);
  let grouped = whole.slice(0, ((whole.length - 1) % 3) + 1);
  for (let index = grouped.length; index < whole.length; index += 3) grouped += pattern.group + whole.slice(index, index + 3);
  const number = digits === 0 ? grouped : `${grouped}${pattern.decimal}${padded.slice(-digits)}`;
  const [before, after] = negative ? pattern.negative : pattern.positive;
  return before + number + after;
}

/** Absolute amount in minor units (cents), an exact integer thanks to MAX_ABS_AMOUNT. */
export function toMinorUnits(amount: string, currency: string): number {
  const digits = minorUnitDigits(currency);
  const minor = roundToMinorUnits(amount, digits);
  if (minor) return Number(minor.units);
  return new Decimal(amount).abs().times(minorUnitScale(digits)).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/** `toMinorUnits` keeping the sign: a balance owed stays negative. */
export function toSignedMinorUnits(amount: string, currency: string): number {
  const minor = roundToMinorUnits(amount, minorUnitDigits(currency));
  const units = minor ? Number(minor.units) : toMinorUnits(amount, currency);
  const negative = minor ? minor.negative : new Decimal(amount).isNegative();
  return negative && units !== 0 ? -units : units;
}

const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d*))?$/;

/**
 * A plain decimal string (what PostgreSQL and toAmountString write) rounded half away from zero to
 * `digits` places, as its sign (none for zero) and its absolute value in those minor units (a string of
 * digits, no leading zeros); null for any other form (an exponent, a "+"), which decimal.js rounds instead. Done
 * on the digits themselves: a page of balances formats thousands of figures, and parsing each into a
 * Decimal cost more than the page's SQL.
 */
function roundToMinorUnits(amount: string, digits: number): { negative: boolean; units: string } | null {
  const parts = PLAIN_DECIMAL.exec(amount);
  if (!parts) return null;
  const [, sign, whole, fraction = ""] = parts;
  const kept = whole + fraction.slice(0, digits).padEnd(digits, "0");
  const rounded = fraction.charCodeAt(digits) >= 53 /* "5" */ ? increment(kept) : kept;
  let start = 0;
  while (start < rounded.length - 1 && rounded[start] === "0") start++;
  const units = rounded.slice(start);
  // Rounded to zero, a negative amount loses its sign, as decimal.js writes -0 as "0".
  return { negative: sign === "-" && units !== "0", units };
}

/**
 * The sum of `sign × amount` over the terms, exactly, written as toAmountString writes a Decimal (no
 * trailing zeros, no sign on zero). Plain decimal strings (what PostgreSQL writes) are added as scaled
 * integers: a page of 100 balance rows derives 1,500 figures, and a Decimal for each input and each
 * step cost more than the page's SQL. Any other form goes through decimal.js.
 */
export function sumAmounts(terms: ReadonlyArray<readonly [amount: string, sign: number]>): string {
  let scale = 0;
  for (const [amount] of terms) {
    const parts = PLAIN_DECIMAL.exec(amount);
    if (!parts) return toAmountString(terms.reduce((sum, [value, sign]) => sum.plus(new Decimal(value).times(sign)), new Decimal(0)));
    scale = Math.max(scale, parts[3]?.length ?? 0);
  }
  let total = 0n;
  for (const [amount, sign] of terms) {
    if (sign === 0) continue;
    const [, negative, whole, fraction = ""] = PLAIN_DECIMAL.exec(amount)!;
    const units = BigInt(whole + fraction.padEnd(scale, "0"));
    total += (negative === "-") === sign < 0 ? units : -units;
  }
  const digits = (total < 0n ? -total : total).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, "");
  return `${total < 0n ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** A string of decimal digits plus one. */
function increment(number: string): string {
  let index = number.length - 1;
  while (index >= 0 && number[index] === "9") index--;
  if (index < 0) return `1${"0".repeat(number.length)}`;
  return number.slice(0, index) + String.fromCharCode(number.charCodeAt(index) + 1) + "0".repeat(number.length - index - 1);
}

/** 10^digits, built once per digit count (Decimal values are immutable, so sharing them is safe). */
const scales: Decimal[] = [];
function minorUnitScale(digits: number): Decimal {
  return (scales[digits] ??= new Decimal(10).pow(digits));
}

export function negate(amount: string): string {
  return new Decimal(amount).negated().toFixed();
}

export function absolute(amount: string): string {
  return new Decimal(amount).abs().toFixed();
}

/**
 * A decimal as upstream's Rails JSON writes one (BigDecimal#to_s, "F" format): no exponent and at
 * least one decimal place, so 10 is "10.0", -4 is "-4.0" and 1.5 stays "1.5".
 */
export function railsDecimal(value: Decimal.Value): string {
  const text = new Decimal(value).toFixed();
  return text.includes(".") ? text : `${text}.0`;
}
