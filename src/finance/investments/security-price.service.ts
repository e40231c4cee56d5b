import type { Sequelize } from "sequelize";
import DecimalBase from "decimal.js";
import type { AuditService, AuditUser } from "../../audit/log";
import { ValidationError } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import type { Actor } from "../../platform/security/actor";
import { isKnownCurrency } from "../money";
import type { InvestmentRepository, PriceKey, PriceWrite, SecurityPriceRow } from "./investment.repository";
import type { TradeService } from "./trade.service";

const Decimal = DecimalBase.clone({ precision: 60 });

/** A price as a client or a file gives it: the security by id or by ticker (`VTI`, `VTI|ARCX`). */
export type PriceEntry = {
  securityId?: string | null;
  ticker?: string | null;
  date?: string | null;
  price?: string | null;
  currency?: string | null;
};

export type RecordedPrices = {
  /** Every price of the call as stored now, in the call's order. */
  prices: SecurityPriceRow[];
  /** How many of them were new or different (the others were stored already). */
  changedCount: number;
  /** Manual investment accounts revalued, across families. */
  revaluedAccountCount: number;
};

/** At most this many prices per API call: a larger set is a file for `finance-gateway prices import`. */
export const PRICES_PER_CALL_MAX = 1000;
/** security_prices.price is numeric(28, 10). */
const PRICE_DECIMALS = 10;
const PRICE_LIMIT = new Decimal("1e18");
const TICKER_MAX = 32;
/** Problems listed in one answer: a file of 100,000 bad rows is told about its first ones. */
const PROBLEMS_SHOWN = 20;

/** Names a field of the index-th entry in a problem: `prices[2].price`, `row 3: price`. */
type FieldNamer = (index: number, field: string) => string;

/**
 * Security prices entered by an instance administrator (GraphQL `recordSecurityPrices`) or imported
 * from a file (`finance-gateway prices import`). Securities and prices are shared by every family, so a
 * price moves every family's valuations of the security: checked whole first (nothing is written while
 * any entry has a problem; each problem names its entry and field), then written, the manual accounts
 * trading the securities revalued and one audit event recorded naming the actor, in one transaction.
 */
export class SecurityPriceService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly investments: InvestmentRepository,
    private readonly trades: TradeService,
    private readonly audit: AuditService,
  ) {}

  /** The API's entry: at most PRICES_PER_CALL_MAX prices, problems named `prices[i].field`. */
  recordFromApi(actor: Actor, entries: readonly PriceEntry[]): Promise<RecordedPrices> {
    if (entries.length === 0) throw new ValidationError(["prices must hold at least one price"]);
    if (entries.length > PRICES_PER_CALL_MAX)
      throw new ValidationError([`prices holds ${entries.length} prices; one call takes at most ${PRICES_PER_CALL_MAX}`]);
    return this.record(entries, (index, field) => `prices[${index}].${field}`, {
      user: { id: actor.userId, email: actor.email },
      source: "api",
    });
  }

  /** A file's rows (the CLI's import, as the system): problems named `row N: field`, N counting data rows from 1. */
  recordFromFile(fileName: string, entries: readonly PriceEntry[]): Promise<RecordedPrices> {
    if (entries.length === 0) throw new ValidationError(["The file has no price rows"]);
    return this.record(entries, (index, field) => `row ${index + 1}: ${field}`, { user: null, source: "file", fileName });
  }

  private async record(
    entries: readonly PriceEntry[],
    name: FieldNamer,
    by: { user: AuditUser | null; source: "api" | "file"; fileName?: string },
  ): Promise<RecordedPrices> {
    const problems: string[] = [];
    const checked = entries.map((entry, index) => checkEntry(entry, (field) => name(index, field), problems));
    const securityIds = await this.resolveSecurities(entries, name, problems);
    const writes: PriceWrite[] = [];
    const seen = new Map<string, number>();
    checked.forEach((entry, index) => {
      const securityId = securityIds[index];
      if (!entry || !securityId) return;
      const key = `${securityId}|${entry.date}|${entry.currency}`;
      const first = seen.get(key);
      if (first !== undefined) problems.push(`${name(index, "date")} repeats the security, date and currency of ${name(first, "date")}`);
      else seen.set(key, index);
      writes.push({ securityId, ...entry });
    });
    if (problems.length > 0) throw new ValidationError(shown(problems));

    return this.sequelize.transaction(async (transaction) => {
      const { changed, accountIds } = await this.trades.recordPrices(writes, transaction);
      const keys: PriceKey[] = writes.map(({ securityId, date, currency }) => ({ securityId, date, currency }));
      const stored = await this.investments.pricesByKeys(keys, transaction);
      const tickers = [...new Set(stored.map((row) => row.ticker ?? row.securityId))].sort();
      const dates = writes.map((write) => write.date).sort();
      const range = dates[0] === dates[dates.length - 1] ? dates[0] : `${dates[0]} to ${dates[dates.length - 1]}`;
      await this.audit.record(transaction, {
        type: "security_prices.recorded",
        user: by.user,
        action: by.source === "api" ? "record" : "import",
        resource: {
          type: "security_prices",
          id: [...new Set(writes.map((write) => write.securityId))].sort().join(","),
          label: `${tickers.join(", ")}: ${writes.length} price${writes.length === 1 ? "" : "s"}, ${range}`,
        },
        changes: {
          prices: { old: null, new: writes.length },
          changed: { old: null, new: changed.length },
          securities: { old: null, new: tickers },
          first_date: { old: null, new: dates[0] },
          last_date: { old: null, new: dates[dates.length - 1] },
          revalued_accounts: { old: null, new: accountIds.length },
          ...(by.fileName ? { file: { old: null, new: by.fileName } } : {}),
        },
      });
      return { prices: stored, changedCount: changed.length, revaluedAccountCount: accountIds.length };
    });
  }

  /**
   * Each entry's security: by id (one that exists), or by ticker, optionally `TICKER|MIC`; a ticker
   * that names several securities needs its exchange or the id. A cash security has no price.
   */
  private async resolveSecurities(entries: readonly PriceEntry[], name: FieldNamer, problems: string[]): Promise<Array<string | null>> {
    const ids = entries.map((entry) => entry.securityId?.trim()).filter((id): id is string => Boolean(id) && isUuid(id!));
    const tickers = entries.map((entry) => splitTicker(entry.ticker)?.ticker).filter((ticker): ticker is string => Boolean(ticker));
    const byId = new Map((ids.length ? await this.investments.securitiesByIds(ids) : []).map((row) => [row.id, row]));
    const byTicker = tickers.length ? await this.investments.securitiesByTicker(tickers) : [];
    return entries.map((entry, index) => {
      const id = entry.securityId?.trim();
      if (id) {
        if (entry.ticker?.trim()) return problem(`${name(index, "ticker")} must be left out when securityId is given`);
        const found = isUuid(id) ? byId.get(id) : undefined;
        if (!found) return problem(`${name(index, "securityId")} names no security`);
        if (found.kind === "cash") return problem(`${name(index, "securityId")} is a cash security, which has no price`);
        return found.id;
      }
      const wanted = splitTicker(entry.ticker);
      if (!wanted) {
        if (!entry.ticker?.trim()) return problem(`${name(index, "ticker")} or securityId must be given`);
        return problem(`${name(index, "ticker")} must be 1 to ${TICKER_MAX} letters, digits or . - : ^ = /, optionally |MIC (VTI|ARCX)`);
      }
      const matches = byTicker.filter(
        (row) =>
          row.kind !== "cash" &&
          row.ticker.toLowerCase() === wanted.ticker.toLowerCase() &&
          (wanted.mic === null || row.exchangeOperatingMic === wanted.mic),
      );
      if (matches.length === 0) return problem(`${name(index, "ticker")} ${entry.ticker!.trim()} names no known security`);
      if (matches.length > 1) {
        const exchanges = matches.map((row) => row.exchangeOperatingMic ?? "no exchange").join(", ");
        return problem(
          `${name(index, "ticker")} ${wanted.ticker} names ${matches.length} securities (${exchanges}): give TICKER|MIC or securityId`,
        );
      }
      return matches[0].id;
    });

    function problem(message: string): null {
      problems.push(message);
      return null;
    }
  }
}

