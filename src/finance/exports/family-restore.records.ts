import { isUuid } from "../../platform/common/ids";
import type {
  RestoredAccount,
  RestoredCategory,
  RestoredMerchant,
  RestoredSecurity,
  RestoredTag,
  RestoredTrade,
  RestoredTransaction,
  RestoredTransfer,
  RestoredValuation,
} from "./family-restore.repository";

/**
 * The checks of each all.ndjson record a restore reads: every field typed and bounded as the tables
 * hold it, so a hostile or damaged file is refused with the line that is wrong, never half written or
 * answered with a database error. Ids are the export's (remapped to new ones by the restore).
 */
export class RecordProblem extends Error {}

type Data = Record<string, unknown>;

const ACCOUNT_TYPES = [
  "depository",
  "investment",
  "crypto",
  "property",
  "vehicle",
  "other_asset",
  "credit_card",
  "loan",
  "other_liability",
];
const VALUATION_KINDS = ["opening_anchor", "current_anchor", "reconciliation"];
const TEXT_MAX = 10_000;
const DECIMAL = /^-?\d{1,15}(\.\d{1,10})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const COLOR = /^#[0-9a-fA-F]{6}$/;
const CURRENCY = /^[A-Z]{3}$/;

function text(data: Data, key: string, max = TEXT_MAX): string {
  const value = data[key];
  if (typeof value !== "string" || value.length === 0 || value.length > max || value.includes("\0"))
    throw new RecordProblem(`${key} must be text of 1 to ${max} characters`);
  return value;
}
function optionalText(data: Data, key: string, max = TEXT_MAX): string | null {
  return data[key] === null || data[key] === undefined ? null : text(data, key, max);
}
function matching(data: Data, key: string, pattern: RegExp, what: string): string {
  const value = data[key];
  if (typeof value !== "string" || !pattern.test(value)) throw new RecordProblem(`${key} must be ${what}`);
  return value;
}
function oneOf(data: Data, key: string, values: string[]): string {
  const value = data[key];
  if (typeof value !== "string" || !values.includes(value)) throw new RecordProblem(`${key} must be one of ${values.join(", ")}`);
  return value;
}
function id(data: Data, key: string): string {
  const value = data[key];
  if (!isUuid(value)) throw new RecordProblem(`${key} must be a UUID`);
  return value;
}
function optionalId(data: Data, key: string): string | null {
  return data[key] === null || data[key] === undefined ? null : id(data, key);
}
function date(data: Data, key: string): string {
  const value = matching(data, key, DATE, "a date (YYYY-MM-DD)");
  if (Number.isNaN(Date.parse(`${value}T00:00:00Z`)) || new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value)
    throw new RecordProblem(`${key} must be a date that exists`);
  return value;
}
const decimal = (data: Data, key: string) => matching(data, key, DECIMAL, "a decimal number as text");
const currency = (data: Data, key: string) => matching(data, key, CURRENCY, "an ISO 4217 code");
const color = (data: Data, key: string) => matching(data, key, COLOR, "a colour like #1a2b3c");
function optionalColor(data: Data, key: string): string | null {
  return data[key] === null || data[key] === undefined ? null : color(data, key);
}

export function accountOf(data: Data): RestoredAccount {
  const accountType = oneOf(data, "account_type", ACCOUNT_TYPES);
  return {
    id: id(data, "id"),
    name: text(data, "name", 255),
    account_type: accountType,
    classification: oneOf(data, "classification", ["asset", "liability"]),
    currency: currency(data, "currency"),
    balance: decimal(data, "balance"),
  };
}

export function categoryOf(data: Data): RestoredCategory {
  return {
    id: id(data, "id"),
    name: text(data, "name", 255),
    classification: oneOf(data, "classification", ["income", "expense"]),
    color: color(data, "color"),
    icon: text(data, "lucide_icon", 255),
    parent_id: optionalId(data, "parent_id"),
  };
}

export function tagOf(data: Data): RestoredTag {
  return { id: id(data, "id"), name: text(data, "name", 255), color: color(data, "color") };
}

