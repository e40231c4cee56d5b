import DecimalBase from "decimal.js";
import { ACCOUNT_TYPES, type AccountKind as AccountType } from "../accounts";
import { MERCHANT_NAME_MAX } from "../merchants";
import { isKnownCurrency, toAmountString } from "../money";
import {
  COLUMN_SEPARATORS,
  DATE_FORMATS,
  detectDateFormat,
  detectNumberFormat,
  NUMBER_FORMATS,
  parseDate,
  readAmount,
  SIGNAGE_CONVENTIONS,
  storedAmount,
  type DateFormat,
  type NumberFormat,
  type SignageConvention,
} from "./import.formats";

const Decimal = DecimalBase.clone({ precision: 60 });

/** The import types served, as upstream names them. */
export const IMPORT_TYPES = ["TransactionImport", "AccountImport", "TradeImport"] as const;
export type ImportKind = (typeof IMPORT_TYPES)[number];

/** Every column an import may read; each type reads some of them (TYPE_COLUMNS). */
export const COLUMNS = [
  "date",
  "amount",
  "name",
  "currency",
  "category",
  "tags",
  "notes",
  "account",
  "qty",
  "ticker",
  "price",
  "entityType",
  "exchangeOperatingMic",
  "merchant",
] as const;
export type Column = (typeof COLUMNS)[number];

/** A column's name on the wire (its `<name>_col_label` setting) and the headers it is found under by default, as upstream's. */
const COLUMN_NAMES: Record<Column, { wire: string; headers: string[] }> = {
  date: { wire: "date", headers: ["date", "balance_date"] },
  amount: { wire: "amount", headers: ["amount", "balance"] },
  name: { wire: "name", headers: ["name"] },
  currency: { wire: "currency", headers: ["currency"] },
  category: { wire: "category", headers: ["category"] },
  tags: { wire: "tags", headers: ["tags"] },
  notes: { wire: "notes", headers: ["notes"] },
  account: { wire: "account", headers: ["account", "account_name"] },
  qty: { wire: "qty", headers: ["qty", "quantity"] },
  ticker: { wire: "ticker", headers: ["ticker"] },
  price: { wire: "price", headers: ["price"] },
  entityType: { wire: "entity_type", headers: ["entity_type", "account_type", "type"] },
  exchangeOperatingMic: { wire: "exchange_operating_mic", headers: ["exchange_operating_mic"] },
  // Ours: upstream's TransactionImport has no merchant column (its MerchantImport creates merchants alone).
  merchant: { wire: "merchant", headers: ["merchant"] },
};

/** What each type reads, and what it cannot do without (upstream's column_keys and required_column_keys). */
const TYPE_COLUMNS: Record<ImportKind, { columns: Column[]; required: Column[]; oneAccountOptional: boolean }> = {
  TransactionImport: {
    columns: ["date", "amount", "name", "currency", "category", "tags", "notes", "account", "merchant"],
    required: ["date", "amount"],
    oneAccountOptional: true,
  },
  // Upstream asks each account type in a mapping screen; here the file's column names it.
  AccountImport: {
    columns: ["entityType", "name", "amount", "currency", "date"],
    required: ["entityType", "name", "amount"],
    oneAccountOptional: false,
  },
  TradeImport: {
    columns: ["date", "ticker", "exchangeOperatingMic", "currency", "qty", "price", "name", "account"],
    required: ["date", "ticker", "qty", "price"],
    oneAccountOptional: true,
  },
};

/** Upstream's account types (Accountable::TYPES) and common bank words, each an account type of ours. */
const ACCOUNT_TYPE_WORDS: Record<string, AccountType> = {
  ...Object.fromEntries(ACCOUNT_TYPES.map((type) => [type.replace(/_/g, ""), type])),
  checking: "depository",
  savings: "depository",
  cash: "depository",
  brokerage: "investment",
  mortgage: "loan",
  creditcard: "credit_card",
};