/** The entry's date, price and currency checked and normalised; null (problems added) when any is wrong. */
function checkEntry(
  entry: PriceEntry,
  name: (field: string) => string,
  problems: string[],
): { date: string; price: string; currency: string } | null {
  const before = problems.length;
  const date = entry.date?.trim() ?? "";
  if (!date) problems.push(`${name("date")} must be given`);
  else if (!isCalendarDate(date)) problems.push(`${name("date")} must be a YYYY-MM-DD calendar date`);
  else if (date > latestPriceDay()) problems.push(`${name("date")} ${date} is in the future`);
  const price = checkPrice(entry.price, name("price"), problems);
  const currency = entry.currency?.trim().toUpperCase() ?? "";
  if (!currency) problems.push(`${name("currency")} must be given`);
  else if (!isKnownCurrency(currency)) problems.push(`${name("currency")} ${currency} is not an ISO 4217 code`);
  return problems.length === before ? { date, price: price!, currency } : null;
}

function checkPrice(raw: string | null | undefined, field: string, problems: string[]): string | null {
  const text = raw?.trim() ?? "";
  if (!text) problems.push(`${field} must be given`);
  else if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text)) problems.push(`${field} must be a positive decimal number`);
  else return checkedPrice(new Decimal(text), field, problems);
  return null;
}

function checkedPrice(price: DecimalBase, field: string, problems: string[]): string | null {
  if (price.lte(0)) problems.push(`${field} must be greater than 0`);
  else if (price.gte(PRICE_LIMIT)) problems.push(`${field} must be less than 1,000,000,000,000,000,000`);
  else if (price.decimalPlaces() > PRICE_DECIMALS) problems.push(`${field} must have at most ${PRICE_DECIMALS} decimal places`);
  else return price.toFixed();
  return null;
}

/** `VTI` or `VTI|ARCX` (the exchange's operating MIC, as upstream's clients name a security); null when malformed or absent. */
function splitTicker(raw: string | null | undefined): { ticker: string; mic: string | null } | null {
  const text = raw?.trim();
  if (!text) return null;
  const [ticker, mic, ...rest] = text.split("|").map((part) => part.trim());
  if (rest.length > 0 || !ticker || ticker.length > TICKER_MAX || !/^[\p{L}\p{N}.\-:^=/]+$/u.test(ticker)) return null;
  if (mic !== undefined && !/^[A-Za-z0-9]{4}$/.test(mic)) return null;
  return { ticker, mic: mic ? mic.toUpperCase() : null };
}

function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === text && text >= "1900-01-01";
}

/** Tomorrow in UTC: a price of today somewhere east of UTC is not refused; a later one is a mistake. */
function latestPriceDay(): string {
  return new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
}

function shown(problems: string[]): string[] {
  return problems.length <= PROBLEMS_SHOWN
    ? problems
    : [...problems.slice(0, PROBLEMS_SHOWN), `and ${problems.length - PROBLEMS_SHOWN} more problems`];
}
