import type { Sequelize, Transaction } from "sequelize";
import DecimalBase from "decimal.js";
import type { AuditService } from "../../audit/log";
import { diffChanges } from "../../audit/log";
import { NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { AccountRepository, AccountRow } from "../accounts";
import type { CategoryRepository } from "../categories";
import type { LedgerService } from "../ledger";
import { railsDecimal, toAmountString } from "../money";
import { computePositions } from "./holdings.calculator";
import type {
  InvestmentRepository,
  PriceFilter,
  PriceKey,
  PriceWrite,
  SecurityFilter,
  SecurityPriceRow,
  SecurityRow,
  TradeFilter,
  TradeRow,
  TradeValues,
} from "./investment.repository";

const Decimal = DecimalBase.clone({ precision: 60 });

/** Upstream's trade (and transaction) activity labels. */
export const ACTIVITY_LABELS = [
  "Buy",
  "Sell",
  "Sweep In",
  "Sweep Out",
  "Dividend",
  "Reinvestment",
  "Interest",
  "Fee",
  "Transfer",
  "Contribution",
  "Withdrawal",
  "Exchange",
  "Other",
] as const;

/** Upstream's Trade::CreateForm types: trades of a security (a quantity at a price), and their labels. */
const SECURITY_TRADE_LABELS: Record<string, string> = {
  buy: "Buy",
  sell: "Sell",
  sweep_in: "Sweep In",
  sweep_out: "Sweep Out",
  reinvestment: "Reinvestment",
};
/** Trades that move cash only: no quantity, no price; the amount is the cash (negative flows in). */
const CASH_TRADE_LABELS: Record<string, string> = { dividend: "Dividend", interest: "Interest", fee: "Fee" };
/** Upstream makes these a transaction (or a transfer) on the account, not a trade. */
const TRANSFER_TYPES = ["deposit", "withdrawal"];
const SUPPORTED_TYPES = [...Object.keys(SECURITY_TRADE_LABELS), ...Object.keys(CASH_TRADE_LABELS), ...TRANSFER_TYPES];
/** Account types that take trades (upstream: investment, crypto exchange). */
const TRADING_ACCOUNT_TYPES = ["investment", "crypto"];
const NAME_MAX = 255;
const NOTES_MAX = 10_000;
const TICKER_MAX = 32;
const SECURITY_KINDS = ["standard", "cash"];

/** What a deposit or a withdrawal writes: a transaction on the account, or a transfer with another. */
export type CashMovement =
  | { transaction: { accountId: string; date: string; amount: string; currency: string; name: string }; transfer?: undefined }
  | { transfer: { fromAccountId: string; toAccountId: string; date: string; amount: string }; transaction?: undefined };

/** A validated create: the security it names (found or made in the write's transaction), then the row. */
type TradeDraft = {
  security: (transaction: Transaction) => Promise<SecurityRow>;
  values: (security: SecurityRow) => TradeValues;
};

export type TradeInput = {
  accountId?: string | null;
  date?: string | null;
  type?: string | null;
  nature?: string | null;
  qty?: string | null;
  price?: string | null;
  fee?: string | null;
  amount?: string | null;
  currency?: string | null;
  securityId?: string | null;
  ticker?: string | null;
  manualTicker?: string | null;
  investmentActivityLabel?: string | null;
  categoryId?: string | null;
  transferAccountId?: string | null;
  name?: string | null;
  notes?: string | null;
};

/** BigDecimal as Rails prints it in a trade's name: "10.0", "2.5". */
export function tradeName(sell: boolean, qty: DecimalBase.Value, ticker: string): string {
  return securityTradeName(sell ? "Sell" : "Buy", qty, ticker);
}

/** Upstream's name of a trade of a security: "Buy 2.0 shares of VTI", "Sweep In 5.0 shares of SPAXX". */
function securityTradeName(label: string, qty: DecimalBase.Value, ticker: string): string {
  return `${label} ${railsDecimal(new Decimal(qty).abs())} shares of ${ticker}`;
}

/** "sell" or "inflow" sells; "buy", "outflow" buy (upstream's create and update read them so). */
function sells(value: string): boolean {
  return ["sell", "inflow"].includes(value.trim().toLowerCase());
}

const ACTIONS = { "trade.created": "create", "trade.updated": "update", "trade.deleted": "delete" } as const;

/**
 * Investments (docs/investments.md): securities and their prices as a family sees them, and trades on
 * its investment accounts, as upstream's API defines them. A trade write locks the account, writes,
 * recomputes the holdings its trades make (a manual account's; a provider-fed account's holdings are
 * the provider's) and the ledger from the trade's day, and records an audit event naming the actor,
 * in one transaction: a sell beyond the quantity held changes nothing (422 naming qty).
 */
export class TradeService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly investments: InvestmentRepository,
    private readonly accounts: AccountRepository,
    private readonly categories: CategoryRepository,
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
  ) {}

  // ---- reads -------------------------------------------------------------------------------------------

  async securities(actor: Actor, filter: SecurityFilter, page?: number | null, perPage?: number | null) {
    if (filter.kind && !SECURITY_KINDS.includes(filter.kind))
      throw new ValidationError([`kind must be one of: ${SECURITY_KINDS.join(", ")}`]);
    const request = clampPage(page, perPage, 25);
    const clean: SecurityFilter = {
      ticker: filter.ticker?.trim() || undefined,
      exchangeOperatingMic: filter.exchangeOperatingMic?.trim().toUpperCase() || undefined,
      kind: filter.kind || undefined,
      offline: filter.offline ?? undefined,
    };
    const { rows, total } = await this.investments.securitiesPage(actor.familyId, clean, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async security(actor: Actor, id: string): Promise<SecurityRow> {
    const { rows } = isUuid(id) ? await this.investments.securitiesPage(actor.familyId, { id }, 1, 0) : { rows: [] };
    if (rows.length === 0) throw new NotFoundError("Security");
    return rows[0];
  }

  async prices(actor: Actor, filter: PriceFilter, page?: number | null, perPage?: number | null) {
    if (filter.securityId && !isUuid(filter.securityId)) throw new ValidationError(["security_id must be a valid UUID"]);
    const request = clampPage(page, perPage, 25);
    const clean: PriceFilter = {
      securityId: filter.securityId || undefined,
      currency: filter.currency?.trim().toUpperCase() || undefined,
      startDate: filter.startDate || undefined,
      endDate: filter.endDate || undefined,
      provisional: filter.provisional ?? undefined,
    };
    const { rows, total } = await this.investments.pricesPage(actor.familyId, clean, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async price(actor: Actor, id: string): Promise<SecurityPriceRow> {
    const { rows } = isUuid(id) ? await this.investments.pricesPage(actor.familyId, { id }, 1, 0) : { rows: [] };
    if (rows.length === 0) throw new NotFoundError("Security price");
    return rows[0];
  }

  async trades(
    actor: Actor,
    filter: TradeFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: TradeRow[]; pagination: PageInfo }> {
    const ids = [filter.accountId, ...(filter.accountIds ?? [])].filter((id): id is string => Boolean(id));
    if (ids.some((id) => !isUuid(id))) throw new ValidationError(["account_id must be a valid UUID"]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.investments.tradesPage(
      actor.familyId,
      {
        accountId: filter.accountId || undefined,
        accountIds: filter.accountIds?.length ? filter.accountIds : undefined,
        startDate: filter.startDate || undefined,
        endDate: filter.endDate || undefined,
      },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async trade(actor: Actor, id: string): Promise<TradeRow> {
    const row = isUuid(id) ? await this.investments.tradeById(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Trade");
    return row;
  }

  // ---- writes ------------------------------------------------------------------------------------------

  /**
   * Upstream's POST /trades: a trade of a security (buy, sell, sweep_in, sweep_out, reinvestment: a
   * quantity at a price, plus the fee), or a cash trade (dividend, interest, fee: an amount, no
   * quantity). A deposit or a withdrawal upstream makes a transaction or a transfer, which
   * POST /transactions and POST /transfers record here.
   */
  async create(actor: Actor, input: TradeInput): Promise<TradeRow> {
    if (!input.accountId) throw new ValidationError(["Account ID is required"]);
    const [account] = isUuid(input.accountId) ? await this.accounts.byIds(actor.familyId, [input.accountId]) : [null];
    if (!account) throw new NotFoundError("Account");
    if (!TRADING_ACCOUNT_TYPES.includes(account.accountType))
      throw new ValidationError(["Account must be an investment or crypto exchange account"]);
    const type = (input.type ?? "").trim().toLowerCase();
    if (!SUPPORTED_TYPES.includes(type)) throw new ValidationError([`type must be one of: ${SUPPORTED_TYPES.join(", ")}`]);
    if (TRANSFER_TYPES.includes(type))
      throw new ValidationError([`type '${type}' makes a transaction or a transfer, not a trade: createInvestmentActivity records it`]);
    if (!input.date) throw new ValidationError(["date must be present"]);
    const draft = type in CASH_TRADE_LABELS ? this.cashTrade(type, input, account) : this.securityTrade(type, input, account);

    return this.sequelize.transaction(async (transaction) => {
      await this.ledger.lock([account.id], transaction);
      const security = await draft.security(transaction);
      const categoryId = await this.categoryOf(actor, input.categoryId);
      const id = newId();
      await this.investments.insertTrade(actor.familyId, account.id, id, { ...draft.values(security), categoryId }, transaction);
      await this.rebuild(actor.familyId, account, input.date!, transaction);
      const after = (await this.investments.tradeById(actor.familyId, id, transaction))!;
      await this.record(actor, "trade.created", after, null, transaction);
      return after;
    });
  }

  /**
   * Upstream's deposit or withdrawal on an investment account (Trade::CreateForm#create_transfer): with
   * `transfer_account_id`, a transfer from (withdrawal: to) that account; without, a transaction on the
   * account named "Deposit to …" / "Withdrawal from …" (cash in: a negative amount). Checked here as
   * upstream checks them; the transaction service writes, audits and moves the ledger. Null for any
   * other type (a trade: `create`).
   */
  async cashMovement(actor: Actor, input: TradeInput): Promise<CashMovement | null> {
    const type = (input.type ?? "").trim().toLowerCase();
    if (!TRANSFER_TYPES.includes(type)) return null;
    if (!input.accountId) throw new ValidationError(["Account ID is required"]);
    const [account] = isUuid(input.accountId) ? await this.accounts.byIds(actor.familyId, [input.accountId]) : [null];
    if (!account) throw new NotFoundError("Account");
    if (!TRADING_ACCOUNT_TYPES.includes(account.accountType))
      throw new ValidationError(["Account must be an investment or crypto exchange account"]);
    if (input.amount === null || input.amount === undefined || String(input.amount).trim() === "")
      throw new ValidationError(["amount must be present for deposit/withdrawal"]);
    if (!input.date) throw new ValidationError(["date must be present"]);
    const problems = new ValidationErrors();
    const amount = this.positiveAmount(problems, "deposit/withdrawal", input.amount);
    const currency = this.currencyOf(problems, account, input.currency);
    problems.throwIfAny();
    const deposit = type === "deposit";
    if (input.transferAccountId) {
      const other = input.transferAccountId;
      return {
        transfer: {
          fromAccountId: deposit ? other : account.id,
          toAccountId: deposit ? account.id : other,
          date: input.date,
          amount: amount!.toFixed(),
        },
      };
    }
    return {
      transaction: {
        accountId: account.id,
        date: input.date,
        amount: (deposit ? amount!.negated() : amount!).toFixed(),
        currency,
        name: deposit ? `Deposit to ${account.name}` : `Withdrawal from ${account.name}`,
      },
    };
  }

  /** A trade of a security: the signed quantity (negative for sell and sweep_out), amount = quantity × price + fee. */
  private securityTrade(type: string, input: TradeInput, account: AccountRow): TradeDraft {
    const problems = new ValidationErrors();
    const qty = this.positive(problems, "qty", input.qty);
    const price = this.positive(problems, "price", input.price);
    const fee = input.fee === null || input.fee === undefined ? new Decimal(0) : new Decimal(input.fee);
    if (fee.isNegative()) problems.add("fee must not be negative");
    const currency = this.currencyOf(problems, account, input.currency);
    const notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    const label = this.label(problems, input.investmentActivityLabel);
    problems.throwIfAny();
    const sell = type === "sell" || type === "sweep_out";
    const signedQty = sell ? qty!.negated() : qty!;
    const typeLabel = SECURITY_TRADE_LABELS[type];
    return {
      security: (transaction) => this.securityOf(input, currency, transaction),
      values: (security) => {
        const ticker = security.ticker ?? security.name ?? "security";
        return {
          securityId: security.id,
          date: input.date!,
          qty: signedQty.toFixed(),
          price: price!.toFixed(),
          fee: fee.toFixed(),
          amount: toAmountString(signedQty.times(price!).plus(fee).toDecimalPlaces(4, Decimal.ROUND_HALF_UP)),
          currency,
          name: type === "buy" || type === "sell" ? tradeName(sell, qty!, ticker) : securityTradeName(typeLabel, qty!, ticker),
          notes: notes ?? null,
          investmentActivityLabel: label ?? typeLabel,
          categoryId: null,
        };
      },
    };
  }

  /**
   * A cash trade, as upstream's create_income_trade: no quantity, price or fee; a dividend or interest
   * is cash in (a negative amount), a fee cash out. A dividend names its security; interest and a fee
   * without one are recorded against the account's cash security.
   */
  private cashTrade(type: string, input: TradeInput, account: AccountRow): TradeDraft {
    const named = Boolean(input.securityId || input.ticker?.trim() || input.manualTicker?.trim());
    if (type === "dividend" && !named) throw new ValidationError(["Provide security_id, ticker, or manual_ticker"]);
    const problems = new ValidationErrors();
    const amount = this.positiveAmount(problems, type, input.amount);
    const currency = this.currencyOf(problems, account, input.currency);
    const notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    const label = this.label(problems, input.investmentActivityLabel);
    problems.throwIfAny();
    const typeLabel = CASH_TRADE_LABELS[type];
    const signed = type === "fee" ? amount! : amount!.negated();
    return {
      security: (transaction) =>
        named ? this.securityOf(input, currency, transaction) : this.investments.cashSecurityFor(account.id, currency, transaction),
      values: (security) => ({
        securityId: security.id,
        date: input.date!,
        qty: "0",
        price: "0",
        fee: "0",
        amount: toAmountString(signed.toDecimalPlaces(4, Decimal.ROUND_HALF_UP)),
        currency,
        name: security.kind === "cash" ? typeLabel : `${typeLabel}: ${security.ticker ?? security.name}`,
        notes: notes ?? null,
        investmentActivityLabel: label ?? typeLabel,
        categoryId: null,
      }),
    };
  }

  /** Upstream's PATCH /trades/{id}: qty, price and type (or nature) re-derive the signed quantity, amount and name. */
  async update(actor: Actor, id: string, input: TradeInput): Promise<TradeRow> {
    const current = await this.trade(actor, id);
    const [account] = await this.accounts.byIds(actor.familyId, [current.accountId]);
    if (!account) throw new NotFoundError("Trade");
    const problems = new ValidationErrors();
    const side = input.type?.trim() || input.nature?.trim() || "";
    if (side && !["buy", "sell", "inflow", "outflow"].includes(side.toLowerCase()))
      problems.add("type must be 'buy' or 'sell' (nature: 'inflow' or 'outflow')");
    const qty = input.qty === null || input.qty === undefined ? null : this.positive(problems, "qty", input.qty);
    const price = input.price === null || input.price === undefined ? null : this.positive(problems, "price", input.price);
    // A cash trade has no quantity to re-derive (upstream would write a buy at no price); its amount is what changes.
    if (new Decimal(current.qty).isZero() && (qty || price || side))
      problems.add("qty, price and type apply to trades of a security; a dividend, interest or fee changes by its amount");
    const currency = input.currency ? this.currencyOf(problems, account, input.currency) : current.currency;
    const notes = input.notes === undefined ? current.notes : optionalText(problems, "Notes", input.notes, NOTES_MAX);
    const label = input.investmentActivityLabel ? this.label(problems, input.investmentActivityLabel) : null;
    let name = current.name;
    if (input.name !== undefined && input.name !== null) {
      if (!input.name.trim()) problems.add("Name can't be blank");
      else if (input.name.length > NAME_MAX) problems.add(`Name is too long (maximum is ${NAME_MAX} characters)`);
      else name = input.name.trim();
    }
    problems.throwIfAny();

    const values: TradeValues = {
      securityId: current.securityId,
      date: input.date ?? current.date,
      qty: current.qty,
      price: current.price,
      fee: current.fee,
      amount: input.amount === null || input.amount === undefined ? current.amount : toAmountString(input.amount),
      currency,
      name,
      notes: notes ?? null,
      investmentActivityLabel: label ?? current.investmentActivityLabel,
      categoryId: current.categoryId,
    };
    if (qty || price || side) {
      const sell = side ? sells(side) : new Decimal(current.qty).isNegative();
      const size = qty ?? new Decimal(current.qty).abs();
      const signed = sell ? size.negated() : size;
      const unit = price ?? new Decimal(current.price);
      values.qty = signed.toFixed();
      values.price = unit.toFixed();
      values.amount = toAmountString(signed.times(unit).plus(current.fee).toDecimalPlaces(4, Decimal.ROUND_HALF_UP));
      if (current.ticker) values.name = tradeName(sell, size, current.ticker);
      values.investmentActivityLabel = label ?? (sell ? "Sell" : "Buy");
    }

    return this.sequelize.transaction(async (transaction) => {
      await this.ledger.lock([account.id], transaction);
      const before = await this.investments.tradeById(actor.familyId, id, transaction);
      if (!before) throw new NotFoundError("Trade");
      if (input.categoryId !== undefined) values.categoryId = await this.categoryOf(actor, input.categoryId);
      await this.investments.updateTrade(id, values, transaction);
      await this.rebuild(actor.familyId, account, values.date < before.date ? values.date : before.date, transaction);
      const after = (await this.investments.tradeById(actor.familyId, id, transaction))!;
      await this.record(actor, "trade.updated", after, before, transaction);
      return after;
    });
  }

  async delete(actor: Actor, id: string): Promise<TradeRow> {
    const current = await this.trade(actor, id);
    const [account] = await this.accounts.byIds(actor.familyId, [current.accountId]);
    if (!account) throw new NotFoundError("Trade");
    return this.sequelize.transaction(async (transaction) => {
      await this.ledger.lock([account.id], transaction);
      const before = await this.investments.tradeById(actor.familyId, id, transaction);
      if (!before) throw new NotFoundError("Trade");
      await this.investments.deleteTrade(id, transaction);
      await this.rebuild(actor.familyId, account, before.date, transaction);
      await this.record(actor, "trade.deleted", null, before, transaction);
      return before;
    });
  }

  /** Finds or creates the securities an import's rows name, as POST /trades finds a ticker's. */
  async ensureSecurities(securities: ReadonlyArray<{ ticker: string; mic: string | null; currency: string }>, transaction: Transaction) {
    for (const security of securities)
      await this.investments.securityForTicker(security.ticker, security.mic, security.currency, transaction);
  }

  /**
   * Trades an import writes, in the caller's transaction: the accounts are locked, `write` inserts the
   * trades and says from which day each account changed, and each account's holdings and ledger are
   * recomputed from then (a sell beyond the quantity held refuses it all, as one trade's write would).
   */
  async writeImported(
    familyId: string,
    accountIds: readonly string[],
    write: () => Promise<Array<{ accountId: string; from: string }>>,
    transaction: Transaction,
  ): Promise<void> {
    await this.ledger.lock(accountIds, transaction);
    const changed = await write();
    const accounts = await this.accounts.byIds(
      familyId,
      changed.map((change) => change.accountId),
      transaction,
    );
    for (const change of changed) {
      const account = accounts.find((candidate) => candidate?.id === change.accountId);
      if (account) await this.rebuild(familyId, account, change.from, transaction);
    }
  }

  /**
   * Records security prices (the demo's, a provider's reported prices, an administrator's or an
   * import's) and revalues every manual account trading a security whose price changed, once per
   * account, from the earliest day a price in its currency changed (positions do not change). A price
   * equal to the stored one changes nothing. Answers the prices written and the accounts revalued.
   */
  async recordPrices(prices: readonly PriceWrite[], transaction: Transaction): Promise<{ changed: PriceKey[]; accountIds: string[] }> {
    const changed = await this.investments.upsertPrices(prices, transaction);
    if (changed.length === 0) return { changed, accountIds: [] };
    const holders = await this.investments.accountsTrading(changed, transaction);
    // One lock for all of them, in id order (as every multi-account write takes it): no deadlock with a trade's.
    await this.ledger.lock(
      holders.map((holder) => holder.id),
      transaction,
    );
    for (const holder of holders) {
      if (!(await this.investments.providerFed(holder.id, transaction)))
        await this.investments.writePortfolioDays(holder.id, holder.currency, holder.from, transaction);
      await this.ledger.holdingsChanged(holder.id, holder.from, transaction);
    }
    return { changed, accountIds: holders.map((holder) => holder.id) };
  }

  /**
   * Revalues every account migration 0043 listed (valued by an earlier price rule) by today's code: each
   * in its own transaction, from its first trade, taken off the list in that transaction, so a crash
   * leaves the rest listed for the next start. One that fails (its trades no longer add up) stays listed and
   * is skipped for the rest of this run. Answers how many were revalued and which failed. A no-op once the
   * list is empty.
   */
  async revaluePending(): Promise<{ revalued: number; failed: Array<{ accountId: string; error: string }> }> {
    const failed: Array<{ accountId: string; error: string }> = [];
    let revalued = 0;
    for (;;) {
      const taken: { accountId: string | null } = { accountId: null };
      try {
        const done = await this.sequelize.transaction(async (transaction) => {
          const pending = await this.investments.nextRevaluation(
            failed.map((failure) => failure.accountId),
            transaction,
          );
          if (!pending) return false;
          taken.accountId = pending.accountId;
          await this.ledger.lock([pending.accountId], transaction);
          const [account] = await this.accounts.byIds(pending.familyId, [pending.accountId], transaction);
          if (account && pending.from) await this.rebuild(pending.familyId, account, pending.from, transaction);
          await this.investments.revalued(pending.accountId, transaction);
          return true;
        });
        if (!done) return { revalued, failed };
        revalued += 1;
      } catch (error) {
        // The list itself could not be read: nothing to skip, the caller reports it.
        if (taken.accountId === null) throw error;
        failed.push({ accountId: taken.accountId, error: (error as Error).message });
      }
    }
  }

  /**
   * Recomputes a manual account's positions from its trades from the day `from` on (from each
   * security's newest position before it), its holdings value per day from that day, and the ledger;
   * a sell beyond the quantity held is refused, and the caller's transaction rolls back. A bank
   * provider's account keeps the provider's holdings: its trades move its cash only.
   */
  async rebuild(familyId: string, account: AccountRow, from: string, transaction: Transaction): Promise<void> {
    if (await this.investments.providerFed(account.id, transaction)) await this.investments.clearPositions(account.id, transaction);
    else {
      const start = await this.investments.positionsBefore(account.id, from, transaction);
      const trades = await this.investments.tradesFrom(account.id, from, transaction);
      const { positions, oversell } = computePositions(trades, start);
      if (oversell) {
        const security = await this.investments.securityById(oversell.securityId, transaction);
        throw new ValidationError([
          `qty exceeds the quantity held: ${oversell.sold} ${security?.ticker ?? "units"} sold on ${oversell.date} with ${oversell.held} held`,
        ]);
      }
      await this.investments.writePositions(familyId, account.id, account.currency, from, positions, transaction);
      await this.investments.writePortfolioDays(account.id, account.currency, from, transaction);
    }
    await this.ledger.holdingsChanged(account.id, from, transaction);
  }

  // ---- helpers -----------------------------------------------------------------------------------------

  private positive(problems: ValidationErrors, field: "qty" | "price", raw: string | null | undefined): DecimalBase | null {
    if (raw === null || raw === undefined || String(raw).trim() === "") {
      problems.add(`${field} must be present and positive`);
      return null;
    }
    const value = new Decimal(raw);
    if (!value.isPositive() || value.isZero()) {
      problems.add(`${field} must be present and positive`);
      return null;
    }
    return value;
  }

  /** Upstream's parse_positive_amount: present, a number, above zero. */
  private positiveAmount(problems: ValidationErrors, type: string, raw: string | null | undefined): DecimalBase | null {
    if (raw === null || raw === undefined || String(raw).trim() === "") {
      problems.add(`amount must be present for ${type}`);
      return null;
    }
    const text = String(raw).trim();
    const value = /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) ? new Decimal(text) : null;
    if (!value || !value.isPositive() || value.isZero()) {
      problems.add("amount must be a valid positive number");
      return null;
    }
    return value;
  }

  private currencyOf(problems: ValidationErrors, account: AccountRow, raw: string | null | undefined): string {
    const currency = raw?.trim().toUpperCase() || account.currency;
    if (currency !== account.currency) problems.add(`currency must be the account's (${account.currency})`);
    return currency;
  }

  private label(problems: ValidationErrors, raw: string | null | undefined): string | null {
    if (!raw) return null;
    if (!(ACTIVITY_LABELS as readonly string[]).includes(raw))
      problems.add(`investment_activity_label must be one of: ${ACTIVITY_LABELS.join(", ")}`);
    return raw;
  }

  private async securityOf(input: TradeInput, currency: string, transaction: Transaction): Promise<SecurityRow> {
    if (input.securityId) {
      const security = isUuid(input.securityId) ? await this.investments.securityById(input.securityId, transaction) : null;
      if (!security) throw new NotFoundError("Security");
      return security;
    }
    const raw = (input.ticker || input.manualTicker || "").trim();
    if (!raw) throw new ValidationError(["Provide security_id, ticker, or manual_ticker"]);
    const [ticker, mic] = raw.split("|").map((part) => part.trim());
    if (!ticker || ticker.length > TICKER_MAX || !/^[\p{L}\p{N}.\-:^=/]+$/u.test(ticker))
      throw new ValidationError([`ticker must be 1 to ${TICKER_MAX} letters, digits or . - : ^ = /`]);
    if (mic !== undefined && !/^[A-Za-z0-9]{4}$/.test(mic))
      throw new ValidationError(["ticker's exchange must be a 4-character MIC (AAPL|XNAS)"]);
    return this.investments.securityForTicker(ticker, mic ? mic.toUpperCase() : null, currency, transaction);
  }

  private async categoryOf(actor: Actor, raw: string | null | undefined): Promise<string | null> {
    if (!raw) return null;
    const [category] = isUuid(raw) ? await this.categories.byIds(actor.familyId, [raw]) : [null];
    if (!category) throw new ValidationError(["category_id is invalid"]);
    return category.id;
  }

  private async record(
    actor: Actor,
    type: keyof typeof ACTIONS,
    after: TradeRow | null,
    before: TradeRow | null,
    transaction: Transaction,
  ): Promise<void> {
    const fields = ["date", "qty", "price", "fee", "amount", "currency", "name", "notes", "investmentActivityLabel", "categoryId"];
    const shape = (row: TradeRow | null) =>
      row
        ? {
            date: row.date,
            qty: toAmountString(row.qty),
            price: toAmountString(row.price),
            fee: toAmountString(row.fee),
            amount: toAmountString(row.amount),
            currency: row.currency,
            name: row.name,
            notes: row.notes,
            investmentActivityLabel: row.investmentActivityLabel,
            categoryId: row.categoryId,
          }
        : {};
    const subject = (after ?? before)!;
    await this.audit.record(transaction, {
      type,
      user: { id: actor.userId, email: actor.email },
      action: ACTIONS[type],
      resource: { type: "trade", id: subject.id, label: `${subject.name} (${subject.accountName}, ${subject.date})` },
      changes: diffChanges(shape(before), shape(after), fields),
    });
  }
}
