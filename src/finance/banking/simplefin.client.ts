import Decimal from "decimal.js";
import { ValidationError } from "../../platform/common/errors";
import { negate } from "../money";
import {
  currencyOf,
  DAY_SECONDS,
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
import {
  LOCAL_SANDBOX_HINT,
  sanitizeUpstreamText,
  upstreamRequest,
  upstreamUrlProblem,
  UpstreamError,
  type UpstreamHttpOptions,
} from "./upstream-http";

/**
 * SimpleFIN Bridge (docs/bank-providers.md). A setup token is base64 of a claim URL that works
 * once; claiming it yields the access URL with Basic credentials, which is all later requests need.
 */

/** Windows stay well under the Bridge's silent 90-day cap (a longer window quietly loses days). */
export const WINDOW_DAYS = 60;

export async function claimUrlOf(setupToken: string, http: UpstreamHttpOptions): Promise<string> {
  const token = setupToken.trim();
  const invalid = new ValidationError([
    "The setup token is not valid: paste the token SimpleFIN Bridge gave you (base64 text that decodes to an https URL)",
  ]);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(token)) throw invalid;
  const decoded = Buffer.from(token, token.includes("-") || token.includes("_") ? "base64url" : "base64").toString("utf8");
  if (!URL.canParse(decoded)) throw invalid;
  const problem = await upstreamUrlProblem(http, decoded);
  // A token of the local sandbox decodes to a plain-http loopback URL: say what to change rather than "not valid".
  if (problem?.includes(LOCAL_SANDBOX_HINT)) throw new ValidationError([`The setup token's claim URL ${problem}`]);
  if (problem !== null) throw invalid;
  return decoded;
}

/**
 * POSTs to the claim URL. The answer is decided on the status code only: the Bridge changed its 403
 * wording once and broke a client that compared the text.
 */
export async function claimSetupToken(setupToken: string, http: UpstreamHttpOptions): Promise<string> {
  const claimUrl = await claimUrlOf(setupToken, http);
  let response;
  try {
    // One attempt: a claim whose answer was lost has still used the token up, and a retry would only 403.
    response = await upstreamRequest(
      { ...http, attempts: 1, passStatuses: [403] },
      { method: "POST", url: claimUrl, headers: { "content-length": "0" }, body: "" },
    );
  } catch (error) {
    if (error instanceof UpstreamError) throw new UpstreamClaimError(error.message);
    throw error;
  }
  if (response.status === 403) {
    throw new ValidationError([
      "SimpleFIN refused this setup token: it was already used, has expired, or does not exist. If you did not claim it yourself, it may be compromised: disable it in SimpleFIN Bridge and create a new one",
    ]);
  }
  const accessUrl = response.text.trim();
  if (!URL.canParse(accessUrl) || !new URL(accessUrl).username || (await upstreamUrlProblem(http, accessUrl)) !== null) {
    throw new UpstreamClaimError("SimpleFIN answered the claim with something that is not an access URL");
  }
  return accessUrl;
}

export class UpstreamClaimError extends Error {}

type SimplefinOrg = { domain?: string; name?: string; "sfin-url"?: string; id?: string };
type SimplefinTransaction = {
  id: string;
  posted: number;
  amount: string;
  description?: string;
  payee?: string;
  memo?: string;
  transacted_at?: number;
  pending?: boolean;
};
type SimplefinHolding = {
  id?: string;
  currency?: string;
  symbol?: string;
  description?: string;
  shares?: string | number;
  market_value?: string | number;
  cost_basis?: string | number;
  purchase_price?: string | number;
};
type SimplefinAccount = {
  org?: SimplefinOrg;
  conn_id?: string;
  id: string;
  name: string;
  currency: string;
  balance: string;
  "available-balance"?: string;
  "balance-date": number;
  transactions?: SimplefinTransaction[];
  holdings?: SimplefinHolding[];
};
type SimplefinError = { code: string; msg: string; conn_id?: string; account_id?: string };
export type SimplefinAccountSet = {
  errors?: string[];
  errlist?: SimplefinError[];
  accounts?: SimplefinAccount[];
  connections?: Array<{ conn_id: string; name?: string }>;
};

export class SimplefinClient {
  private readonly base: string;
  private readonly authorization: string;

