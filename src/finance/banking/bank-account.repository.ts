import { QueryTypes, type CreationAttributes, type Sequelize, type Transaction } from "sequelize";
import { AccountModel } from "../accounts";
import { bindParam, readPrepared, selectRows } from "../../platform/common/sql";
import type { ImportedHolding } from "./provider";
import {
  dayNumber,
  dayText,
  HOLDING_DAY_OF_ID,
  HOLDING_DAYS,
  holdingLines,
  holdingWindow,
  pageHoldingDays,
  positionsOn,
  type HoldingLine,
  type HoldingSlot,
  type ReportedBlock,
} from "../investments";
import { INVESTED_ACCOUNT_TYPES, sqlList } from "../ledger";

export type ProviderAccountRow = {
  id: string;
  connectionId: string;
  accountId: string | null;
  externalId: string;
  name: string;
  institution: string | null;
  currency: string;
  currencyUrl: string | null;
  balance: string | null;
  availableBalance: string | null;
  balanceDate: string | null;
  holdingsSupported: boolean | null;
  holdingsTotalValue: string | null;
  holdingsCurrency: string | null;
};

export type HoldingRow = {
  id: string;
  securityId: string;
  accountId: string;
  date: string;
  quantity: string;
  price: string | null;
  value: string;
  costBasis: string | null;
  currency: string;
  ticker: string | null;
  name: string | null;
  isin: string | null;
  figi: string | null;
  cusip: string | null;
  /** provider (a bank sync's snapshot) or trades (computed from a manual account's trades). */
  source: "provider" | "trades";
  createdAt: Date;
  updatedAt: Date;
};

export type HoldingFilter = {
  accountId?: string;
  accountIds?: string[];
  securityId?: string;
  date?: string;
  startDate?: string;
  endDate?: string;
};

const HOLDING_COLUMNS = `h.id, h.security_id AS "securityId", h.account_id AS "accountId", h.date::text AS date, h.quantity, h.price,
  h.value, h.cost_basis AS "costBasis", h.currency, s.ticker, s.name, s.isin, s.figi, s.cusip, h.source,
  h.created_at AS "createdAt", h.updated_at AS "updatedAt"`;

export type BalanceRow = { accountId: string; date: string; balance: string; availableBalance: string | null; currency: string };

const PROVIDER_ACCOUNT_COLUMNS = `id, connection_id AS "connectionId", account_id AS "accountId", external_id AS "externalId",
  name, institution, currency, currency_url AS "currencyUrl", balance, available_balance AS "availableBalance",
  balance_date::text AS "balanceDate", holdings_supported AS "holdingsSupported",
  holdings_total_value AS "holdingsTotalValue", holdings_currency AS "holdingsCurrency"`;

/** Provider accounts, the family accounts they feed, and their balances and holdings. */
export class BankAccountRepository {
  constructor(private readonly sequelize: Sequelize) {}

  private async execute(sql: string, bind: unknown[]): Promise<void> {
    await this.sequelize.query(sql, { bind, type: QueryTypes.RAW });
  }

  // ---- the family accounts a connection feeds --------------------------------------------------------

  linkedAccounts(ids: string[]): Promise<Pick<AccountModel, "id" | "currency" | "classification" | "accountType">[]> {
    return AccountModel.findAll({ where: { id: ids }, raw: true });
  }

  async createAccount(values: CreationAttributes<AccountModel>, transaction: Transaction): Promise<void> {
    await AccountModel.create(values, { transaction });
  }

  async deleteAccount(id: string): Promise<void> {
    await AccountModel.destroy({ where: { id } });
  }

  // ---- accounts, balances, holdings -------------------------------------------------------------------

  providerAccounts(connectionId: string): Promise<ProviderAccountRow[]> {
    return selectRows<ProviderAccountRow>(
      this.sequelize,
      `SELECT ${PROVIDER_ACCOUNT_COLUMNS} FROM bank_provider_accounts WHERE connection_id = $1 ORDER BY institution, name, id`,
      [connectionId],
    );
  }

