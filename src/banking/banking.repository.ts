import { QueryTypes, type Attributes, type CreationAttributes, type Sequelize, type WhereOptions } from "sequelize";
import { AccountModel } from "../accounts/account.model";
import { selectRows } from "../common/sql";
import { BankConnectionModel, BankSyncRunModel, type BankProvider, type ConnectionStatus, type SyncRunStatus } from "./banking.model";
import type { ImportedHolding, SyncState } from "./provider";

/** What a client may change on a connection. */
export type ConnectionChanges = Partial<Pick<BankConnectionModel, "name" | "includePending" | "debugLogging" | "autoCreateAccounts">>;

export type ConnectionRow = {
  id: string;
  familyId: string;
  provider: BankProvider;
  name: string;
  credentials: string;
  baseUrl: string | null;
  status: ConnectionStatus;
  includePending: boolean;
  debugLogging: boolean;
  autoCreateAccounts: boolean;
  lastError: string | null;
  lastSyncAt: Date | null;
  syncState: SyncState;
  requestsToday: number;
  createdAt: Date;
  updatedAt: Date;
};

export type SyncRunRow = {
  id: string;
  connectionId: string;
  status: SyncRunStatus;
  trigger: string;
  createdCount: number;
  updatedCount: number;
  skippedCount: number;
  requestCount: number;
  errors: string[];
  startedAt: Date | null;
  heartbeatAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  /** Set where the run is read apart from its connection. */
  connectionName?: string;
};

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
};

export type BalanceRow = { accountId: string; date: string; balance: string; availableBalance: string | null; currency: string };

/** An imported transaction as the sync compares it: provider key, content and fingerprint. */
export type ExistingTransaction = {
  id: string;
  accountId: string;
  externalId: string | null;
  date: string;
  amount: string;
  currency: string;
  pending: boolean;
  providerName: string | null;
  providerFingerprint: string | null;
};

export type TransactionWrite = {
  id: string;
  accountId: string;
  date: string;
  amount: string;
  currency: string;
  name: string;
  merchantId: string | null;
  pending: boolean;
  externalId: string;
  fingerprint: string;
};