  constructor(
    accessUrl: string,
    private readonly http: UpstreamHttpOptions,
  ) {
    const url = new URL(accessUrl);
    this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`;
    url.username = "";
    url.password = "";
    this.base = url.toString().replace(/\/+$/, "");
  }

  /** The credentials inside an access URL, for redaction. */
  static secretsOf(accessUrl: string): string[] {
    const url = new URL(accessUrl);
    const pair = `${url.username}:${url.password}`;
    return [accessUrl, url.username, url.password, Buffer.from(decodeURIComponent(pair)).toString("base64")];
  }

  async info(): Promise<string[]> {
    const body = await this.getJson<{ versions?: string[] }>("/info");
    return Array.isArray(body.versions) ? body.versions : [];
  }

  accounts(query: { start: number; end: number; pending: boolean; version2: boolean }): Promise<SimplefinAccountSet> {
    const params = new URLSearchParams({ "start-date": String(query.start), "end-date": String(query.end) });
    // The Bridge only checks that `pending` is present (pending=0 includes them too): send it only when wanted.
    if (query.pending) params.set("pending", "1");
    if (query.version2) params.set("version", "2");
    return this.getJson<SimplefinAccountSet>(`/accounts?${params}`);
  }

  private async getJson<T>(path: string): Promise<T> {
    const response = await upstreamRequest(this.http, {
      method: "GET",
      url: `${this.base}${path}`,
      headers: { authorization: this.authorization, accept: "application/json" },
    });
    try {
      return JSON.parse(response.text) as T;
    } catch {
      throw new UpstreamError("unavailable", `SimpleFIN answered something that is not JSON: ${sanitizeUpstreamText(response.text)}`);
    }
  }
}

/**
 * A sync walks [from, to) in half-open windows of at most WINDOW_DAYS, newest first, one request per
 * window for all accounts of the connection; after each window the cursor is saved, so a sync cut short
 * (a killed worker, a spent budget) resumes where it stopped instead of starting over.
 */
export class SimplefinSync implements ProviderSync {
  constructor(private readonly client: SimplefinClient) {}

  async sync(context: SyncContext): Promise<void> {
    const walk = context.state.walk ?? { ...plannedRange(context), cursor: plannedRange(context).to };
    const version2 = (context.state.versions ?? []).some((version) => version.startsWith("2"));
    while (walk.cursor > walk.from) {
      const start = Math.max(walk.from, walk.cursor - WINDOW_DAYS * DAY_SECONDS);
      const answer = await this.client.accounts({ start, end: walk.cursor, pending: context.includePending, version2 });
      this.importErrors(answer, context);
      await context.importBatch({
        accounts: (answer.accounts ?? []).map((account) => toAccount(account, answer, walk.cursor === walk.to)),
        transactions: new Map(
          (answer.accounts ?? []).map((account) => [account.id, (account.transactions ?? []).map((row) => toTransaction(row, account))]),
        ),
        range: { start: epochToDate(start), end: epochToDate(walk.cursor) },
        pendingRequested: context.includePending,
      });
      walk.cursor = start;
      await context.saveState({ ...context.state, walk: walk.cursor > walk.from ? { ...walk } : null });
    }
    await context.saveState({ ...context.state, walk: null, historyComplete: true, syncedUntil: walk.to });
  }

  /**
   * `errors` (and v2 `errlist`) with accounts is a partial failure: import what came, record the rest.
   * Without accounts it is fatal for this sync; a gen.auth code means the access URL itself is dead.
   */
  private importErrors(answer: SimplefinAccountSet, context: SyncContext): void {
    const structured = answer.errlist ?? [];
    const messages = [
      ...(answer.errors ?? []).map((text) => sanitizeUpstreamText(String(text))),
      ...structured.map((error) => `${error.code}: ${sanitizeUpstreamText(String(error.msg ?? ""))}`),
    ].filter((text, index, all) => text && all.indexOf(text) === index);
    if (structured.some((error) => error.code === "gen.auth")) throw new UpstreamError("auth", messages.join("; "));
    if (messages.length === 0) return;
    if (!answer.accounts || answer.accounts.length === 0) throw new UpstreamError("bad_response", messages.join("; "));
    context.addErrors(messages);
  }
}

function toAccount(account: SimplefinAccount, answer: SimplefinAccountSet, current: boolean): ImportedAccount {
  const { currency, currencyUrl } = currencyOf(account.currency);
  const institution =
    account.org?.name ??
    account.org?.domain ??
    answer.connections?.find((connection) => connection.conn_id === account.conn_id)?.name ??
    null;
  const date = epochToDate(Number(account["balance-date"]) || Math.floor(Date.now() / 1000));
  const holdings = (account.holdings ?? []).map((holding) => toHolding(holding, currency));
  return {
    externalId: String(account.id),
    name: account.name || "Account",
    institution,
    currency,
    currencyUrl,
    accountType: guessAccountType(account.name ?? "", { hasHoldings: holdings.length > 0 }),
    balance: current
      ? { amount: decimalOrNull(account.balance) ?? "0", available: decimalOrNull(account["available-balance"]), date }
      : undefined,
    holdings:
      current && account.holdings
        ? { items: holdings, totalValue: sum(holdings.map((holding) => holding.value)), currency, date }
        : undefined,
  };
}

function toTransaction(row: SimplefinTransaction, account: SimplefinAccount): ImportedTransaction {
  const pending = row.pending === true || !row.posted;
  const when = row.posted || row.transacted_at || Math.floor(Date.now() / 1000);
  return {
    externalId: row.id ? String(row.id) : null,
    date: epochToDate(Number(when)),
    // SimpleFIN: positive = money in. Ours: positive = money out.
    amount: negate(decimalOrNull(row.amount) ?? "0"),
    currency: currencyOf(account.currency).currency,
    name: (row.description || row.payee || row.memo || "Transaction").trim(),
    merchant: row.payee?.trim() || null,
    pending,
  };
}

function toHolding(holding: SimplefinHolding, accountCurrency: string): ImportedHolding {
  const quantity = decimalOrNull(holding.shares) ?? "0";
  const value = decimalOrNull(holding.market_value) ?? "0";
  return {
    ticker: holding.symbol?.trim() || null,
    name: holding.description?.trim() || null,
    isin: null,
    figi: null,
    cusip: null,
    quantity,
    // The market price per share: purchase_price is what was paid, not what it is worth now.
    price: new Decimal(quantity).isZero() ? null : new Decimal(value).dividedBy(quantity).toDecimalPlaces(10).toFixed(),
    value,
    costBasis: decimalOrNull(holding.cost_basis),
    currency: currencyOf(holding.currency, accountCurrency).currency,
  };
}

export function sum(values: string[]): string {
  return values.reduce((total, value) => total.plus(value), new Decimal(0)).toFixed();
}