/** An account import's rows at most (upstream's AccountImport#max_row_count). */
export const MAX_ACCOUNT_ROWS = 50;
const MAX_ACCOUNT_NAME = 120;
const TICKER_MAX = 32;
/** The largest amount stored (numeric(19, 4)) and the largest quantity or price (numeric(28, 10)). */
const AMOUNT_LIMIT = new Decimal("1e15");
const QUANTITY_LIMIT = new Decimal("1e18");
const QUANTITY_SCALE = 10;

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
  qtyColLabel?: string | null;
  tickerColLabel?: string | null;
  priceColLabel?: string | null;
  entityTypeColLabel?: string | null;
  exchangeOperatingMicColLabel?: string | null;
  merchantColLabel?: string | null;
  dateFormat?: string | null;
  numberFormat?: string | null;
  signageConvention?: string | null;
  colSep?: string | null;
  rowsToSkip?: number | string | null;
};

/** The configuration stored with an import: labels as given, formats as given or detected. */
export type ImportConfig = {
  /** Imports stored before account and trade imports have the first eight only (before merchants, no merchant): read the others as unset. */
  labels: Partial<Record<Column, string | null>>;
  dateFormat: DateFormat | null;
  numberFormat: NumberFormat | null;
  signageConvention: SignageConvention;
  columnSeparator: string | null;
  rowsToSkip: number;
};

/** A data row as written in the file and as read (date, stored amount, currency, quantity, price, account type), with its problems. */
export type StagedRow = Record<Column, string | null> & {
  rowNumber: number;
  problems: string[];
  entryDate: string | null;
  /** A transaction's stored amount, an account's balance, a trade's signed quantity × price. */
  signedAmount: string | null;
  currencyCode: string | null;
  qtyValue: string | null;
  priceValue: string | null;
  accountType: AccountType | null;
};

const MAX_LABEL = 200;
const MAX_ROWS_TO_SKIP = 100;
/** How many data rows the formats are detected from. */
export const DETECTION_SAMPLE = 500;
/** The separator between tags in a tags column, as upstream's. */
const TAG_SEPARATOR = "|";

/** The import type a request names: TransactionImport when it names none; null when it names one not served. */
export function importKindOf(type: string | null | undefined): ImportKind | null {
  const given = type?.trim() || "TransactionImport";
  return (IMPORT_TYPES as readonly string[]).includes(given) ? (given as ImportKind) : null;
}