  /** The provider accounts of these connections of the family, each connection's in the order providerAccounts gives. */
  providerAccountsOfConnections(familyId: string, connectionIds: readonly string[]): Promise<ProviderAccountRow[]> {
    return selectRows<ProviderAccountRow>(
      this.sequelize,
      `SELECT ${PROVIDER_ACCOUNT_COLUMNS} FROM bank_provider_accounts WHERE family_id = $1 AND connection_id = ANY($2::uuid[])
        ORDER BY institution, name, id`,
      [familyId, connectionIds],
    );
  }

  /** One provider account of the family (a bank account seen at a connection), or null. */
  async providerAccount(id: string, familyId: string): Promise<ProviderAccountRow | null> {
    const [row] = await selectRows<ProviderAccountRow>(
      this.sequelize,
      `SELECT ${PROVIDER_ACCOUNT_COLUMNS} FROM bank_provider_accounts WHERE id = $1 AND family_id = $2`,
      [id, familyId],
    );
    return row ?? null;
  }

  /** The provider account that feeds this account, if any. */
  async providerAccountOf(accountId: string): Promise<ProviderAccountRow | null> {
    const [row] = await selectRows<ProviderAccountRow>(
      this.sequelize,
      `SELECT ${PROVIDER_ACCOUNT_COLUMNS} FROM bank_provider_accounts WHERE account_id = $1`,
      [accountId],
    );
    return row ?? null;
  }

  /** Whether a provider has imported any transaction into the account. */
  async hasImportedTransactions(accountId: string, source: string): Promise<boolean> {
    const rows = await selectRows<{ found: number }>(
      this.sequelize,
      `SELECT 1 AS found FROM transactions WHERE account_id = $1 AND source = $2 LIMIT 1`,
      [accountId, source],
    );
    return rows.length > 0;
  }

  /**
   * Points the provider account at the account. False when another provider account took the account
   * in the meantime (one provider account per account, enforced by a unique index).
   */
  async linkProviderAccount(id: string, familyId: string, accountId: string): Promise<boolean> {
    try {
      await this.execute(`UPDATE bank_provider_accounts SET account_id = $3, updated_at = now() WHERE id = $1 AND family_id = $2`, [
        id,
        familyId,
        accountId,
      ]);
      return true;
    } catch (error) {
      if ((error as { parent?: { code?: string } }).parent?.code === "23505") return false;
      throw error;
    }
  }

  async insertProviderAccount(row: {
    id: string;
    familyId: string;
    connectionId: string;
    accountId: string | null;
    externalId: string;
    name: string;
    institution: string | null;
    currency: string;
    currencyUrl: string | null;
  }): Promise<void> {
    await this.execute(
      `INSERT INTO bank_provider_accounts (id, family_id, connection_id, account_id, external_id, name, institution, currency, currency_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (connection_id, external_id) DO NOTHING`,
      [row.id, row.familyId, row.connectionId, row.accountId, row.externalId, row.name, row.institution, row.currency, row.currencyUrl],
    );
  }

  async updateProviderAccount(
    id: string,
    changes: {
      name: string;
      institution: string | null;
      balance?: { amount: string; available: string | null; date: string };
      holdingsSupported?: boolean | null;
      holdingsTotal?: { value: string; currency: string } | null;
    },
  ): Promise<void> {
    await this.execute(
      `UPDATE bank_provider_accounts SET name = $2, institution = $3,
         balance = coalesce($4::numeric, balance), available_balance = CASE WHEN $4::numeric IS NULL THEN available_balance ELSE $5::numeric END,
         balance_date = coalesce($6::date, balance_date),
         holdings_supported = coalesce($7::boolean, holdings_supported),
         holdings_total_value = CASE WHEN $8::numeric IS NULL THEN holdings_total_value ELSE $8::numeric END,
         holdings_currency = coalesce($9, holdings_currency), updated_at = now()
       WHERE id = $1`,
      [
        id,
        changes.name,
        changes.institution,
        changes.balance?.amount ?? null,
        changes.balance?.available ?? null,
        changes.balance?.date ?? null,
        changes.holdingsSupported ?? null,
        changes.holdingsTotal?.value ?? null,
        changes.holdingsTotal?.currency ?? null,
      ],
    );
  }

