import type { Sequelize, Transaction } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";
import { INVESTED_ACCOUNT_TYPES, sqlList } from "../ledger";
import type { CalcPrice, CalcStart, CalcTrade, ComputedHolding } from "./holdings.calculator";

export type SecurityRow = {
  id: string;
  ticker: string | null;
  name: string | null;
  kind: string;
  countryCode: string | null;
  exchangeMic: string | null;
  exchangeAcronym: string | null;
  exchangeOperatingMic: string | null;
  exchangeName: string | null;
  offline: boolean;
  offlineReason: string | null;
  websiteUrl: string | null;
  logoUrl: string | null;
  firstProviderPriceOn: string | null;
  currency: string | null;
  isin: string | null;
  figi: string | null;
  cusip: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type SecurityPriceRow = {
  id: string;
  securityId: string;
  date: string;
  price: string;
  currency: string;
  provisional: boolean;
  ticker: string | null;
  name: string | null;
  exchangeOperatingMic: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type TradeRow = {
  id: string;
  familyId: string;
  accountId: string;
  accountName: string;
  accountType: string;
  securityId: string;
  ticker: string | null;
  securityName: string | null;
  date: string;
  qty: string;
  price: string;
  fee: string;
  amount: string;
  currency: string;
  name: string;
  notes: string | null;
  investmentActivityLabel: string | null;
  categoryId: string | null;
  categoryName: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** A holding of an investment account at the end of a day: its newest snapshot on or before it (a provider's or computed from trades). */
export type HeldRow = {
  accountId: string;
  account: string;
  securityId: string;
  ticker: string | null;
  securityName: string | null;
  /** The snapshot's day: the newest on or before the day asked. */
  date: string;
  quantity: string;
  price: string | null;
  value: string;
  costBasis: string | null;
  currency: string;
};

/** A family's trades in one security and currency, summed: buys and sells apart (amounts as the cash they moved, fees included). */
export type TradeTotalsRow = {
  securityId: string;
  ticker: string | null;
  securityName: string | null;
  currency: string;
  buys: number;
  boughtQuantity: string;
  boughtAmount: string;
  sells: number;
  soldQuantity: string;
  soldAmount: string;
  fees: string;
  netAmount: string;
  firstDate: string;
  lastDate: string;
};

export type TradeFilter = { accountId?: string; accountIds?: string[]; startDate?: string; endDate?: string; securityId?: string };
export type SecurityFilter = { id?: string; ticker?: string; exchangeOperatingMic?: string; kind?: string; offline?: boolean };
export type PriceFilter = {
  id?: string;
  securityId?: string;
  currency?: string;
  startDate?: string;
  endDate?: string;
  provisional?: boolean;
};

export type TradeValues = {
  securityId: string;
  date: string;
  qty: string;
  price: string;
  fee: string;
  amount: string;
  currency: string;
  name: string;
  notes: string | null;
  investmentActivityLabel: string | null;
  categoryId: string | null;
};

const SECURITY_COLUMNS = `s.id, s.ticker, s.name, s.kind, s.country_code AS "countryCode", s.exchange_mic AS "exchangeMic",
  s.exchange_acronym AS "exchangeAcronym", s.exchange_operating_mic AS "exchangeOperatingMic", s.exchange_name AS "exchangeName",
  s.offline, s.offline_reason AS "offlineReason", s.website_url AS "websiteUrl", s.logo_url AS "logoUrl",
  s.first_provider_price_on::text AS "firstProviderPriceOn", s.currency, s.isin, s.figi, s.cusip, s.created_at AS "createdAt", s.updated_at AS "updatedAt"`;

const PRICE_COLUMNS = `p.id, p.security_id AS "securityId", p.date::text AS date, p.price, p.currency, p.provisional,
  s.ticker, s.name, s.exchange_operating_mic AS "exchangeOperatingMic", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

const TRADE_COLUMNS = `t.id, t.family_id AS "familyId", t.account_id AS "accountId", a.name AS "accountName", a.account_type AS "accountType",
  t.security_id AS "securityId", s.ticker, s.name AS "securityName", t.date::text AS date, t.qty, t.price, t.fee, t.amount, t.currency,
  t.name, t.notes, t.investment_activity_label AS "investmentActivityLabel", t.category_id AS "categoryId", c.name AS "categoryName",
  t.created_at AS "createdAt", t.updated_at AS "updatedAt"`;

const TRADE_FROM = `trades t JOIN accounts a ON a.id = t.account_id JOIN securities s ON s.id = t.security_id
  LEFT JOIN categories c ON c.id = t.category_id AND c.family_id = t.family_id`;

/**
 * The securities a family may see, as upstream scopes them: those its accounts hold (a provider's
 * snapshot) or trade. Securities are shared; what a family sees of them is not.
 */
const FAMILY_SECURITIES = `(SELECT h.security_id FROM holdings h WHERE h.family_id = $1
  UNION SELECT t.security_id FROM trades t WHERE t.family_id = $1)`;

/** Securities, prices, trades and the holdings computed from trades. */
export class InvestmentRepository {
  constructor(private readonly sequelize: Sequelize) {}

  // ---- securities and prices ---------------------------------------------------------------------------

  async securitiesPage(
    familyId: string,
    filter: SecurityFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: SecurityRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = [`s.id IN ${FAMILY_SECURITIES}`];
    if (filter.id) conditions.push(`s.id = ${bindParam(bind, filter.id)}`);
    if (filter.ticker) conditions.push(`lower(s.ticker) = lower(${bindParam(bind, filter.ticker)})`);
    if (filter.exchangeOperatingMic) conditions.push(`s.exchange_operating_mic = ${bindParam(bind, filter.exchangeOperatingMic)}`);
    if (filter.kind) conditions.push(`s.kind = ${bindParam(bind, filter.kind)}`);
    if (filter.offline !== undefined) conditions.push(`s.offline = ${bindParam(bind, filter.offline)}`);
    const where = conditions.join(" AND ");
    const [{ total }] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM securities s WHERE ${where}`,
      bind,
    );
    const page = [...bind];
    const rows = await selectRows<SecurityRow>(
      this.sequelize,
      `SELECT ${SECURITY_COLUMNS} FROM securities s WHERE ${where}
        ORDER BY s.ticker NULLS LAST, s.exchange_operating_mic NULLS LAST, s.name NULLS LAST, s.id
        LIMIT ${bindParam(page, limit)} OFFSET ${bindParam(page, offset)}`,
      page,
    );
    return { rows, total: Number(total) };
  }

  async pricesPage(
    familyId: string,
    filter: PriceFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: SecurityPriceRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = [`p.security_id IN ${FAMILY_SECURITIES}`];
    if (filter.id) conditions.push(`p.id = ${bindParam(bind, filter.id)}`);
    if (filter.securityId) conditions.push(`p.security_id = ${bindParam(bind, filter.securityId)}`);
    if (filter.currency) conditions.push(`p.currency = ${bindParam(bind, filter.currency)}`);
    if (filter.startDate) conditions.push(`p.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`p.date <= ${bindParam(bind, filter.endDate)}::date`);
    if (filter.provisional !== undefined) conditions.push(`p.provisional = ${bindParam(bind, filter.provisional)}`);
    const where = conditions.join(" AND ");
    const [{ total }] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM security_prices p WHERE ${where}`,
      bind,
    );
    const page = [...bind];
    const rows = await selectRows<SecurityPriceRow>(
      this.sequelize,
      `SELECT ${PRICE_COLUMNS} FROM security_prices p JOIN securities s ON s.id = p.security_id WHERE ${where}
        ORDER BY p.date DESC, p.created_at DESC, p.id LIMIT ${bindParam(page, limit)} OFFSET ${bindParam(page, offset)}`,
      page,
    );
    return { rows, total: Number(total) };
  }

  /** Any security by id (a trade may name one the family has not held yet, as upstream's Security.find). */
  async securityById(id: string, transaction?: Transaction): Promise<SecurityRow | null> {
    const [row] = await selectRows<SecurityRow>(
      this.sequelize,
      `SELECT ${SECURITY_COLUMNS} FROM securities s WHERE s.id = $1`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  /**
   * The security a ticker names (with its exchange's operating MIC, `AAPL|XNAS` as upstream's
   * clients send it): an existing one, or a new offline-priced one keyed by ticker and exchange.
   */
  async securityForTicker(ticker: string, mic: string | null, currency: string, transaction: Transaction): Promise<SecurityRow> {
    const [found] = await selectRows<SecurityRow>(
      this.sequelize,
      `SELECT ${SECURITY_COLUMNS} FROM securities s WHERE lower(s.ticker) = lower($1) AND s.exchange_operating_mic IS NOT DISTINCT FROM $2
        ORDER BY s.created_at, s.id LIMIT 1`,
      [ticker, mic],
      transaction,
    );
    if (found) return found;
    const key = `ticker:${ticker.toUpperCase()}|${mic ?? ""}`;
    const [created] = await selectRows<{ id: string }>(
      this.sequelize,
      `INSERT INTO securities (id, key, ticker, name, currency, exchange_operating_mic)
       VALUES (gen_random_uuid(), $1, $2, $2, $3, $4)
       ON CONFLICT (key) DO UPDATE SET updated_at = securities.updated_at RETURNING id`,
      [key, ticker.toUpperCase(), currency, mic],
      transaction,
    );
    return (await this.securityById(created.id, transaction))!;
  }

  /** Records prices (one per security, day and currency; a later one replaces the day's). */
  async upsertPrices(
    prices: Array<{ securityId: string; date: string; price: string; currency: string; provisional?: boolean }>,
    transaction?: Transaction,
  ): Promise<void> {
    if (prices.length === 0) return;
    await this.sequelize.query(
      `INSERT INTO security_prices (id, security_id, date, price, currency, provisional)
       SELECT gen_random_uuid(), v.security_id, v.date, v.price, v.currency, v.provisional
         FROM unnest($1::uuid[], $2::date[], $3::numeric[], $4::text[], $5::boolean[]) AS v(security_id, date, price, currency, provisional)
       ON CONFLICT (security_id, date, currency) DO UPDATE
         SET price = EXCLUDED.price, provisional = EXCLUDED.provisional, updated_at = now()
         WHERE (security_prices.price, security_prices.provisional) IS DISTINCT FROM (EXCLUDED.price, EXCLUDED.provisional)`,
      {
        bind: [
          prices.map((p) => p.securityId),
          prices.map((p) => p.date),
          prices.map((p) => p.price),
          prices.map((p) => p.currency),
          prices.map((p) => p.provisional ?? false),
        ],
        transaction,
      },
    );
  }

  // ---- trades ------------------------------------------------------------------------------------------

  async tradesPage(familyId: string, filter: TradeFilter, limit: number, offset: number): Promise<{ rows: TradeRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = ["t.family_id = $1"];
    if (filter.accountId) conditions.push(`t.account_id = ${bindParam(bind, filter.accountId)}`);
    if (filter.accountIds?.length) conditions.push(`t.account_id = ANY(${bindParam(bind, filter.accountIds)}::uuid[])`);
    if (filter.securityId) conditions.push(`t.security_id = ${bindParam(bind, filter.securityId)}`);
    if (filter.startDate) conditions.push(`t.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`t.date <= ${bindParam(bind, filter.endDate)}::date`);
    const where = conditions.join(" AND ");
    const [{ total }] = await selectRows<{ total: string }>(this.sequelize, `SELECT count(*) AS total FROM trades t WHERE ${where}`, bind);
    const page = [...bind];
    const rows = await selectRows<TradeRow>(
      this.sequelize,
      `SELECT ${TRADE_COLUMNS} FROM ${TRADE_FROM} WHERE ${where}
        ORDER BY t.date DESC, t.created_at DESC, t.id LIMIT ${bindParam(page, limit)} OFFSET ${bindParam(page, offset)}`,
      page,
    );
    return { rows, total: Number(total) };
  }

  async tradeById(familyId: string, id: string, transaction?: Transaction): Promise<TradeRow | null> {
    const [row] = await selectRows<TradeRow>(
      this.sequelize,
      `SELECT ${TRADE_COLUMNS} FROM ${TRADE_FROM} WHERE t.family_id = $1 AND t.id = $2`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  async insertTrade(familyId: string, accountId: string, id: string, values: TradeValues, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO trades (id, family_id, account_id, security_id, date, qty, price, fee, amount, currency, name, notes, investment_activity_label, category_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      {
        bind: [
          id,
          familyId,
          accountId,
          values.securityId,
          values.date,
          values.qty,
          values.price,
          values.fee,
          values.amount,
          values.currency,
          values.name,
          values.notes,
          values.investmentActivityLabel,
          values.categoryId,
        ],
        transaction,
      },
    );
  }

  async updateTrade(id: string, values: TradeValues, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE trades SET date = $2, qty = $3, price = $4, fee = $5, amount = $6, currency = $7, name = $8, notes = $9,
              investment_activity_label = $10, category_id = $11, updated_at = now() WHERE id = $1`,
      {
        bind: [
          id,
          values.date,
          values.qty,
          values.price,
          values.fee,
          values.amount,
          values.currency,
          values.name,
          values.notes,
          values.investmentActivityLabel,
          values.categoryId,
        ],
        transaction,
      },
    );
  }

  async deleteTrade(id: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`DELETE FROM trades WHERE id = $1`, { bind: [id], transaction });
  }

  // ---- portfolio reads (the assistant's) ------------------------------------------------------------------

  /** The securities the family holds or trades, by ticker: what a question may name. */
  familySecurities(familyId: string): Promise<Array<{ id: string; ticker: string | null; name: string | null }>> {
    return selectRows(
      this.sequelize,
      `SELECT s.id, s.ticker, s.name FROM securities s WHERE s.id IN ${FAMILY_SECURITIES} ORDER BY s.ticker NULLS LAST, s.name, s.id`,
      [familyId],
    );
  }

  /**
   * Each investment account's holdings at the end of `date`: its newest snapshot on or before the day,
   * as the ledger values the account (ledger.sql.ts' holdings seam), the securities sold out left out.
   */
  holdingsOn(familyId: string, date: string, securityIds: readonly string[] | null): Promise<HeldRow[]> {
    const bind: unknown[] = [familyId, date];
    const only = securityIds ? `AND h.security_id = ANY(${bindParam(bind, securityIds)}::uuid[])` : "";
    return selectRows<HeldRow>(
      this.sequelize,
      `SELECT a.id AS "accountId", a.name AS account, h.security_id AS "securityId", s.ticker, s.name AS "securityName",
              h.date::text AS date, trim_scale(h.quantity)::text AS quantity, trim_scale(h.price)::text AS price, h.value::text AS value,
              h.cost_basis::text AS "costBasis", trim(h.currency) AS currency
         FROM accounts a
         JOIN LATERAL (SELECT max(x.date) AS date FROM holdings x WHERE x.account_id = a.id AND x.date <= $2::date) last ON true
         JOIN holdings h ON h.account_id = a.id AND h.date = last.date
         JOIN securities s ON s.id = h.security_id
        WHERE a.family_id = $1 AND a.account_type IN (${sqlList(INVESTED_ACCOUNT_TYPES)}) AND h.quantity <> 0 ${only}
        ORDER BY lower(a.name), a.id, h.value DESC, s.ticker, s.id`,
      bind,
    );
  }

  /** The family's trades summed per security and currency, optionally of some securities and between two days. */
  tradeTotals(
    familyId: string,
    filter: { securityIds?: readonly string[]; startDate?: string; endDate?: string },
  ): Promise<TradeTotalsRow[]> {
    const bind: unknown[] = [familyId];
    const conditions = ["t.family_id = $1"];
    if (filter.securityIds) conditions.push(`t.security_id = ANY(${bindParam(bind, filter.securityIds)}::uuid[])`);
    if (filter.startDate) conditions.push(`t.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`t.date <= ${bindParam(bind, filter.endDate)}::date`);
    return selectRows<TradeTotalsRow>(
      this.sequelize,
      `SELECT t.security_id AS "securityId", s.ticker, s.name AS "securityName", trim(t.currency) AS currency,
              count(*) FILTER (WHERE t.qty > 0)::int AS buys,
              trim_scale(coalesce(sum(t.qty) FILTER (WHERE t.qty > 0), 0))::text AS "boughtQuantity",
              coalesce(sum(t.amount) FILTER (WHERE t.qty > 0), 0)::text AS "boughtAmount",
              count(*) FILTER (WHERE t.qty < 0)::int AS sells,
              trim_scale(coalesce(-sum(t.qty) FILTER (WHERE t.qty < 0), 0))::text AS "soldQuantity",
              coalesce(-sum(t.amount) FILTER (WHERE t.qty < 0), 0)::text AS "soldAmount",
              sum(t.fee)::text AS fees, sum(t.amount)::text AS "netAmount",
              min(t.date)::text AS "firstDate", max(t.date)::text AS "lastDate"
         FROM trades t JOIN securities s ON s.id = t.security_id
        WHERE ${conditions.join(" AND ")}
        GROUP BY t.security_id, s.ticker, s.name, t.currency
        ORDER BY sum(t.amount) FILTER (WHERE t.qty > 0) DESC NULLS LAST, s.ticker, t.security_id`,
      bind,
    );
  }

  // ---- holdings from trades ----------------------------------------------------------------------------

  /** Whether a bank provider feeds the account (its holdings are the provider's; trades then value nothing). */
  async providerFed(accountId: string, transaction: Transaction): Promise<boolean> {
    const [row] = await selectRows<{ fed: boolean }>(
      this.sequelize,
      `SELECT EXISTS (SELECT 1 FROM bank_provider_accounts WHERE account_id = $1) AS fed`,
      [accountId],
      transaction,
    );
    return row.fed;
  }

  /**
   * What a recompute from `from` needs when the account has a snapshot before that day: the start
   * (that snapshot, the first trade day, every security traded), the trades from `from` on, and the
   * prices from `from` on with each security's newest one before it. Null when there is no such
   * snapshot (a recompute from the first trade): then calculationInputs reads everything.
   */
  async calculationInputsFrom(
    accountId: string,
    currency: string,
    from: string,
    transaction: Transaction,
  ): Promise<{ trades: CalcTrade[]; prices: CalcPrice[]; start: CalcStart } | null> {
    const [account] = await selectRows<{ first: string | null; traded: string[] | null; before: string | null }>(
      this.sequelize,
      `SELECT (SELECT min(date)::text FROM trades WHERE account_id = $1) AS first,
              (SELECT array_agg(DISTINCT security_id) FROM trades WHERE account_id = $1) AS traded,
              (SELECT max(date)::text FROM holdings WHERE account_id = $1 AND source = 'trades' AND date < $2::date) AS before`,
      [accountId, from],
      transaction,
    );
    if (!account.first || !account.traded || !account.before || account.first >= from) return null;
    const held = await selectRows<CalcStart["held"][number]>(
      this.sequelize,
      `SELECT security_id AS "securityId", quantity::text AS quantity, cost_basis::text AS "costBasis", price::text AS price
         FROM holdings WHERE account_id = $1 AND source = 'trades' AND date = $2::date AND quantity <> 0`,
      [accountId, account.before],
      transaction,
    );
    const trades = await selectRows<CalcTrade>(
      this.sequelize,
      `SELECT security_id AS "securityId", date::text AS date, qty::text AS qty, price::text AS price FROM trades
        WHERE account_id = $1 AND date >= $2::date ORDER BY date, created_at, id`,
      [accountId, from],
      transaction,
    );
    const prices = await selectRows<CalcPrice>(
      this.sequelize,
      `SELECT * FROM (
         SELECT DISTINCT ON (p.security_id) p.security_id AS "securityId", p.date::text AS date, p.price::text AS price
           FROM security_prices p WHERE p.currency = $1 AND p.security_id = ANY($2::uuid[]) AND p.date < $3::date
          ORDER BY p.security_id, p.date DESC) seeds
       UNION ALL
       SELECT p.security_id, p.date::text, p.price::text FROM security_prices p
        WHERE p.currency = $1 AND p.security_id = ANY($2::uuid[]) AND p.date >= $3::date`,
      [currency, account.traded, from],
      transaction,
    );
    return { trades, prices, start: { from, firstTradeDay: account.first, traded: account.traded, held } };
  }

  /** The account's trades and the prices (in its currency) of the securities it traded, as the calculator reads them. */
  async calculationInputs(
    accountId: string,
    currency: string,
    transaction: Transaction,
  ): Promise<{ trades: CalcTrade[]; prices: CalcPrice[] }> {
    const trades = await selectRows<CalcTrade>(
      this.sequelize,
      `SELECT security_id AS "securityId", date::text AS date, qty::text AS qty, price::text AS price FROM trades
        WHERE account_id = $1 ORDER BY date, created_at, id`,
      [accountId],
      transaction,
    );
    const prices = await selectRows<CalcPrice>(
      this.sequelize,
      `SELECT p.security_id AS "securityId", p.date::text AS date, p.price::text AS price FROM security_prices p
        WHERE p.currency = $2 AND p.security_id IN (SELECT DISTINCT security_id FROM trades WHERE account_id = $1)
        ORDER BY p.date`,
      [accountId, currency],
      transaction,
    );
    return { trades, prices };
  }

  /**
   * Writes the account's computed holdings from `from` on: rows of the same security and day keep
   * their id (GET /holdings/{id} stays valid), rows no longer computed go.
   */
  async writeHoldings(
    familyId: string,
    accountId: string,
    currency: string,
    from: string,
    holdings: readonly ComputedHolding[],
    transaction: Transaction,
  ): Promise<void> {
    const rows = holdings.filter((holding) => holding.date >= from);
    const column = <K extends keyof ComputedHolding>(key: K) => rows.map((row) => row[key]);
    await this.sequelize.query(
      `WITH input AS (
         SELECT * FROM unnest($4::uuid[], $5::date[], $6::numeric[], $7::numeric[], $8::numeric[], $9::numeric[])
           AS v(security_id, date, quantity, price, value, cost_basis)),
       removed AS (
         DELETE FROM holdings h WHERE h.account_id = $2 AND h.source = 'trades' AND h.date >= $10::date
            AND NOT EXISTS (SELECT 1 FROM input i WHERE i.security_id = h.security_id AND i.date = h.date))
       INSERT INTO holdings (id, family_id, account_id, security_id, date, quantity, price, value, cost_basis, currency, source)
       SELECT gen_random_uuid(), $1, $2, i.security_id, i.date, i.quantity, i.price, i.value, i.cost_basis, $3, 'trades' FROM input i
       ON CONFLICT (account_id, security_id, date) DO UPDATE
         SET quantity = EXCLUDED.quantity, price = EXCLUDED.price, value = EXCLUDED.value, cost_basis = EXCLUDED.cost_basis,
             currency = EXCLUDED.currency
         WHERE (holdings.quantity, holdings.price, holdings.value, holdings.cost_basis, holdings.currency)
               IS DISTINCT FROM (EXCLUDED.quantity, EXCLUDED.price, EXCLUDED.value, EXCLUDED.cost_basis, EXCLUDED.currency)`,
      {
        bind: [
          familyId,
          accountId,
          currency,
          column("securityId"),
          column("date"),
          column("quantity"),
          column("price"),
          column("value"),
          column("costBasis"),
          from,
        ],
        transaction,
      },
    );
  }

  /** Manual investment accounts holding a security through trades (a price of it changed their holdings). */
  async accountsTrading(
    securityIds: readonly string[],
    transaction: Transaction,
  ): Promise<Array<{ id: string; familyId: string; currency: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT DISTINCT a.id, a.family_id AS "familyId", a.currency FROM trades t JOIN accounts a ON a.id = t.account_id
        WHERE t.security_id = ANY($1::uuid[]) ORDER BY a.id`,
      [securityIds],
      transaction,
    );
  }
}
