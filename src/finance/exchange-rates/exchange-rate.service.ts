import Decimal from "decimal.js";
import type { Sequelize, Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import { diffChanges } from "../../audit/log";
import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import type { Actor } from "../../platform/security/actor";
import { isKnownCurrency } from "../money";
import { convertSeries, convertTotals, rateBook, rateOn, type ConvertedPoint, type CurrencyPoint, type Holding } from "./conversion";
import type { ExchangeRateRepository, ExchangeRateRow } from "./exchange-rate.repository";

export type ExchangeRateInput = { fromCurrency?: string | null; toCurrency?: string | null; date?: string | null; rate?: string | null };
export type ExchangeRateListFilter = {
  fromCurrency?: string | null;
  toCurrency?: string | null;
  startDate?: string | null;
  endDate?: string | null;
};

/** Digits a rate may have after the point, and the largest it may be (numeric(24, 12)). */
const RATE_DECIMALS = 12;
const MAX_RATE = new Decimal("1000000000000");

/**
 * Exchange rates a family enters, and the conversions of its totals into its currency. Nothing is
 * fetched: a currency without a rate on or before the day is not converted, and the totals say so.
 */
export class ExchangeRateService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly rates: ExchangeRateRepository,
    private readonly audit: AuditService,
  ) {}

  async get(actor: Actor, id: string): Promise<ExchangeRateRow> {
    const row = isUuid(id) ? await this.rates.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Exchange rate");
    return row;
  }

  async list(
    actor: Actor,
    filter: ExchangeRateListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: ExchangeRateRow[]; pagination: PageInfo }> {
    const problems = new ValidationErrors();
    const fromCurrency = filter.fromCurrency ? checkCurrency(problems, "From currency", filter.fromCurrency) : undefined;
    const toCurrency = filter.toCurrency ? checkCurrency(problems, "To currency", filter.toCurrency) : undefined;
    problems.throwIfAny();
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.rates.page(
      actor.familyId,
      { fromCurrency, toCurrency, startDate: filter.startDate ?? undefined, endDate: filter.endDate ?? undefined },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /** Sets the pair's rate for the day (a second rate for the same day replaces the first); `created` says which. */
  async set(actor: Actor, input: ExchangeRateInput): Promise<{ rate: ExchangeRateRow; created: boolean }> {
    const problems = new ValidationErrors();
    const from = requiredCurrency(problems, "From currency", input.fromCurrency);
    const to = requiredCurrency(problems, "To currency", input.toCurrency);
    if (!input.date) problems.add("Date is required");
    const rate = checkRate(problems, input.rate);
    if (from && to && from === to) problems.add("From currency and to currency must differ");
    problems.throwIfAny();
    return this.sequelize.transaction(async (transaction) => {
      const before = await this.rates.onDate(actor.familyId, from!, to!, input.date!, transaction);
      const id = await this.rates.upsert(actor.familyId, before?.id ?? newId(), from!, to!, input.date!, rate!, transaction);
      const after = (await this.rates.byId(actor.familyId, id, transaction))!;
      await this.record(actor, "exchange_rate.set", after, before, transaction);
      return { rate: after, created: before === null };
    });
  }

  async delete(actor: Actor, id: string): Promise<ExchangeRateRow> {
    const current = await this.get(actor, id);
    return this.sequelize.transaction(async (transaction) => {
      if (!(await this.rates.delete(actor.familyId, id, transaction))) throw new NotFoundError("Exchange rate");
      await this.record(actor, "exchange_rate.deleted", null, current, transaction);
      return current;
    });
  }

  /** The family's totals in its currency on `date` (default today) from its accounts' balances, converted where a rate is known. */
  async totals<T extends Holding>(familyId: string, holdings: readonly T[], date?: string) {
    const currency = await this.familyCurrency(familyId);
    const day = date ?? new Date().toISOString().slice(0, 10);
    const foreign = [...new Set(holdings.map((holding) => holding.currency.trim()).filter((code) => code !== currency))];
    const book = foreign.length ? rateBook(await this.rates.history(familyId, currency, foreign, day, day)) : new Map();
    return convertTotals(
      currency,
      holdings.map((holding) => ({ ...holding, currency: holding.currency.trim() })),
      (other) => rateOn(book, other, day),
    );
  }

  /** A per-currency net worth series in the family's currency, each day converted with the rates in force that day. */
  async series(familyId: string, points: readonly CurrencyPoint[]): Promise<ConvertedPoint[]> {
    const currency = await this.familyCurrency(familyId);
    const trimmed = points.map((point) => ({ ...point, currency: point.currency.trim() }));
    const foreign = [...new Set(trimmed.map((point) => point.currency).filter((code) => code !== currency))];
    if (trimmed.length === 0) return [];
    const dates = trimmed.map((point) => point.date).sort();
    const book = foreign.length
      ? rateBook(await this.rates.history(familyId, currency, foreign, dates[0], dates[dates.length - 1]))
      : new Map();
    return convertSeries(currency, trimmed, book);
  }

  private async familyCurrency(familyId: string): Promise<string> {
    const currency = await this.rates.familyCurrency(familyId);
    if (!currency) throw new NotFoundError("Family");
    return currency;
  }

  private async record(
    actor: Actor,
    type: "exchange_rate.set" | "exchange_rate.deleted",
    after: ExchangeRateRow | null,
    before: ExchangeRateRow | null,
    transaction: Transaction,
  ): Promise<void> {
    const shape = (row: ExchangeRateRow | null) =>
      row ? { from_currency: row.fromCurrency, to_currency: row.toCurrency, date: row.date, rate: new Decimal(row.rate).toFixed() } : {};
    const subject = (after ?? before)!;
    await this.audit.record(transaction, {
      type,
      user: { id: actor.userId, email: actor.email },
      action: after ? (before ? "update" : "create") : "delete",
      resource: { type: "exchange_rate", id: subject.id, label: `${subject.fromCurrency}→${subject.toCurrency} ${subject.date}` },
      changes: diffChanges(shape(before), shape(after), ["from_currency", "to_currency", "date", "rate"]),
    });
  }
}

function checkCurrency(problems: ValidationErrors, label: string, value: string): string {
  const code = value.trim().toUpperCase();
  if (!isKnownCurrency(code)) problems.add(`${label} is not a valid ISO 4217 code`);
  return code;
}

function checkRate(problems: ValidationErrors, raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined || String(raw).trim() === "") {
    problems.add("Rate is required");
    return null;
  }
  const text = String(raw).trim();
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text)) {
    problems.add("Rate must be a positive decimal number");
    return null;
  }
  const rate = new Decimal(text);
  if (rate.lte(0)) problems.add("Rate must be greater than 0");
  else if (rate.gte(MAX_RATE)) problems.add("Rate must be less than 1,000,000,000,000");
  else if (rate.decimalPlaces() > RATE_DECIMALS) problems.add(`Rate must have at most ${RATE_DECIMALS} decimal places`);
  else return rate.toFixed();
  return null;
}

function requiredCurrency(problems: ValidationErrors, label: string, value: string | null | undefined): string | null {
  if (value) return checkCurrency(problems, label, value);
  problems.add(`${label} is required`);
  return null;
}
