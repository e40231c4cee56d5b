import Decimal from "decimal.js";
import { parseAmount, toAmountString } from "../money";

/**
 * How a file writes dates and numbers, as upstream's imports name them: strftime date formats (ISO,
 * US, European, compact) and four number formats. Pure functions, shared by preflight and publish,
 * so that both read every value the same way.
 */
export const DATE_FORMATS = [
  "%Y-%m-%d",
  "%m/%d/%Y",
  "%d/%m/%Y",
  "%d.%m.%Y",
  "%d-%m-%Y",
  "%m-%d-%Y",
  "%Y/%m/%d",
  "%Y.%m.%d",
  "%Y%m%d",
  "%d/%m/%y",
] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

export const NUMBER_FORMATS = {
  "1,234.56": { decimal: ".", group: "," },
  "1.234,56": { decimal: ",", group: "." },
  "1 234,56": { decimal: ",", group: " " },
  "1,234": { decimal: "", group: "," },
} as const;
export type NumberFormat = keyof typeof NUMBER_FORMATS;

export const SIGNAGE_CONVENTIONS = ["inflows_positive", "inflows_negative"] as const;
export type SignageConvention = (typeof SIGNAGE_CONVENTIONS)[number];

export const COLUMN_SEPARATORS = [",", ";", "\t", "|"] as const;

/** Upstream's reasonable range: nothing before 1970, nothing more than five years ahead. */
const EARLIEST_YEAR = 1970;
const YEARS_AHEAD = 5;

function patternOf(format: DateFormat): { regex: RegExp; order: Array<"Y" | "y" | "m" | "d"> } {
  const order: Array<"Y" | "y" | "m" | "d"> = [];
  const source = format.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&").replace(/%([Yymd])/g, (_, part: "Y" | "y" | "m" | "d") => {
    order.push(part);
    return part === "Y" ? "(\\d{4})" : format.includes("%Y%m%d") ? "(\\d{2})" : "(\\d{1,2})";
  });
  return { regex: new RegExp(`^${source}$`), order };
}

const PATTERNS = new Map(DATE_FORMATS.map((format) => [format, patternOf(format)]));

