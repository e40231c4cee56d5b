import type { ServerResponse } from "node:http";
import { FakeHttpServer, sendJson, type RecordedRequest } from "./fake-http";

/**
 * The Lunch Flow personal API on loopback (docs/bank-providers.md): x-api-key auth (401 unknown,
 * 403 revoked), numeric account ids, a currency often missing from /accounts (the balance endpoint is
 * authoritative), negative amounts for money out, pending rows with blank ids, 501 for holdings of
 * accounts that have none, and a date filter honouring only one spelling of its parameters.
 */
export type FakeLunchflowTransaction = {
  id: string;
  amount: number | string;
  currency: string;
  date: string;
  merchant: string;
  description: string;
  isPending: boolean;
};

export type FakeLunchflowAccount = {
  id: number;
  name: string;
  institution_name: string;
  provider: string;
  currency?: string;
  status: string;
  balance: { amount: number; currency: string };
  transactions: FakeLunchflowTransaction[];
  /** null: this account type has no holdings (501). */
  holdings: null | { holdings: unknown[]; totalValue: number; currency: string };
};

export class FakeLunchflowServer {
  readonly http: FakeHttpServer;
  accounts: FakeLunchflowAccount[] = [];
  readonly keys = new Map<string, "active" | "revoked">();
  /** Which date parameters this deployment understands; the other spelling is ignored. */
  dateParams: "start_date" | "from" = "from";

  constructor() {
    this.http = new FakeHttpServer((request, res) => this.route(request, res));
  }

  async start(port = 0): Promise<string> {
    return `${await this.http.start(port)}/api/v1`;
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  get requests(): RecordedRequest[] {
    return this.http.requests;
  }

  private route(request: RecordedRequest, res: ServerResponse): void {
    const key = String(request.headers["x-api-key"] ?? "");
    const state = this.keys.get(key);
    if (!state) return sendJson(res, 401, { error: "Unauthorized", message: "Invalid API key" });
    if (state === "revoked") return sendJson(res, 403, { error: "Forbidden", message: "API key revoked" });
    if (request.path === "/api/v1/accounts") {
      return sendJson(res, 200, {
        accounts: this.accounts.map(({ id, name, institution_name, provider, currency, status }) => ({
          id,
          name,
          institution_name,
          institution_logo: null,
          provider,
          ...(currency ? { currency } : {}),
          status,
        })),
        total: this.accounts.length,
      });
    }
    const match = /^\/api\/v1\/accounts\/(\d+)\/(balance|transactions|holdings)$/.exec(request.path);
    const account = match && this.accounts.find((candidate) => candidate.id === Number(match[1]));
    if (!match || !account) return sendJson(res, 404, { error: "Not Found", message: "No such account" });
    if (match[2] === "balance") return sendJson(res, 200, { balance: account.balance });
    if (match[2] === "holdings") {
      if (!account.holdings)
        return sendJson(res, 501, { error: "Not Implemented", message: "Holdings are not supported for this account" });
      return sendJson(res, 200, account.holdings);
    }
    const [startKey, endKey] = this.dateParams === "from" ? ["from", "to"] : ["start_date", "end_date"];
    const start = request.query.get(startKey);
    const end = request.query.get(endKey);
    const pending = request.query.get("include_pending") === "true";
    const rows = account.transactions.filter(
      (row) => (pending || !row.isPending) && (!start || row.date.slice(0, 10) >= start) && (!end || row.date.slice(0, 10) <= end),
    );
    sendJson(res, 200, { transactions: rows.map((row) => ({ ...row, accountId: account.id })), total: rows.length });
  }
}