export function merchantOf(data: Data): RestoredMerchant {
  return {
    id: id(data, "id"),
    name: text(data, "name", 255),
    color: optionalColor(data, "color"),
    logo_url: optionalText(data, "logo_url", 2048),
  };
}

export function valuationOf(data: Data): RestoredValuation {
  return {
    id: id(data, "id"),
    account_id: id(data, "account_id"),
    date: date(data, "date"),
    amount: decimal(data, "amount"),
    currency: currency(data, "currency"),
    kind: oneOf(data, "kind", VALUATION_KINDS),
    name: text(data, "name", 255),
    notes: optionalText(data, "notes"),
  };
}

export function transactionOf(data: Data): RestoredTransaction {
  const tagIds = data.tag_ids ?? [];
  if (!Array.isArray(tagIds) || tagIds.length > 100 || !tagIds.every(isUuid)) throw new RecordProblem("tag_ids must be a list of UUIDs");
  if (typeof (data.pending ?? false) !== "boolean") throw new RecordProblem("pending must be true or false");
  return {
    id: id(data, "id"),
    account_id: id(data, "account_id"),
    date: date(data, "date"),
    amount: decimal(data, "amount"),
    currency: currency(data, "currency"),
    name: text(data, "name", 255),
    notes: optionalText(data, "notes"),
    pending: (data.pending as boolean | undefined) ?? false,
    category_id: optionalId(data, "category_id"),
    merchant_id: optionalId(data, "merchant_id"),
    tag_ids: tagIds as string[],
    external_id: optionalText(data, "external_id", 1024),
    source: optionalText(data, "source", 255),
    provider_name: optionalText(data, "provider_name", 255),
  };
}

export function transferOf(data: Data): RestoredTransfer {
  return {
    id: id(data, "id"),
    outflow_transaction_id: id(data, "outflow_transaction_id"),
    inflow_transaction_id: id(data, "inflow_transaction_id"),
  };
}

export function tradeOf(data: Data): { trade: RestoredTrade; security: RestoredSecurity } {
  const security = data.security;
  if (typeof security !== "object" || security === null || Array.isArray(security)) throw new RecordProblem("security must be an object");
  const s = security as Data;
  const restored: RestoredSecurity = {
    key: text(s, "key", 1024),
    ticker: optionalText(s, "ticker", 64),
    name: optionalText(s, "name", 255),
    isin: optionalText(s, "isin", 64),
    figi: optionalText(s, "figi", 64),
    cusip: optionalText(s, "cusip", 64),
    currency: s.currency === null || s.currency === undefined ? null : currency(s, "currency"),
    kind: text(s, "kind", 64),
    exchange_operating_mic: optionalText(s, "exchange_operating_mic", 64),
    exchange_mic: optionalText(s, "exchange_mic", 64),
    exchange_acronym: optionalText(s, "exchange_acronym", 64),
    exchange_name: optionalText(s, "exchange_name", 255),
    country_code: optionalText(s, "country_code", 8),
  };
  const qty = decimal(data, "qty");
  const price = decimal(data, "price");
  const fee = decimal(data, "fee");
  if (/^-?0*(\.0*)?$/.test(qty)) throw new RecordProblem("qty must not be zero");
  if (price.startsWith("-") || /^0*(\.0*)?$/.test(price)) throw new RecordProblem("price must be positive");
  if (fee.startsWith("-")) throw new RecordProblem("fee must not be negative");
  return {
    security: restored,
    trade: {
      id: id(data, "id"),
      account_id: id(data, "account_id"),
      security_key: restored.key,
      date: date(data, "date"),
      qty,
      price,
      fee,
      amount: decimal(data, "amount"),
      currency: currency(data, "currency"),
      name: text(data, "name", 255),
      notes: optionalText(data, "notes"),
      investment_activity_label: optionalText(data, "investment_activity_label", 255),
      category_id: optionalId(data, "category_id"),
    },
  };
}
