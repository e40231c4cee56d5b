import Decimal from "decimal.js";
import { NotFoundError, ValidationError } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import type { Actor } from "../../platform/security/actor";
import { toAmountString } from "../money";
import type { BalanceRow, LedgerRepository, SeriesInterval, SeriesPoint } from "./ledger.repository";
import { shiftDays, today } from "./ledger.service";

export type BalanceListFilter = { accountId?: string | null; currency?: string | null; startDate?: string | null; endDate?: string | null };

export type NetWorthPoint = { date: string; currency: string; assets: string; liabilities: string; netWorth: string };

/** The most points one series may have: ten years and a bit of days. */
const MAX_POINTS = 3700;
const DEFAULT_SPAN_DAYS = 365;

/** Reading the ledger: the daily balance rows, an account's history and the family's net worth over time. */
export class BalanceService {
  constructor(private readonly ledger: LedgerRepository) {}

  /** Rows of the family's accounts, newest day first; another family's account id simply matches nothing. */
  async list(
    actor: Actor,
    filter: BalanceListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: BalanceRow[]; pagination: PageInfo }> {
    if (filter.accountId && !isUuid(filter.accountId)) throw new ValidationError(["account_id must be a valid UUID"]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.ledger.page(
      actor.familyId,
      {
        accountId: filter.accountId ?? undefined,
        currency: filter.currency ? filter.currency.toUpperCase() : undefined,
        startDate: filter.startDate ?? undefined,
        endDate: filter.endDate ?? undefined,
      },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async get(actor: Actor, id: string): Promise<BalanceRow> {
    const row = isUuid(id) ? await this.ledger.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Balance");
    return row;
  }

  /** The account's balance at the end of each interval from `from` to `to` (defaults: the year to today). */
  history(
    actor: Actor,
    accountId: string,
    from: string | null | undefined,
    to: string | null | undefined,
    interval: SeriesInterval,
  ): Promise<SeriesPoint[]> {
    const range = checkRange(from, to, interval);
    return this.ledger.history(actor.familyId, accountId, range.from, range.to, interval);
  }

  /** Net worth per currency at the end of each interval, from the same balances as everything else. */
  async netWorthSeries(
    actor: Actor,
    from: string | null | undefined,
    to: string | null | undefined,
    interval: SeriesInterval,
  ): Promise<NetWorthPoint[]> {
    const range = checkRange(from, to, interval);
    const rows = await this.ledger.netWorthSeries(actor.familyId, range.from, range.to, interval);
    return rows.map((row) => ({
      date: row.date,
      currency: row.currency,
      assets: toAmountString(row.assets),
      liabilities: toAmountString(row.liabilities),
      netWorth: toAmountString(new Decimal(row.assets).minus(row.liabilities)),
    }));
  }
}

function checkRange(
  from: string | null | undefined,
  to: string | null | undefined,
  interval: SeriesInterval,
): { from: string; to: string } {
  const end = to ?? today();
  const start = from ?? shiftDays(end, -DEFAULT_SPAN_DAYS);
  if (start > end) throw new ValidationError(["From must be on or before to"]);
  const days = (Date.parse(end) - Date.parse(start)) / 86_400_000;
  const perPoint = interval === "day" ? 1 : interval === "week" ? 7 : 28;
  if (days / perPoint > MAX_POINTS)
    throw new ValidationError([`A series has at most ${MAX_POINTS} points: shorten the range or use a longer interval`]);
  return { from: start, to: end };
}