/** The day a value writes in `format` (YYYY-MM-DD, before the range check); null when it is none. */
function readDay(value: string, format: DateFormat): string | null {
  const { regex, order } = PATTERNS.get(format)!;
  const match = regex.exec(value.trim());
  if (!match) return null;
  const parts: Record<string, number> = {};
  order.forEach((part, index) => (parts[part] = Number(match[index + 1])));
  const year = parts.Y ?? 2000 + parts.y;
  const { m: month, d: day } = parts;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

/**
 * The days read so far, by format and value: a bank file writes a few hundred distinct dates over
 * 100,000 rows, and reading each again was a fifth of a preflight's time. Bounded: emptied when full.
 */
const daysRead = new Map<string, string | null>();
const DAYS_REMEMBERED = 20_000;

/** The ISO date (YYYY-MM-DD) a value means in `format`; null when it is not such a date, or not a real day in range. */
export function parseDate(value: string, format: DateFormat, today?: Date): string | null {
  const key = `${format} ${value}`;
  let day = daysRead.get(key);
  if (day === undefined) {
    day = readDay(value, format);
    if (daysRead.size >= DAYS_REMEMBERED) daysRead.clear();
    daysRead.set(key, day);
  }
  if (day === null) return null;
  const year = Number(day.slice(0, 4));
  if (year < EARLIEST_YEAR || year > (today ?? new Date()).getUTCFullYear() + YEARS_AHEAD) return null;
  return day;
}

/**
 * The first format, in DATE_FORMATS' order, that reads every sample; ISO when none are given or none
 * fits. `ambiguous` when another format also reads them all (01/02/2026: January or February?).
 */
export function detectDateFormat(samples: readonly string[]): { format: DateFormat; ambiguous: boolean } {
  const values = samples.map((sample) => sample.trim()).filter((sample) => sample !== "");
  if (values.length === 0) return { format: "%Y-%m-%d", ambiguous: false };
  const fitting = DATE_FORMATS.filter((format) => values.every((value) => parseDate(value, format) !== null));
  if (fitting.length === 0) return { format: "%Y-%m-%d", ambiguous: false };
  const readings = new Set(fitting.map((format) => values.map((value) => parseDate(value, format)).join()));
  return { format: fitting[0], ambiguous: readings.size > 1 };
}

/**
 * The amount a value means in `format` as a canonical decimal string; a reason when it is not one.
 * Currency symbols and spaces around the number are ignored; a leading minus, a trailing minus or
 * parentheses mean a negative amount.
 */
export function parseNumber(value: string, format: NumberFormat): { ok: true; amount: string } | { ok: false; reason: string } {
  const read = readAmount(value, format);
  return read.ok ? { ok: true, amount: toAmountString(read.value) } : read;
}

/** parseNumber's reading as a Decimal: what the rows compute with, without writing it out and reading it back. */
export function readAmount(value: string, format: NumberFormat): { ok: true; value: Decimal } | { ok: false; reason: string } {
  const { decimal } = NUMBER_FORMATS[format];
  let text = value.trim().replace(/^[^\d\-+(.,]+|[^\d)\-.,]+$/g, "");
  let negative = false;
  if (/^\(.*\)$/.test(text)) {
    negative = true;
    text = text.slice(1, -1);
  }
  if (text.endsWith("-")) {
    negative = true;
    text = text.slice(0, -1);
  }
  if (text.startsWith("-")) {
    negative = !negative;
    text = text.slice(1);
  } else if (text.startsWith("+")) text = text.slice(1);
  text = text.replace(GROUP_PATTERNS[format], "");
  if (decimal === "") {
    if (!/^\d+$/.test(text)) return { ok: false, reason: `is not a whole number in the ${format} format` };
  } else {
    if (decimal !== "." && text.includes(".")) return { ok: false, reason: `is not a number in the ${format} format` };
    text = text.replace(decimal, ".");
  }
  const parsed = parseAmount(text);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  return { ok: true, value: negative ? parsed.value.negated() : parsed.value };
}

/** Each number format's group separator, as a pattern built once (a space group also takes the no-break spaces). */
const GROUP_PATTERNS = Object.fromEntries(
  Object.entries(NUMBER_FORMATS).map(([format, { group }]) => [
    format,
    group === " " ? /[\s\u00a0\u202f]/g : new RegExp(`\\${group}`, "g"),
  ]),
) as Record<NumberFormat, RegExp>;

/** "1.234,56" when the amounts write a decimal comma (a comma before the last 1–2 digits, no point after it), else "1,234.56". */
export function detectNumberFormat(samples: readonly string[]): NumberFormat {
  const values = samples.map((sample) => sample.trim()).filter((sample) => sample !== "");
  const comma = values.filter((value) => /,\d{1,2}\)?-?$/.test(value) && !/\.\d{1,2}\)?-?$/.test(value)).length;
  const point = values.filter((value) => /\.\d{1,2}\)?-?$/.test(value)).length;
  if (comma > point) return values.some((value) => /\d \d{3}/.test(value)) ? "1 234,56" : "1.234,56";
  return "1,234.56";
}

/** The stored amount (positive is money out) for a file's amount under its sign convention. */
export function storedAmount(fileAmount: Decimal.Value, signage: SignageConvention): string {
  const value = new Decimal(fileAmount);
  return toAmountString(signage === "inflows_positive" ? value.negated() : value);
}

/** The separator of the most fields in the first line, quotes respected; a comma when none appears. */
export function detectColumnSeparator(firstLine: string): string {
  const counts = new Map<string, number>(COLUMN_SEPARATORS.map((separator) => [separator, 0]));
  let quoted = false;
  for (const char of firstLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ",";
  for (const [separator, count] of counts) if (count > counts.get(best)!) best = separator;
  return best;
}