const CONNECTION_COLUMNS = `id, family_id AS "familyId", provider, name, credentials, base_url AS "baseUrl", status,
  include_pending AS "includePending", debug_logging AS "debugLogging",
  auto_create_accounts AS "autoCreateAccounts", last_error AS "lastError",
  last_sync_at AS "lastSyncAt", sync_state AS "syncState",
  CASE WHEN requests_day = current_date THEN requests_today ELSE 0 END AS "requestsToday",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const RUN_COLUMNS = `id, connection_id AS "connectionId", status, trigger, created_count AS "createdCount",
  updated_count AS "updatedCount", skipped_count AS "skippedCount", request_count AS "requestCount", errors,
  started_at AS "startedAt", heartbeat_at AS "heartbeatAt", finished_at AS "finishedAt", created_at AS "createdAt"`;

/** Runs read with their connection's name (the family-wide run routes, where no connection is at hand). */
const withConnectionName = (runs: string) =>
  `SELECT runs.*, c.name AS "connectionName" FROM (${runs}) runs JOIN bank_connections c ON c.id = runs."connectionId"
    ORDER BY runs."createdAt" DESC, runs.id DESC`;

const HOLDING_COLUMNS = `h.id, h.security_id AS "securityId", h.account_id AS "accountId", h.date::text AS date, h.quantity, h.price,
  h.value, h.cost_basis AS "costBasis", h.currency, s.ticker, s.name, s.isin, s.figi, s.cusip`;

export type HoldingFilter = {
  id?: string;
  accountId?: string;
  accountIds?: string[];
  securityId?: string;
  date?: string;
  startDate?: string;
  endDate?: string;
};

const PROVIDER_ACCOUNT_COLUMNS = `id, connection_id AS "connectionId", account_id AS "accountId", external_id AS "externalId",
  name, institution, currency, currency_url AS "currencyUrl", balance, available_balance AS "availableBalance",
  balance_date::text AS "balanceDate", holdings_supported AS "holdingsSupported",
  holdings_total_value AS "holdingsTotalValue", holdings_currency AS "holdingsCurrency"`;

export class BankingRepository {
  constructor(private readonly sequelize: Sequelize) {}

  private async execute(sql: string, bind: unknown[]): Promise<void> {
    await this.sequelize.query(sql, { bind, type: QueryTypes.RAW });
  }

  // ---- connection and run writes ---------------------------------------------------------------------

  async createConnection(values: CreationAttributes<BankConnectionModel>): Promise<void> {
    await BankConnectionModel.create(values);
  }

  /** Updates connection `id`, only within `familyId` when given (a client's request; the sync worker passes none). */
  async updateConnection(id: string, changes: Partial<Attributes<BankConnectionModel>>, familyId?: string): Promise<void> {
    const where: WhereOptions<BankConnectionModel> = familyId ? { id, familyId } : { id };
    await BankConnectionModel.update(changes, { where });
  }

  async deleteConnection(familyId: string, id: string): Promise<void> {
    await BankConnectionModel.destroy({ where: { id, familyId } });
  }

  async createRun(values: CreationAttributes<BankSyncRunModel>): Promise<void> {
    await BankSyncRunModel.create(values);
  }

  async updateRun(id: string, changes: Partial<Attributes<BankSyncRunModel>>): Promise<void> {
    await BankSyncRunModel.update(changes, { where: { id } });
  }

  // ---- the family accounts a connection feeds --------------------------------------------------------

  linkedAccounts(ids: string[]): Promise<Pick<AccountModel, "id" | "currency" | "classification">[]> {
    return AccountModel.findAll({ where: { id: ids }, raw: true });
  }

  async createAccount(values: CreationAttributes<AccountModel>): Promise<void> {
    await AccountModel.create(values);
  }

  async deleteAccount(id: string): Promise<void> {
    await AccountModel.destroy({ where: { id } });
  }

  // ---- connections and runs -------------------------------------------------------------------------

  connections(familyId: string): Promise<ConnectionRow[]> {
    return selectRows<ConnectionRow>(
      this.sequelize,
      `SELECT ${CONNECTION_COLUMNS} FROM bank_connections WHERE family_id = $1 ORDER BY created_at, id`,
      [familyId],
    );
  }

  /** Without a family: for the worker, which acts on a connection id from its own queue. */
  async connection(id: string, familyId?: string): Promise<ConnectionRow | null> {
    const [row] = await selectRows<ConnectionRow>(
      this.sequelize,
      `SELECT ${CONNECTION_COLUMNS} FROM bank_connections WHERE id = $1 ${familyId ? "AND family_id = $2" : ""}`,
      familyId ? [id, familyId] : [id],
    );
    return row ?? null;
  }

  /** Connections the refresh should sync now: not waiting for new credentials and not synced lately. */
  dueConnections(olderThanSeconds: number): Promise<ConnectionRow[]> {
    return selectRows<ConnectionRow>(
      this.sequelize,
      `SELECT ${CONNECTION_COLUMNS} FROM bank_connections
        WHERE status <> 'requires_update' AND (last_sync_at IS NULL OR last_sync_at < now() - make_interval(secs => $1))`,
      [olderThanSeconds],
    );
  }

  runs(connectionId: string, limit: number): Promise<SyncRunRow[]> {
    return selectRows<SyncRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE connection_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      [connectionId],
    );
  }

  /** The newest `limit` runs of each of these connections of the family, newest first. */
  runsOfConnections(familyId: string, connectionIds: readonly string[], limit: number): Promise<SyncRunRow[]> {
    return selectRows<SyncRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM (
         SELECT *, row_number() OVER (PARTITION BY connection_id ORDER BY created_at DESC, id DESC) AS position
           FROM bank_sync_runs WHERE family_id = $1 AND connection_id = ANY($2::uuid[])) runs
        WHERE position <= $3
        ORDER BY created_at DESC, id DESC`,
      [familyId, connectionIds, limit],
    );
  }

  /** The family's runs of every connection, newest first, a page at a time with the total. */
  async runsPage(familyId: string, limit: number, offset: number): Promise<{ rows: SyncRunRow[]; total: number }> {
    const rows = await selectRows<SyncRunRow & { total: string }>(
      this.sequelize,
      withConnectionName(
        `SELECT ${RUN_COLUMNS}, count(*) OVER () AS total FROM bank_sync_runs WHERE family_id = $1
          ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      ),
      [familyId, limit, offset],
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(
      this.sequelize,
      "SELECT count(*) AS total FROM bank_sync_runs WHERE family_id = $1",
      [familyId],
    );
    return { rows, total: Number(count.total) };
  }

  async familyRun(familyId: string, id: string): Promise<SyncRunRow | null> {
    const [row] = await selectRows<SyncRunRow>(
      this.sequelize,
      withConnectionName(`SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE family_id = $1 AND id = $2`),
      [familyId, id],
    );
    return row ?? null;
  }

  async run(id: string): Promise<SyncRunRow | null> {
    const [row] = await selectRows<SyncRunRow>(this.sequelize, `SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** The run a sync job continues: the newest one not yet finished. */
  async openRun(connectionId: string): Promise<SyncRunRow | null> {
    const [row] = await selectRows<SyncRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM bank_sync_runs WHERE connection_id = $1 AND status IN ('pending', 'syncing')
        ORDER BY created_at DESC LIMIT 1`,
      [connectionId],
    );
    return row ?? null;
  }

  /**
   * Counts one request against the connection's day and refuses it past the budget (null budget: count
   * only). The day rolls over by itself: a new date restarts the count.
   */
  async countRequest(connectionId: string, runId: string, budget: number | null): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `WITH counted AS (
         UPDATE bank_connections
            SET requests_today = CASE WHEN requests_day = current_date THEN requests_today + 1 ELSE 1 END, requests_day = current_date
          WHERE id = $1 AND ($2::int IS NULL OR requests_day IS DISTINCT FROM current_date OR requests_today < $2::int)
          RETURNING id)
       UPDATE bank_sync_runs SET request_count = request_count + 1, heartbeat_at = now() WHERE id = $3 AND EXISTS (SELECT 1 FROM counted)
       RETURNING id`,
      [connectionId, budget, runId],
    );
    return rows.length > 0;
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

  async recordBalance(
    accountId: string,
    balance: { amount: string; available: string | null; date: string },
    currency: string,
    accountBalance: string,
  ): Promise<void> {
    await this.execute(
      `WITH history AS (
         INSERT INTO account_balances (account_id, date, balance, available_balance, currency) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, date) DO UPDATE SET balance = EXCLUDED.balance, available_balance = EXCLUDED.available_balance, currency = EXCLUDED.currency)
       UPDATE accounts SET balance = $6, updated_at = now() WHERE id = $1 AND balance IS DISTINCT FROM $6::numeric`,
      [accountId, balance.date, balance.amount, balance.available, currency, accountBalance],
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

  /** Today's snapshot of an account's holdings replaces any earlier one of the same day; older days stay as history. */
  async replaceHoldings(
    familyId: string,
    accountId: string,
    date: string,
    holdings: Array<ImportedHolding & { securityKey: string }>,
  ): Promise<void> {
    await this.sequelize.transaction(async (transaction) => {
      await this.sequelize.query(`DELETE FROM holdings WHERE account_id = $1 AND date = $2`, { bind: [accountId, date], transaction });
      if (holdings.length === 0) return;
      const column = <K extends keyof (typeof holdings)[number]>(key: K) => holdings.map((holding) => holding[key]);
      await this.sequelize.query(
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
           FROM input i JOIN securities_in s ON s.key = i.key GROUP BY s.id`,
        {
          bind: [
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
        },
      );
    });
  }

  /** The latest snapshot of the holdings of each of these accounts of the family, largest value first. */
  /** Every stored holding snapshot of the family matching the filter, newest date first, with the total. */
  async holdingsPage(
    familyId: string,
    filter: HoldingFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: HoldingRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const param = (value: unknown) => {
      bind.push(value);
      return `$${bind.length}`;
    };
    const conditions = ["h.family_id = $1"];
    if (filter.id) conditions.push(`h.id = ${param(filter.id)}`);
    if (filter.accountId) conditions.push(`h.account_id = ${param(filter.accountId)}`);
    if (filter.accountIds?.length) conditions.push(`h.account_id = ANY(${param(filter.accountIds)}::uuid[])`);
    if (filter.securityId) conditions.push(`h.security_id = ${param(filter.securityId)}`);
    if (filter.date) conditions.push(`h.date = ${param(filter.date)}::date`);
    if (filter.startDate) conditions.push(`h.date >= ${param(filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`h.date <= ${param(filter.endDate)}::date`);
    const where = conditions.join(" AND ");
    const rows = await selectRows<HoldingRow & { total: string }>(
      this.sequelize,
      `SELECT ${HOLDING_COLUMNS}, count(*) OVER () AS total FROM holdings h JOIN securities s ON s.id = h.security_id
        WHERE ${where} ORDER BY h.date DESC, h.account_id, h.value DESC, h.id LIMIT ${limit} OFFSET ${offset}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(this.sequelize, `SELECT count(*) AS total FROM holdings h WHERE ${where}`, bind);
    return { rows, total: Number(count.total) };
  }

  latestHoldings(familyId: string, accountIds: readonly string[]): Promise<HoldingRow[]> {
    return selectRows<HoldingRow>(
      this.sequelize,
      `SELECT ${HOLDING_COLUMNS}
         FROM holdings h JOIN securities s ON s.id = h.security_id
        WHERE h.family_id = $1 AND h.account_id = ANY($2::uuid[])
          AND h.date = (SELECT max(date) FROM holdings latest WHERE latest.account_id = h.account_id)
        ORDER BY h.account_id, h.value DESC, s.ticker`,
      [familyId, accountIds],
    );
  }

  // ---- transactions -----------------------------------------------------------------------------------

  /** Merchant ids by exact name, created when missing (names are unique per family, case-insensitively). */
  async merchantIds(familyId: string, names: string[]): Promise<Map<string, string>> {
    if (names.length === 0) return new Map();
    await this.execute(
      `INSERT INTO merchants (id, family_id, name)
       SELECT gen_random_uuid(), $1, n FROM (SELECT DISTINCT ON (lower(n)) n FROM unnest($2::text[]) n) names
       ON CONFLICT (family_id, lower(name)) DO NOTHING`,
      [familyId, names],
    );
    const rows = await selectRows<{ id: string; name: string }>(
      this.sequelize,
      `SELECT id, lower(name) AS name FROM merchants WHERE family_id = $1 AND lower(name) = ANY(SELECT lower(n) FROM unnest($2::text[]) n)`,
      [familyId, names],
    );
    const byLower = new Map(rows.map((row) => [row.name, row.id]));
    return new Map(names.map((name) => [name, byLower.get(name.toLowerCase())!]));
  }

  existingTransactions(accountIds: string[], source: string, start: string, end: string): Promise<ExistingTransaction[]> {
    return selectRows<ExistingTransaction>(
      this.sequelize,
      `SELECT id, account_id AS "accountId", external_id AS "externalId", date::text AS date, amount::text AS amount, currency, pending,
              provider_name AS "providerName", provider_fingerprint AS "providerFingerprint"
         FROM transactions
        WHERE account_id = ANY($1::uuid[]) AND source = $2 AND date >= $3::date AND date < $4::date`,
      [accountIds, source, start, end],
    );
  }

  /**
   * New and changed rows in one statement. A name the user changed (it no longer equals what the
   * provider last sent) is kept; category, notes and tags are never touched. Rows whose fingerprint is
   * unchanged are not rewritten. Returns how many rows were inserted and how many updated.
   */
  async upsertTransactions(familyId: string, source: string, rows: TransactionWrite[]): Promise<{ created: number; updated: number }> {
    if (rows.length === 0) return { created: 0, updated: 0 };
    const [result] = await selectRows<{ created: string; updated: string }>(
      this.sequelize,
      `WITH written AS (
         INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, merchant_id, pending, external_id, source, provider_name, provider_fingerprint)
         SELECT v.id, $1, v.account_id, v.date, v.amount, v.currency, v.name, v.merchant_id, v.pending, v.external_id, $2, v.name, v.fingerprint
           FROM unnest($3::uuid[], $4::uuid[], $5::date[], $6::numeric[], $7::text[], $8::text[], $9::uuid[], $10::boolean[], $11::text[], $12::text[])
             AS v(id, account_id, date, amount, currency, name, merchant_id, pending, external_id, fingerprint)
         ON CONFLICT (account_id, (coalesce(source, '')), external_id) WHERE external_id IS NOT NULL DO UPDATE SET
           date = EXCLUDED.date, amount = EXCLUDED.amount, currency = EXCLUDED.currency, pending = EXCLUDED.pending,
           name = CASE WHEN transactions.name IS NOT DISTINCT FROM transactions.provider_name THEN EXCLUDED.name ELSE transactions.name END,
           merchant_id = coalesce(transactions.merchant_id, EXCLUDED.merchant_id),
           provider_name = EXCLUDED.provider_name, provider_fingerprint = EXCLUDED.provider_fingerprint, updated_at = now()
         WHERE transactions.provider_fingerprint IS DISTINCT FROM EXCLUDED.provider_fingerprint
         RETURNING (xmax = 0) AS inserted)
       SELECT count(*) FILTER (WHERE inserted) AS created, count(*) FILTER (WHERE NOT inserted) AS updated FROM written`,
      [familyId, source, ...columnsOf(rows)],
    );
    return { created: Number(result.created), updated: Number(result.updated) };
  }

  /**
   * Rows that come back under a new provider key (a pending row posted, a re-issued id) keep their id,
   * user edits and tags; only the provider's fields and the key change.
   */
  async rekeyTransactions(rows: TransactionWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await this.execute(
      `UPDATE transactions t SET external_id = v.external_id, date = v.date, amount = v.amount, currency = v.currency, pending = v.pending,
              name = CASE WHEN t.name IS NOT DISTINCT FROM t.provider_name THEN v.name ELSE t.name END,
              merchant_id = coalesce(t.merchant_id, v.merchant_id), provider_name = v.name, provider_fingerprint = v.fingerprint, updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[], $3::date[], $4::numeric[], $5::text[], $6::text[], $7::uuid[], $8::boolean[], $9::text[], $10::text[])
           AS v(id, account_id, date, amount, currency, name, merchant_id, pending, external_id, fingerprint)
        WHERE t.id = v.id AND t.account_id = v.account_id`,
      columnsOf(rows),
    );
  }

  async deleteTransactions(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.execute(`DELETE FROM transactions WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /** Pending rows that never posted: gone after this long whatever the provider says. */
  async expireStalePending(accountIds: string[], source: string, before: string): Promise<number> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `DELETE FROM transactions WHERE account_id = ANY($1::uuid[]) AND source = $2 AND pending AND date < $3::date RETURNING id`,
      [accountIds, source, before],
    );
    return rows.length;
  }
}

function columnsOf(rows: TransactionWrite[]): unknown[] {
  const ids: string[] = [];
  const accounts: string[] = [];
  const dates: string[] = [];
  const amounts: string[] = [];
  const currencies: string[] = [];
  const names: string[] = [];
  const merchants: (string | null)[] = [];
  const pendings: boolean[] = [];
  const externalIds: string[] = [];
  const fingerprints: string[] = [];
  for (const row of rows) {
    ids.push(row.id);
    accounts.push(row.accountId);
    dates.push(row.date);
    amounts.push(row.amount);
    currencies.push(row.currency);
    names.push(row.name);
    merchants.push(row.merchantId);
    pendings.push(row.pending);
    externalIds.push(row.externalId);
    fingerprints.push(row.fingerprint);
  }
  return [ids, accounts, dates, amounts, currencies, names, merchants, pendings, externalIds, fingerprints];
}