/** Problems with the configuration itself (each a message), and the configuration when there are none. */
export function importConfigOf(input: ImportSettingsInput): { config: ImportConfig; problems: string[] } {
  const problems: string[] = [];
  const labels: Partial<Record<Column, string | null>> = {};
  for (const column of COLUMNS) {
    const given = input[`${column}ColLabel` as keyof ImportSettingsInput];
    const label = typeof given === "string" ? given.trim() : "";
    if (label.length > MAX_LABEL) problems.push(`${COLUMN_NAMES[column].wire}_col_label is longer than ${MAX_LABEL} characters`);
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
  kind: ImportKind;
  indexes: Partial<Record<Column, number>>;
  /** The headers the import needs, as labelled. */
  required: string[];
  missing: string[];
};

/**
 * Where each column of the type is in the file: under its label when the request gives one, else
 * under its usual headers. The type's required columns, and the account column unless one account is given.
 */
export function columnPlan(headers: readonly string[], config: ImportConfig, kind: ImportKind, oneAccount: boolean): ColumnPlan {
  const byName = new Map<string, number>();
  headers.forEach((header, index) => {
    const key = normalizedHeader(header);
    if (!byName.has(key)) byName.set(key, index);
  });
  const { columns, required: needed, oneAccountOptional } = TYPE_COLUMNS[kind];
  const labelOf = (column: Column) => config.labels[column] ?? COLUMN_NAMES[column].wire;
  const indexes: Partial<Record<Column, number>> = {};
  for (const column of columns) {
    const label = config.labels[column];
    const candidates = label ? [label] : COLUMN_NAMES[column].headers;
    const index = candidates.map((name) => byName.get(normalizedHeader(name))).find((found) => found !== undefined);
    if (index !== undefined) indexes[column] = index;
  }
  const requiredColumns: Column[] = oneAccountOptional && !oneAccount ? [...needed, "account"] : needed;
  const required = requiredColumns.map(labelOf);
  const missing = requiredColumns.filter((column) => indexes[column] === undefined).map(labelOf);
  return { kind, indexes, required, missing };
}

/** The columns a plan reads, each by its name on the wire with the header it was found under, in the type's order. */
export function columnsRead(plan: ColumnPlan, headers: readonly string[]): Record<string, string> {
  const read: Record<string, string> = {};
  for (const column of TYPE_COLUMNS[plan.kind].columns) {
    const index = plan.indexes[column];
    if (index !== undefined) read[COLUMN_NAMES[column].wire] = headers[index];
  }
  return read;
}

/** The formats for the rows: as configured, else detected from the first rows' dates and numbers. */
export function resolvedFormats(
  config: ImportConfig,
  plan: ColumnPlan,
  sample: readonly string[][],
): { dateFormat: DateFormat; numberFormat: NumberFormat; ambiguousDates: boolean } {
  const column = (name: Column) => sample.map((record) => (plan.indexes[name] === undefined ? "" : (record[plan.indexes[name]!] ?? "")));
  const detected = config.dateFormat ? { format: config.dateFormat, ambiguous: false } : detectDateFormat(column("date"));
  const numbers = plan.kind === "TradeImport" ? [...column("qty"), ...column("price")] : column("amount");
  return {
    dateFormat: detected.format,
    numberFormat: config.numberFormat ?? detectNumberFormat(numbers),
    ambiguousDates: detected.ambiguous,
  };
}

type Formats = { dateFormat: DateFormat; numberFormat: NumberFormat };

/** One data row read under the plan and formats; what cannot be read is a problem of the row, in words. */
export function stageRow(
  record: readonly string[],
  rowNumber: number,
  plan: ColumnPlan,
  formats: Formats,
  signage: SignageConvention,
): StagedRow {
  const field = (column: Column): string | null => {
    const index = plan.indexes[column];
    const value = index === undefined ? undefined : record[index];
    return value === undefined || value.trim() === "" ? null : value.trim();
  };
  // One literal, the same shape for every row (a row is made 100,000 times in a large file).
  const row: StagedRow = {
    date: field("date"),
    amount: field("amount"),
    name: field("name"),
    currency: field("currency"),
    category: field("category"),
    tags: field("tags"),
    notes: field("notes"),
    account: field("account"),
    qty: field("qty"),
    ticker: field("ticker"),
    price: field("price"),
    entityType: field("entityType"),
    exchangeOperatingMic: field("exchangeOperatingMic"),
    merchant: field("merchant"),
    rowNumber,
    problems: [],
    entryDate: null,
    signedAmount: null,
    currencyCode: null,
    qtyValue: null,
    priceValue: null,
    accountType: null,
  };
  if (row.currency) {
    const code = row.currency.toUpperCase();
    if (/^[A-Z]{3}$/.test(code) && isKnownCurrency(code)) row.currencyCode = code;
    else row.problems.push(`Currency ${JSON.stringify(row.currency)} is not an ISO 4217 code`);
  }
  if (plan.kind === "AccountImport") readAccountRow(row, formats);
  else if (plan.kind === "TradeImport") readTradeRow(row, formats, signage);
  else readTransactionRow(row, formats, signage);
  return row;
}

function readDate(row: StagedRow, formats: Formats, required: boolean): void {
  if (!row.date) {
    if (required) row.problems.push("Date can't be blank");
    return;
  }
  row.entryDate = parseDate(row.date, formats.dateFormat);
  if (!row.entryDate)
    row.problems.push(`Date ${JSON.stringify(row.date)} is not a date in the ${formats.dateFormat} format (from 1970 to five years ahead)`);
}

/** A number of the file in its number format, or null with the row's problem. */
function readNumber(row: StagedRow, label: string, value: string | null, formats: Formats): DecimalBase | null {
  if (!value) {
    row.problems.push(`${label} can't be blank`);
    return null;
  }
  const read = readAmount(value, formats.numberFormat);
  if (!read.ok) {
    row.problems.push(`${label} ${JSON.stringify(value)} ${read.reason}`);
    return null;
  }
  // In this module's precision (quantity × price is exact in it).
  return new Decimal(read.value);
}

function readTransactionRow(row: StagedRow, formats: Formats, signage: SignageConvention): void {
  readDate(row, formats, true);
  const amount = readNumber(row, "Amount", row.amount, formats);
  if (amount) row.signedAmount = storedAmount(amount, signage);
  // The merchant it names is created as POST /merchants would create it.
  if (row.merchant && row.merchant.length > MERCHANT_NAME_MAX)
    row.problems.push(`Merchant is too long (maximum is ${MERCHANT_NAME_MAX} characters)`);
}

/** An account: its type (named by the type column), name, opening balance as written, and the balance's day when given. */
function readAccountRow(row: StagedRow, formats: Formats): void {
  if (!row.entityType) row.problems.push("Account type can't be blank");
  else {
    row.accountType = ACCOUNT_TYPE_WORDS[row.entityType.toLowerCase().replace(/[\s_-]+/g, "")] ?? null;
    if (!row.accountType)
      row.problems.push(
        `Account type ${JSON.stringify(row.entityType)} is not one of ${ACCOUNT_TYPES.join(", ")} (or Checking, Savings, Credit Card)`,
      );
  }
  if (!row.name) row.problems.push("Name can't be blank");
  else if (row.name.length > MAX_ACCOUNT_NAME) row.problems.push(`Name is too long (maximum is ${MAX_ACCOUNT_NAME} characters)`);
  const balance = readNumber(row, "Balance", row.amount, formats);
  if (balance && balance.abs().greaterThanOrEqualTo(AMOUNT_LIMIT)) row.problems.push(`Balance ${JSON.stringify(row.amount)} is too large`);
  else if (balance) row.signedAmount = toAmountString(balance);
  readDate(row, formats, false);
}

/**
 * A trade: quantity signed by the signage convention (inflows_positive: a positive quantity is a buy,
 * as upstream reads it), a positive price, and amount = quantity × price rounded to 4 places.
 */
function readTradeRow(row: StagedRow, formats: Formats, signage: SignageConvention): void {
  readDate(row, formats, true);
  if (!row.ticker) row.problems.push("Ticker can't be blank");
  else if (row.ticker.length > TICKER_MAX || !/^[\p{L}\p{N}.\-:^=/]+$/u.test(row.ticker))
    row.problems.push(`Ticker ${JSON.stringify(row.ticker)} must be 1 to ${TICKER_MAX} letters, digits or . - : ^ = /`);
  if (row.exchangeOperatingMic && !/^[A-Za-z0-9]{4}$/.test(row.exchangeOperatingMic))
    row.problems.push(`Exchange ${JSON.stringify(row.exchangeOperatingMic)} must be a 4-character MIC (XNAS)`);
  const qty = readNumber(row, "Qty", row.qty, formats);
  const price = readNumber(row, "Price", row.price, formats);
  const exact = (value: DecimalBase) => value.decimalPlaces() <= QUANTITY_SCALE && value.abs().lessThan(QUANTITY_LIMIT);
  if (qty && (qty.isZero() || !exact(qty)))
    row.problems.push(`Qty ${JSON.stringify(row.qty)} must not be zero, with at most ${QUANTITY_SCALE} decimals`);
  if (price && (!price.isPositive() || price.isZero() || !exact(price)))
    row.problems.push(`Price ${JSON.stringify(row.price)} must be positive, with at most ${QUANTITY_SCALE} decimals`);
  if (row.problems.length > 0 || !qty || !price) return;
  const signed = signage === "inflows_positive" ? qty : qty.negated();
  const amount = signed.times(price).toDecimalPlaces(4, Decimal.ROUND_HALF_UP);
  if (amount.abs().greaterThanOrEqualTo(AMOUNT_LIMIT)) {
    row.problems.push("Qty × price is too large an amount");
    return;
  }
  row.qtyValue = signed.toFixed();
  row.priceValue = price.toFixed();
  row.signedAmount = toAmountString(amount);
  if (row.exchangeOperatingMic) row.exchangeOperatingMic = row.exchangeOperatingMic.toUpperCase();
}

/** A tags field's tag names, as upstream splits them. */
export function tagNames(tags: string | null): string[] {
  return (tags ?? "")
    .split(TAG_SEPARATOR)
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "");
}
