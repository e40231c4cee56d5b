import { isKnownCurrency } from "../money";
import {
  COLUMN_SEPARATORS,
  DATE_FORMATS,
  detectDateFormat,
  detectNumberFormat,
  NUMBER_FORMATS,
  parseDate,
  parseNumber,
  SIGNAGE_CONVENTIONS,
  storedAmount,
  type DateFormat,
  type NumberFormat,
  type SignageConvention,
} from "./import.formats";

/** The columns a transaction import reads, and the header each is found under unless the request names another. */
export const COLUMNS = ["date", "amount", "name", "currency", "category", "tags", "notes", "account"] as const;
export type Column = (typeof COLUMNS)[number];

/** What a request may say about its file (upstream's import configuration, snake_case on the wire). */
export type ImportSettingsInput = {
  type?: string | null;
  accountId?: string | null;
  dateColLabel?: string | null;
  amountColLabel?: string | null;
  nameColLabel?: string | null;
  currencyColLabel?: string | null;
  categoryColLabel?: string | null;
  tagsColLabel?: string | null;
  notesColLabel?: string | null;
  accountColLabel?: string | null;
  dateFormat?: string | null;
  numberFormat?: string | null;
  signageConvention?: string | null;
  colSep?: string | null;
  rowsToSkip?: number | string | null;
};

/** The configuration stored with an import: labels as given, formats as given or detected. */
export type ImportConfig = {
  labels: Record<Column, string | null>;
  dateFormat: DateFormat | null;
  numberFormat: NumberFormat | null;
  signageConvention: SignageConvention;
  columnSeparator: string | null;
  rowsToSkip: number;
};

/** A data row as written in the file and as read: its date, stored amount and currency, and its problems. */
export type StagedRow = Record<Column, string | null> & {
  rowNumber: number;
  problems: string[];
  entryDate: string | null;
  signedAmount: string | null;
  currencyCode: string | null;
};

const MAX_LABEL = 200;
const MAX_ROWS_TO_SKIP = 100;
/** How many data rows the formats are detected from. */
export const DETECTION_SAMPLE = 500;
/** The separator between tags in a tags column, as upstream's. */
const TAG_SEPARATOR = "|";

/** Problems with the configuration itself (each a message), and the configuration when there are none. */
export function importConfigOf(input: ImportSettingsInput): { config: ImportConfig; problems: string[] } {
  const problems: string[] = [];
  const labels = {} as Record<Column, string | null>;
  for (const column of COLUMNS) {
    const given = input[`${column}ColLabel` as keyof ImportSettingsInput];
    const label = typeof given === "string" ? given.trim() : "";
    if (label.length > MAX_LABEL) problems.push(`${column}_col_label is longer than ${MAX_LABEL} characters`);
    labels[column] = label || null;
  }
  const dateFormat = input.dateFormat?.trim() || null;
  if (dateFormat && !(DATE_FORMATS as readonly string[]).includes(dateFormat))
    problems.push(`date_format must be one of ${DATE_FORMATS.join(", ")}`);
  const numberFormat = input.numberFormat?.trim() || null;
  if (numberFormat && !(numberFormat in NUMBER_FORMATS))
    problems.push(`number_format must be one of ${Object.keys(NUMBER_FORMATS).join(", ")}`);
  const signage = input.signageConvention?.trim() || "inflows_positive";
  if (!(SIGNAGE_CONVENTIONS as readonly string[]).includes(signage))
    problems.push(`signage_convention must be one of ${SIGNAGE_CONVENTIONS.join(", ")}`);
  const colSep = input.colSep === "\\t" ? "\t" : input.colSep || null;
  if (colSep && !(COLUMN_SEPARATORS as readonly string[]).includes(colSep)) problems.push(`col_sep must be one of , ; | or a tab`);
  const skip = input.rowsToSkip === null || input.rowsToSkip === undefined || input.rowsToSkip === "" ? 0 : Number(input.rowsToSkip);
  if (!Number.isInteger(skip) || skip < 0 || skip > MAX_ROWS_TO_SKIP)
    problems.push(`rows_to_skip must be a whole number from 0 to ${MAX_ROWS_TO_SKIP}`);
  return {
    config: {
      labels,
      dateFormat: dateFormat as DateFormat | null,
      numberFormat: numberFormat as NumberFormat | null,
      signageConvention: signage as SignageConvention,
      columnSeparator: colSep,
      rowsToSkip: Number.isInteger(skip) ? skip : 0,
    },
    problems,
  };
}