  /** Keeps the provider's balance of the day in the account's provider history (the ledger anchors it separately). */
  async recordBalance(
    accountId: string,
    balance: { amount: string; available: string | null; date: string },
    currency: string,
    transaction: Transaction,
  ): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO account_balances (account_id, date, balance, available_balance, currency) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account_id, date) DO UPDATE SET balance = EXCLUDED.balance, available_balance = EXCLUDED.available_balance, currency = EXCLUDED.currency`,
      { bind: [accountId, balance.date, balance.amount, balance.available, currency], type: QueryTypes.RAW, transaction },
    );
  }

  /** The newest `limit` daily balances of each of these accounts of the family, newest first. */
  balancesOfAccounts(familyId: string, accountIds: readonly string[], limit: number): Promise<BalanceRow[]> {
    return selectRows<BalanceRow>(
      this.sequelize,
      `SELECT account_id AS "accountId", date::text AS date, balance, available_balance AS "availableBalance", currency FROM (
         SELECT b.*, row_number() OVER (PARTITION BY b.account_id ORDER BY b.date DESC) AS position
           FROM account_balances b JOIN accounts a ON a.id = b.account_id
          WHERE a.family_id = $1 AND b.account_id = ANY($2::uuid[])) balances
        WHERE position <= $3
        ORDER BY date DESC`,
      [familyId, accountIds, limit],
    );
  }

  /**
   * Today's snapshot of an account's holdings replaces any earlier one of the same day; older days stay
   * as history. Returns the price the provider reported for each security (where it reported one),
   * which the wiring records as the security's price of the day.
   */
  async replaceHoldings(
    familyId: string,
    accountId: string,
    date: string,
    holdings: Array<ImportedHolding & { securityKey: string }>,
  ): Promise<Array<{ securityId: string; price: string; currency: string }>> {
    return this.sequelize.transaction(async (transaction) => {
      await this.sequelize.query(`DELETE FROM holdings WHERE account_id = $1 AND date = $2`, { bind: [accountId, date], transaction });
      if (holdings.length === 0) return [];
      const column = <K extends keyof (typeof holdings)[number]>(key: K) => holdings.map((holding) => holding[key]);
      const reported = await selectRows<{ securityId: string; price: string | null; currency: string }>(
        this.sequelize,
        `WITH input AS (
           SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::numeric[], $10::numeric[], $11::numeric[], $12::numeric[], $13::text[])
             AS v(key, ticker, name, isin, figi, cusip, quantity, price, value, cost_basis, currency)),
         securities_in AS (
           INSERT INTO securities (id, key, ticker, name, isin, figi, cusip, currency)
           SELECT DISTINCT ON (key) gen_random_uuid(), key, ticker, name, isin, figi, cusip, currency FROM input
           ON CONFLICT (key) DO UPDATE SET ticker = coalesce(EXCLUDED.ticker, securities.ticker), name = coalesce(EXCLUDED.name, securities.name),
             isin = coalesce(EXCLUDED.isin, securities.isin), figi = coalesce(EXCLUDED.figi, securities.figi),
             cusip = coalesce(EXCLUDED.cusip, securities.cusip), updated_at = now()
           RETURNING id, key)
         INSERT INTO holdings (id, family_id, account_id, security_id, date, quantity, price, value, cost_basis, currency)
         SELECT gen_random_uuid(), $1, $2, s.id, $14::date, sum(i.quantity), max(i.price), sum(i.value), sum(i.cost_basis), max(i.currency)
           FROM input i JOIN securities_in s ON s.key = i.key GROUP BY s.id
         RETURNING security_id AS "securityId", price::text AS price, trim(currency) AS currency`,
        [
          familyId,
          accountId,
          column("securityKey"),
          column("ticker"),
          column("name"),
          column("isin"),
          column("figi"),
          column("cusip"),
          column("quantity"),
          column("price"),
          column("value"),
          column("costBasis"),
          column("currency"),
          date,
        ],
        transaction,
      );
      return reported.flatMap((row) =>
        row.price === null ? [] : [{ securityId: row.securityId, price: row.price, currency: row.currency }],
      );
    });
  }

  /**
   * The family's holdings matching the filter, oldest date first as upstream lists them, with the
   * total: every snapshot a provider reported, and each security of a manual account on every day from
   * its first to today (holding-days.ts), computed for the page only. Two statements: the lines and the
   * reported blocks (a count per account and day) the page is worked out from, then the page's rows,
   * each slot's at its place in the page (a block's within its day in its stored order, value then id).
   */
  async holdingsPage(
    familyId: string,
    filter: HoldingFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: HoldingRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const reported = ["h.family_id = $1"];
    const accounts = ["a.family_id = $1", `a.account_type IN (${sqlList(INVESTED_ACCOUNT_TYPES)})`];
    let security = "true";
    if (filter.accountId) {
      const id = bindParam(bind, filter.accountId);
      reported.push(`h.account_id = ${id}`);
      accounts.push(`a.id = ${id}`);
    }
    if (filter.accountIds?.length) {
      const ids = bindParam(bind, filter.accountIds);
      reported.push(`h.account_id = ANY(${ids}::uuid[])`);
      accounts.push(`a.id = ANY(${ids}::uuid[])`);
    }
    if (filter.securityId) {
      const id = bindParam(bind, filter.securityId);
      reported.push(`h.security_id = ${id}`);
      security = `w.security_id = ${id}`;
    }
    const window = holdingWindow(filter);
    if (window.from !== null) reported.push(`h.date >= ${bindParam(bind, dayText(window.from))}::date`);
    if (window.to !== null) reported.push(`h.date <= ${bindParam(bind, dayText(window.to))}::date`);
    // Prepared (a plan per filter combination, per pooled connection): planning the walk over the
    // securities and its lateral lookups costs as much as running them.
    const found = await readPrepared<{
      accountId: string;
      securityId: string | null;
      ticker: string | null;
      day: string;
      count: number;
      today: string;
    }>(
      this.sequelize,
      `SELECT l."accountId", l."securityId", l.ticker, l.first AS day, 0 AS count, CURRENT_DATE::text AS today
         FROM (${holdingLines(accounts.join(" AND "), security)}) l
       UNION ALL
       SELECT h.account_id, NULL, NULL, h.date::text, count(*)::int, CURRENT_DATE::text FROM holdings h WHERE ${reported.join(" AND ")}
        GROUP BY h.account_id, h.date`,
      bind,
    );
    const lines: HoldingLine[] = [];
    const blocks: ReportedBlock[] = [];
    for (const row of found) {
      if (row.securityId === null) {
        blocks.push({ accountId: row.accountId, day: dayNumber(row.day), count: row.count });
        continue;
      }
      const first = Math.max(dayNumber(row.day), window.from ?? -Infinity);
      const last = Math.min(dayNumber(row.today), window.to ?? Infinity);
      if (first <= last) lines.push({ accountId: row.accountId, securityId: row.securityId, ticker: row.ticker ?? "", first, last });
    }
    const { total, slots } = pageHoldingDays(lines, blocks, offset, limit);
    return { rows: await this.holdingSlots(familyId, slots, filter.securityId ?? null), total };
  }

  /**
   * One holding by id: a provider's snapshot row, or the row of a manual account's security and day
   * its id names (positions.sql.ts, HOLDING_DAYS), when the list has that row.
   */
  async holding(familyId: string, id: string): Promise<HoldingRow | null> {
    const [reported] = await selectRows<HoldingRow>(
      this.sequelize,
      `SELECT ${HOLDING_COLUMNS} FROM holdings h JOIN securities s ON s.id = h.security_id WHERE h.family_id = $1 AND h.id = $2`,
      [familyId, id],
    );
    if (reported) return reported;
    for (const named of await selectRows<{ accountId: string; securityId: string; date: string }>(this.sequelize, HOLDING_DAY_OF_ID, [
      familyId,
      id,
    ])) {
      const { rows } = await this.holdingsPage(familyId, named, 1, 0);
      const row = rows.find((candidate) => candidate.id === id);
      if (row) return row;
    }
    return null;
  }

  /** The rows of a page's slots, in their order: reported blocks read from `holdings`, positions valued on their day. */
  private async holdingSlots(familyId: string, slots: readonly HoldingSlot[], securityId: string | null): Promise<HoldingRow[]> {
    if (slots.length === 0) return [];
    const held = slots.flatMap((slot, place) => (slot.kind === "position" ? [{ ...slot, place }] : []));
    const blocks = slots.flatMap((slot, place) => (slot.kind === "reported" ? [{ ...slot, place }] : []));
    return readPrepared<HoldingRow>(
      this.sequelize,
      `SELECT ${HOLDING_COLUMNS} FROM (
         ${HOLDING_DAYS}
         UNION ALL
         SELECT r.*, b.place FROM unnest($5::int[], $6::uuid[], $7::date[], $8::int[], $9::int[]) AS b(place, account_id, day, skip, take)
           CROSS JOIN LATERAL (
             SELECT h.id, h.family_id, h.account_id, h.security_id, h.date, h.quantity, h.price, h.value, h.cost_basis, h.currency, h.source,
                    h.created_at, h.updated_at
               FROM holdings h
              WHERE h.family_id = $10 AND h.account_id = b.account_id AND h.date = b.day AND ($11::uuid IS NULL OR h.security_id = $11::uuid)
              ORDER BY h.value DESC, h.id OFFSET b.skip LIMIT b.take) r
       ) h JOIN securities s ON s.id = h.security_id
       ORDER BY h.place, h.value DESC, h.id`,
      [
        held.map((slot) => dayText(slot.day)),
        held.map((slot) => slot.securityId),
        held.map((slot) => slot.accountId),
        held.map((slot) => slot.place),
        blocks.map((slot) => slot.place),
        blocks.map((slot) => slot.accountId),
        blocks.map((slot) => dayText(slot.day)),
        blocks.map((slot) => slot.skip),
        blocks.map((slot) => slot.take),
        familyId,
        securityId,
      ],
    );
  }

  /** The holdings of each of these accounts of the family today (a provider's latest snapshot, a manual account's positions), largest value first. */
  latestHoldings(familyId: string, accountIds: readonly string[]): Promise<HoldingRow[]> {
    return selectRows<HoldingRow>(
      this.sequelize,
      `SELECT ${HOLDING_COLUMNS}
         FROM (SELECT h.id, h.account_id, h.security_id, h.date, h.quantity, h.price, h.value, h.cost_basis, h.currency, h.source,
                      h.created_at, h.updated_at
                 FROM holdings h
                WHERE h.family_id = $1 AND h.account_id = ANY($2::uuid[])
                  AND h.date = (SELECT max(date) FROM holdings latest WHERE latest.account_id = h.account_id)
               UNION ALL
               SELECT id, account_id, security_id, date, quantity, price, value, cost_basis, currency, source, created_at, updated_at
                 FROM (${positionsOn("CURRENT_DATE", "a.family_id = $1 AND a.id = ANY($2::uuid[])")}) x) h
         JOIN securities s ON s.id = h.security_id
        ORDER BY h.account_id, h.value DESC, s.ticker`,
      [familyId, accountIds],
    );
  }
}
