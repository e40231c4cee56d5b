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
  const rounded = new Decimal(amount).toDecimalPlaces(minorUnitDigits(currency), Decimal.ROUND_HALF_UP);
  // Intl formats a numeric string exactly (no float conversion) since Intl.NumberFormat v3.
  return formatterFor(currency).format(rounded.toFixed() as unknown as number);
}

/** Absolute amount in minor units (cents), an exact integer thanks to MAX_ABS_AMOUNT. */
export function toMinorUnits(amount: string, currency: string): number {
  return new Decimal(amount)
    .abs()
    .times(minorUnitScale(minorUnitDigits(currency)))
    .toDecimalPlaces(0, Decimal.ROUND_HALF_UP)
    .toNumber();
}

/** `toMinorUnits` keeping the sign: a balance owed stays negative. */
export function toSignedMinorUnits(amount: string, currency: string): number {
  const units = toMinorUnits(amount, currency);
  return new Decimal(amount).isNegative() && units !== 0 ? -units : units;
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