/** Headers compared as upstream compares them: case, surrounding space, `*` and space/hyphen runs ignored. */
export function normalizedHeader(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/\*/g, "")
    .replace(/[\s-]+/g, "_");
}

export type ColumnPlan = {
  indexes: Partial<Record<Column, number>>;
  /** The headers the import needs, as labelled. */
  required: string[];
  missing: string[];
};

/** Where each column is in the file; date and amount are required, and the account column unless one account is given. */
export function columnPlan(headers: readonly string[], config: ImportConfig, oneAccount: boolean): ColumnPlan {
  const byName = new Map<string, number>();
  headers.forEach((header, index) => {
    const key = normalizedHeader(header);
    if (!byName.has(key)) byName.set(key, index);
  });
  const indexes: Partial<Record<Column, number>> = {};
  for (const column of COLUMNS) {
    const index = byName.get(normalizedHeader(config.labels[column] ?? column));
    if (index !== undefined) indexes[column] = index;
  }
  const requiredColumns: Column[] = oneAccount ? ["date", "amount"] : ["date", "amount", "account"];
  const required = requiredColumns.map((column) => config.labels[column] ?? column);
  const missing = requiredColumns.filter((column) => indexes[column] === undefined).map((column) => config.labels[column] ?? column);
  return { indexes, required, missing };
}

/** The formats for the rows: as configured, else detected from the first rows' dates and amounts. */
export function resolvedFormats(
  config: ImportConfig,
  plan: ColumnPlan,
  sample: readonly string[][],
): { dateFormat: DateFormat; numberFormat: NumberFormat; ambiguousDates: boolean } {
  const column = (name: Column) => sample.map((record) => (plan.indexes[name] === undefined ? "" : (record[plan.indexes[name]!] ?? "")));
  const detected = config.dateFormat ? { format: config.dateFormat, ambiguous: false } : detectDateFormat(column("date"));
  return {
    dateFormat: detected.format,
    numberFormat: config.numberFormat ?? detectNumberFormat(column("amount")),
    ambiguousDates: detected.ambiguous,
  };
}

/** One data row read under the plan and formats; what cannot be read is a problem of the row, in words. */
export function stageRow(
  record: readonly string[],
  rowNumber: number,
  plan: ColumnPlan,
  formats: { dateFormat: DateFormat; numberFormat: NumberFormat },
  signage: SignageConvention,
): StagedRow {
  const field = (column: Column): string | null => {
    const index = plan.indexes[column];
    const value = index === undefined ? undefined : record[index];
    return value === undefined || value.trim() === "" ? null : value.trim();
  };
  const row = Object.fromEntries(COLUMNS.map((column) => [column, field(column)])) as Record<Column, string | null>;
  const problems: string[] = [];
  let entryDate: string | null = null;
  if (!row.date) problems.push("Date can't be blank");
  else {
    entryDate = parseDate(row.date, formats.dateFormat);
    if (!entryDate)
      problems.push(`Date ${JSON.stringify(row.date)} is not a date in the ${formats.dateFormat} format (from 1970 to five years ahead)`);
  }
  let signedAmount: string | null = null;
  if (!row.amount) problems.push("Amount can't be blank");
  else {
    const parsed = parseNumber(row.amount, formats.numberFormat);
    if (parsed.ok) signedAmount = storedAmount(parsed.amount, signage);
    else problems.push(`Amount ${JSON.stringify(row.amount)} ${parsed.reason}`);
  }
  let currencyCode: string | null = null;
  if (row.currency) {
    currencyCode = row.currency.toUpperCase();
    if (!/^[A-Z]{3}$/.test(currencyCode) || !isKnownCurrency(currencyCode)) {
      problems.push(`Currency ${JSON.stringify(row.currency)} is not an ISO 4217 code`);
      currencyCode = null;
    }
  }
  return { ...row, rowNumber, problems, entryDate, signedAmount, currencyCode };
}

/** A tags field's tag names, as upstream splits them. */
export function tagNames(tags: string | null): string[] {
  return (tags ?? "")
    .split(TAG_SEPARATOR)
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "");
}
