import type { Sequelize, Transaction } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";
import { INVESTED_ACCOUNT_TYPES, sqlList } from "../ledger";
import type { CalcTrade, Position } from "./holdings.calculator";
import { positionsOn, WRITE_PORTFOLIO_DAYS } from "./positions.sql";

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

/** A price to record. */
export type PriceWrite = { securityId: string; date: string; price: string; currency: string; provisional?: boolean };
/** What identifies a price: one per security, day and currency (migration 0022). */
export type PriceKey = { securityId: string; date: string; currency: string };

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
   * A ticker sent without an exchange names an existing security of that ticker on any exchange, as
   * upstream's resolver looks it up (its nil MIC is left out of the lookup); one without an exchange
   * first, then the oldest.
   */
  async securityForTicker(ticker: string, mic: string | null, currency: string, transaction: Transaction): Promise<SecurityRow> {
    const [found] = await selectRows<SecurityRow>(
      this.sequelize,
      `SELECT ${SECURITY_COLUMNS} FROM securities s
        WHERE lower(s.ticker) = lower($1) AND ($2::text IS NULL OR s.exchange_operating_mic = $2)
        ORDER BY s.exchange_operating_mic IS NOT DISTINCT FROM $2 DESC, s.created_at, s.id LIMIT 1`,
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

  /**
   * The account's synthetic cash security (upstream's Security.cash_for): what interest or a fee with
   * no security named is recorded against. Ticker CASH-<ACCOUNT ID>, kind cash, offline (never priced).
   */
  async cashSecurityFor(accountId: string, currency: string, transaction: Transaction): Promise<SecurityRow> {
    const [created] = await selectRows<{ id: string }>(
      this.sequelize,
      `INSERT INTO securities (id, key, ticker, name, currency, kind, offline)
       VALUES (gen_random_uuid(), $1, $2, 'Cash', $3, 'cash', true)
       ON CONFLICT (key) DO UPDATE SET updated_at = securities.updated_at RETURNING id`,
      [`cash:${accountId}`, `CASH-${accountId}`.toUpperCase(), currency],
      transaction,
    );
    return (await this.securityById(created.id, transaction))!;
  }

  /**
   * Records prices (one per security, day and currency: the table's key; a later one replaces the day's).
   * Answers the rows written: a price equal to the stored one is not written again and changes nothing.
   */
  async upsertPrices(prices: readonly PriceWrite[], transaction?: Transaction): Promise<PriceKey[]> {
    if (prices.length === 0) return [];
    return selectRows<PriceKey>(
      this.sequelize,
      `INSERT INTO security_prices AS p (id, security_id, date, price, currency, provisional)
       SELECT gen_random_uuid(), v.security_id, v.date, v.price, v.currency, v.provisional
         FROM unnest($1::uuid[], $2::date[], $3::numeric[], $4::text[], $5::boolean[]) AS v(security_id, date, price, currency, provisional)
       ON CONFLICT (security_id, date, currency) DO UPDATE
         SET price = EXCLUDED.price, provisional = EXCLUDED.provisional, updated_at = now()
         WHERE (p.price, p.provisional) IS DISTINCT FROM (EXCLUDED.price, EXCLUDED.provisional)
       RETURNING p.security_id AS "securityId", p.date::text AS date, trim(p.currency) AS currency`,
      [
        prices.map((p) => p.securityId),
        prices.map((p) => p.date),
        prices.map((p) => p.price),
        prices.map((p) => p.currency),
        prices.map((p) => p.provisional ?? false),
      ],
      transaction,
    );
  }

  /** The stored prices of these (security, day, currency) keys, with their security, in the keys' order. */
  pricesByKeys(keys: readonly PriceKey[], transaction?: Transaction): Promise<SecurityPriceRow[]> {
    return selectRows<SecurityPriceRow>(
      this.sequelize,
      `SELECT ${PRICE_COLUMNS}
         FROM unnest($1::uuid[], $2::date[], $3::text[]) WITH ORDINALITY AS k(security_id, date, currency, position)
         JOIN security_prices p ON p.security_id = k.security_id AND p.date = k.date AND p.currency = k.currency::char(3)
         JOIN securities s ON s.id = p.security_id
        ORDER BY k.position`,
      [keys.map((key) => key.securityId), keys.map((key) => key.date), keys.map((key) => key.currency)],
      transaction,
    );
  }

  /**
   * The securities these tickers name (case-insensitively; any exchange), with their kind: what a price
   * entered by ticker may mean. The caller tells one from several.
   */
  securitiesByTicker(
    tickers: readonly string[],
    transaction?: Transaction,
  ): Promise<Array<{ id: string; ticker: string; exchangeOperatingMic: string | null; kind: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT s.id, s.ticker, s.exchange_operating_mic AS "exchangeOperatingMic", s.kind FROM securities s
        WHERE lower(s.ticker) = ANY($1::text[]) ORDER BY s.created_at, s.id`,
      [[...new Set(tickers.map((ticker) => ticker.toLowerCase()))]],
      transaction,
    );
  }

  /** The securities of these ids that exist, with their ticker and kind. */
  securitiesByIds(ids: readonly string[], transaction?: Transaction): Promise<Array<{ id: string; ticker: string | null; kind: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT s.id, s.ticker, s.kind FROM securities s WHERE s.id = ANY($1::uuid[])`,
      [[...new Set(ids)]],
      transaction,
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
   * Each investment account's holdings at the end of `date`, as the ledger values the account (its
   * holdings seam): a provider-fed account's newest snapshot on or before the day, a manual account's
   * positions on the day (positions.sql.ts); the securities sold out left out.
   */
  holdingsOn(familyId: string, date: string, securityIds: readonly string[] | null): Promise<HeldRow[]> {
    const bind: unknown[] = [familyId, date];
    const only = securityIds ? `h.security_id = ANY(${bindParam(bind, securityIds)}::uuid[])` : "true";
    const invested = `a.family_id = $1 AND a.account_type IN (${sqlList(INVESTED_ACCOUNT_TYPES)})`;
    return selectRows<HeldRow>(
      this.sequelize,
      `SELECT a.id AS "accountId", a.name AS account, h.security_id AS "securityId", s.ticker, s.name AS "securityName",
              h.date::text AS date, trim_scale(h.quantity)::text AS quantity, trim_scale(h.price)::text AS price, h.value::text AS value,
              h.cost_basis::text AS "costBasis", trim(h.currency) AS currency
         FROM (
           SELECT p.account_id, p.security_id, p.date, p.quantity, p.price, p.value, p.cost_basis, p.currency
             FROM accounts a
             JOIN LATERAL (SELECT max(x.date) AS date FROM holdings x WHERE x.account_id = a.id AND x.date <= $2::date) last ON true
             JOIN holdings p ON p.account_id = a.id AND p.date = last.date
            WHERE ${invested} AND p.quantity <> 0
           UNION ALL
           SELECT account_id, security_id, date, quantity, price, value, cost_basis, currency FROM (${positionsOn("$2", invested)}) p
         ) h
         JOIN accounts a ON a.id = h.account_id
         JOIN securities s ON s.id = h.security_id
        WHERE ${only}
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
    // Buys and sells only: a dividend, interest or a fee (a trade of no quantity) moves cash, not what is invested.
    const conditions = ["t.family_id = $1", "t.qty <> 0"];
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

  /** Each security's newest position in the account before the day `from`: where a recompute from that day starts. */
  positionsBefore(accountId: string, from: string, transaction: Transaction): Promise<Position[]> {
    return selectRows<Position>(
      this.sequelize,
      `SELECT DISTINCT ON (security_id) security_id AS "securityId", date::text AS date, quantity::text AS quantity,
              cost_basis::text AS "costBasis", trade_price::text AS "tradePrice"
         FROM positions WHERE account_id = $1 AND date < $2::date ORDER BY security_id, date DESC`,
      [accountId, from],
      transaction,
    );
  }

  /**
   * The account's security trades from the day `from` on, in the order the calculator applies them (date,
   * creation); a cash trade (a dividend, interest, a fee: no quantity) moves cash only. One row, one string: 20,000 rows read as objects through the ORM cost more than
   * computing the positions from them, and one ordered aggregate sorts the trades once (four arrays,
   * each with its ORDER BY, sorted them four times: 280 of a 330 ms read). The fields (a uuid, a date,
   * two numerics) hold no space and no comma.
   */
  async tradesFrom(accountId: string, from: string, transaction: Transaction): Promise<CalcTrade[]> {
    const [read] = await selectRows<{ trades: string | null }>(
      this.sequelize,
      `SELECT string_agg(concat_ws(',', security_id, date, qty, price), ' ' ORDER BY date, created_at, id) AS trades
         FROM trades WHERE account_id = $1 AND date >= $2::date AND qty <> 0`,
      [accountId, from],
      transaction,
    );
    if (!read.trades) return [];
    return read.trades.split(" ").map((trade) => {
      const [securityId, date, qty, price] = trade.split(",");
      return { securityId, date, qty, price };
    });
  }

  /**
   * Writes the account's positions from the day `from` on: a position of the same security and day keeps
   * its id (GET /holdings/{id} stays valid) and is not written again when unchanged; positions no longer
   * computed go. The computed and the stored are compared by one hash full join, then only what differs
   * is deleted, updated or inserted (plain inserts: an upsert's conflict check per row cost more than
   * the comparison when every row is already right).
   */
  async writePositions(
    familyId: string,
    accountId: string,
    currency: string,
    from: string,
    positions: readonly Position[],
    transaction: Transaction,
  ): Promise<void> {
    const column = <K extends keyof Position>(key: K) => positions.map((row) => row[key]);
    await this.sequelize.query(
      `WITH input AS (
         SELECT * FROM unnest($4::uuid[], $5::date[], $6::numeric[], $7::numeric[], $8::numeric[])
           AS v(security_id, date, quantity, cost_basis, trade_price)),
       diff AS MATERIALIZED (
         SELECT x.id, i.security_id, i.date, i.quantity, i.cost_basis, i.trade_price, i.security_id IS NULL AS gone,
                (x.quantity, x.cost_basis, x.trade_price, x.currency) IS DISTINCT FROM (i.quantity, i.cost_basis, i.trade_price, $3::char(3)) AS differs
           FROM input i
           FULL JOIN (SELECT * FROM positions WHERE account_id = $2 AND date >= $9::date) x ON x.security_id = i.security_id AND x.date = i.date),
       removed AS (DELETE FROM positions x USING diff d WHERE d.gone AND x.id = d.id),
       updated AS (
         UPDATE positions x SET quantity = d.quantity, cost_basis = d.cost_basis, trade_price = d.trade_price, currency = $3, updated_at = now()
           FROM diff d WHERE x.id = d.id AND NOT d.gone AND d.differs)
       INSERT INTO positions (id, family_id, account_id, security_id, date, quantity, cost_basis, trade_price, currency)
       SELECT gen_random_uuid(), $1, $2, d.security_id, d.date, d.quantity, d.cost_basis, d.trade_price, $3 FROM diff d WHERE d.id IS NULL`,
      {
        bind: [
          familyId,
          accountId,
          currency,
          column("securityId"),
          column("date"),
          column("quantity"),
          column("costBasis"),
          column("tradePrice"),
          from,
        ],
        transaction,
      },
    );
  }

  /** Rewrites the account's holdings value per day from `from` on, from its positions and prices (positions.sql.ts). */
  async writePortfolioDays(accountId: string, currency: string, from: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(WRITE_PORTFOLIO_DAYS, { bind: [accountId, from, currency], transaction });
  }

  /** Forgets what trades computed for an account a bank provider now feeds (its holdings are the provider's). */
  /**
   * The next account waiting to be revalued (migration 0043) with its family and first trade's day (null:
   * none left), its row locked for `transaction`: one another process is revaluing is skipped, and so are
   * `skipped` (failed in this run).
   */
  async nextRevaluation(
    skipped: readonly string[],
    transaction: Transaction,
  ): Promise<{ accountId: string; familyId: string; from: string | null } | null> {
    const [row] = await selectRows<{ accountId: string; familyId: string; from: string | null }>(
      this.sequelize,
      `SELECT r.account_id AS "accountId", a.family_id AS "familyId",
              (SELECT min(t.date)::text FROM trades t WHERE t.account_id = r.account_id) AS "from"
         FROM holdings_revaluations r JOIN accounts a ON a.id = r.account_id
        WHERE r.account_id <> ALL ($1::uuid[])
        ORDER BY r.account_id LIMIT 1 FOR UPDATE OF r SKIP LOCKED`,
      [skipped],
      transaction,
    );
    return row ?? null;
  }

  async revalued(accountId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query("DELETE FROM holdings_revaluations WHERE account_id = $1", { bind: [accountId], transaction });
  }

  async clearPositions(accountId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `WITH gone AS (DELETE FROM positions WHERE account_id = $1) DELETE FROM portfolio_days WHERE account_id = $1`,
      { bind: [accountId], transaction },
    );
  }

  /**
   * The accounts trading the securities of these changed prices, each with the earliest day a price in
   * its currency changed (what its holdings are valued in): where its revaluation starts.
   */
  async accountsTrading(
    changed: readonly PriceKey[],
    transaction: Transaction,
  ): Promise<Array<{ id: string; familyId: string; currency: string; from: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT a.id, a.family_id AS "familyId", a.currency, min(c.date)::text AS "from"
         FROM unnest($1::uuid[], $2::date[], $3::text[]) AS c(security_id, date, currency)
         JOIN (SELECT DISTINCT account_id, security_id FROM trades WHERE security_id = ANY($1::uuid[])) t ON t.security_id = c.security_id
         JOIN accounts a ON a.id = t.account_id AND a.currency = c.currency::char(3)
        GROUP BY a.id, a.family_id, a.currency ORDER BY a.id`,
      [changed.map((key) => key.securityId), changed.map((key) => key.date), changed.map((key) => key.currency)],
      transaction,
    );
  }
}
