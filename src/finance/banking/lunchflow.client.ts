import { negate } from "../money";
import {
  currencyOf,
  decimalOrNull,
  epochToDate,
  guessAccountType,
  plannedRange,
  type ImportedAccount,
  type ImportedHolding,
  type ImportedTransaction,
  type ProviderSync,
  type SyncContext,
} from "./provider";
import { sum } from "./simplefin.client";
import { sanitizeUpstreamText, upstreamRequest, UpstreamError, type UpstreamHttpOptions } from "./upstream-http";

/** Lunch Flow personal API (docs/bank-providers.md): an x-api-key header, JSON everywhere. */
type LunchflowAccount = {
  id: number | string;
  name: string;
  institution_name?: string;
  provider?: string;
  currency?: string;
  status?: string;
};
type LunchflowTransaction = {
  id?: string | number | null;
  amount: number | string;
  currency?: string;
  date: string;
  merchant?: string | null;
  description?: string | null;
  isPending?: boolean;
};
type LunchflowHolding = {
  security?: { name?: string; currency?: string; tickerSymbol?: string; figi?: string; cusp?: string; cusip?: string; isin?: string };
  quantity: number | string;
  price?: number | string;
  value: number | string;
  costBasis?: number | string | null;
  currency?: string;
};

export class LunchflowClient {
  private readonly base: string;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    private readonly http: UpstreamHttpOptions,
  ) {
    this.base = baseUrl.replace(/\/+$/, "");
  }

  async accounts(): Promise<LunchflowAccount[]> {
    return (await this.getJson<{ accounts?: LunchflowAccount[] }>("/accounts")).body.accounts ?? [];
  }

  async balance(accountId: string): Promise<{ amount: string; currency: string | null }> {
    const { body } = await this.getJson<{ balance?: { amount: number | string; currency?: string } }>(
      `/accounts/${encodeURIComponent(accountId)}/balance`,
    );
    return { amount: decimalOrNull(body.balance?.amount) ?? "0", currency: body.balance?.currency ?? null };
  }

  /** Sources disagree on the date parameter names: both spellings are sent, and the answer is filtered here too. */
  async transactions(accountId: string, range: { start: string; end: string }, includePending: boolean): Promise<LunchflowTransaction[]> {
    const params = new URLSearchParams({ start_date: range.start, end_date: range.end, from: range.start, to: range.end });
    if (includePending) params.set("include_pending", "true");
    const { body } = await this.getJson<{ transactions?: LunchflowTransaction[] }>(
      `/accounts/${encodeURIComponent(accountId)}/transactions?${params}`,
    );
    return (body.transactions ?? []).filter((row) => {
      const date = String(row.date ?? "").slice(0, 10);
      return date >= range.start && date <= range.end;
    });
  }

  /** null when the account type has no holdings (501). */
  async holdings(accountId: string): Promise<{ holdings: LunchflowHolding[]; totalValue: unknown; currency?: string } | null> {
    const { status, body } = await this.getJson<{ holdings?: LunchflowHolding[]; totalValue?: unknown; currency?: string }>(
      `/accounts/${encodeURIComponent(accountId)}/holdings`,
      [501],
    );
    if (status === 501) return null;
    return { holdings: body.holdings ?? [], totalValue: body.totalValue, currency: body.currency };
  }

  private async getJson<T>(path: string, passStatuses: number[] = []): Promise<{ status: number; body: T }> {
    const response = await upstreamRequest(
      { ...this.http, passStatuses },
      { method: "GET", url: `${this.base}${path}`, headers: { "x-api-key": this.apiKey, accept: "application/json" } },
    );
    if (passStatuses.includes(response.status)) return { status: response.status, body: {} as T };
    try {
      return { status: response.status, body: JSON.parse(response.text) as T };
    } catch {
      throw new UpstreamError("unavailable", `Lunch Flow answered something that is not JSON: ${sanitizeUpstreamText(response.text)}`);
    }
  }
}

/** Per account: the balance (authoritative for the currency), the transactions of the range, holdings. */
export class LunchflowSync implements ProviderSync {
  constructor(private readonly client: LunchflowClient) {}

  async sync(context: SyncContext): Promise<void> {
    const { from, to } = plannedRange(context);
    const range = { start: epochToDate(from), end: epochToDate(to - 1) };
    for (const account of await this.client.accounts()) {
      if (account.status && !/^(active|connected|ok)$/i.test(account.status)) {
        context.addErrors([`${account.name}: ${sanitizeUpstreamText(String(account.status))}`]);
      }
      const id = String(account.id);
      const balance = await this.client.balance(id);
      const { currency, currencyUrl } = currencyOf(balance.currency ?? account.currency);
      let holdings: ImportedAccount["holdings"];
      let holdingsUnsupported = false;
      if (!context.holdingsUnsupported.has(id)) {
        const answer = await this.client.holdings(id);
        if (answer === null) holdingsUnsupported = true;
        else {
          const items = answer.holdings.map((holding) => toHolding(holding, currency));
          holdings = {
            items,
            totalValue: decimalOrNull(answer.totalValue) ?? sum(items.map((item) => item.value)),
            currency: currencyOf(answer.currency, currency).currency,
            date: epochToDate(Math.floor(Date.now() / 1000)),
          };
        }
      }
      const rows = await this.client.transactions(id, range, context.includePending);
      await context.importBatch({
        accounts: [
          {
            externalId: id,
            name: account.name || "Account",
            institution: account.institution_name ?? null,
            currency,
            currencyUrl,
            accountType: guessAccountType(account.name ?? "", {
              hasHoldings: (holdings?.items.length ?? 0) > 0,
              provider: account.provider,
            }),
            balance: { amount: balance.amount, available: null, date: epochToDate(Math.floor(Date.now() / 1000)) },
            holdings,
            holdingsUnsupported,
          },
        ],
        transactions: new Map([[id, rows.map((row) => toTransaction(row, currency))]]),
        range: { start: range.start, end: epochToDate(to) },
        pendingRequested: context.includePending,
      });
    }
    await context.saveState({ ...context.state, walk: null, historyComplete: true, syncedUntil: to });
  }
}

function toTransaction(row: LunchflowTransaction, accountCurrency: string): ImportedTransaction {
  const id = row.id === null || row.id === undefined ? "" : String(row.id).trim();
  return {
    externalId: id || null,
    date: String(row.date).slice(0, 10),
    // Lunch Flow: negative = money out. Ours: positive = money out.
    amount: negate(decimalOrNull(row.amount) ?? "0"),
    currency: currencyOf(row.currency, accountCurrency).currency,
    name: (row.description || row.merchant || "Transaction").trim(),
    merchant: row.merchant?.trim() || null,
    pending: row.isPending === true,
  };
}

function toHolding(holding: LunchflowHolding, accountCurrency: string): ImportedHolding {
  const security = holding.security ?? {};
  return {
    ticker: security.tickerSymbol?.trim() || null,
    name: security.name?.trim() || null,
    isin: security.isin?.trim() || null,
    figi: security.figi?.trim() || null,
    cusip: (security.cusip ?? security.cusp)?.trim() || null,
    quantity: decimalOrNull(holding.quantity) ?? "0",
    price: decimalOrNull(holding.price),
    value: decimalOrNull(holding.value) ?? "0",
    costBasis: decimalOrNull(holding.costBasis),
    currency: currencyOf(holding.currency ?? security.currency, accountCurrency).currency,
  };
}
