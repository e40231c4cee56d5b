import { randomBytes } from "node:crypto";
import { FakeHttpServer, sendJson, type RecordedRequest } from "./fake-http";

/**
 * A SimpleFIN Bridge on loopback, as docs/bank-providers.md describes it: one-time setup tokens
 * (base64 of a claim URL), access URLs with Basic credentials, /info and /accounts with start-date
 * (inclusive) and end-date (exclusive) in epoch seconds, a silent 90-day cap on the range, `pending`
 * honoured by presence only, `errors` and v2 `errlist`, holdings, and revocable access (403).
 */
export type FakeSimplefinTransaction = {
  id: string;
  posted: number;
  amount: string;
  description: string;
  payee?: string;
  transacted_at?: number;
  pending?: boolean;
};

export type FakeSimplefinAccount = {
  id: string;
  name: string;
  currency: string;
  balance: string;
  "available-balance"?: string;
  "balance-date": number;
  org: { name: string; domain?: string; "sfin-url": string };
  transactions: FakeSimplefinTransaction[];
  holdings?: Array<Record<string, string>>;
};

const DAY = 86_400;
const CAP_SECONDS = 90 * DAY;

export class FakeSimplefinBridge {
  readonly http: FakeHttpServer;
  accounts: FakeSimplefinAccount[] = [];
  versions = ["1.0", "2.0"];
  /** Serves GET /sandbox/setup-token (npm run dev:banks); tests claim tokens from newSetupToken(). */
  sandbox = false;
  /** Added to every /accounts answer; with `partial` false the accounts are left out (a fatal error). */
  errors: { errors: string[]; errlist?: Array<{ code: string; msg: string }>; partial: boolean } | null = null;
  private readonly tokens = new Map<string, { claimed: boolean; user: string; password: string }>();
  private readonly access = new Map<string, { revoked: boolean }>();

  constructor() {
    this.http = new FakeHttpServer((request, res) => this.route(request, res));
  }

  start(port = 0): Promise<string> {
    return this.http.start(port);
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  get requests(): RecordedRequest[] {
    return this.http.requests;
  }

  /** A fresh setup token, as the Bridge's web page hands it to a user. */
  newSetupToken(): string {
    const id = randomBytes(8).toString("hex");
    this.tokens.set(id, { claimed: false, user: `user${id}`, password: `pw${randomBytes(8).toString("hex")}` });
    return Buffer.from(`${this.http.url}/claim/${id}`).toString("base64");
  }

  /** Every access URL issued so far stops working, as when the user revokes the app in the Bridge. */
  revokeAll(): void {
    for (const entry of this.access.values()) entry.revoked = true;
  }

  /** The windows requested from /accounts, as [start, end) epoch seconds. */
  accountWindows(): Array<{ start: number; end: number; pending: boolean }> {
    return this.http.requestsTo(/\/accounts$/).map((request) => ({
      start: Number(request.query.get("start-date")),
      end: Number(request.query.get("end-date")),
      pending: request.query.has("pending"),
    }));
  }

  private route(request: RecordedRequest, res: import("node:http").ServerResponse): void {
    // Sandbox only (`npm run dev:banks`): a fresh one-time setup token, as the Bridge's web page hands out.
    if (this.sandbox && request.method === "GET" && request.path === "/sandbox/setup-token") {
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.end(this.newSetupToken());
    }
    const claim = /^\/claim\/([a-z0-9]+)$/.exec(request.path);
    if (claim && request.method === "POST") {
      const token = this.tokens.get(claim[1]);
      // The wording changed in 2026; clients must go by the status code.
      if (!token || token.claimed) return sendJson(res, 403, "Forbidden: token does not exist or was already claimed. (wording v2)");
      token.claimed = true;
      this.access.set(token.user, { revoked: false });
      const url = new URL(this.http.url);
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.end(`http://${token.user}:${token.password}@${url.host}/simplefin`);
    }
    const auth = Buffer.from(String(request.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString("utf8");
    const [user, password] = auth.split(":");
    const known = [...this.tokens.values()].find((token) => token.user === user && token.password === password && token.claimed);
    if (!known || this.access.get(user)?.revoked) return sendJson(res, 403, "Forbidden");
    if (request.path === "/simplefin/info") return sendJson(res, 200, { versions: this.versions });
    if (request.path !== "/simplefin/accounts") return sendJson(res, 404, "Not found");

    const now = Math.floor(Date.now() / 1000);
    const end = request.query.has("end-date") ? Number(request.query.get("end-date")) : now + DAY;
    let start = request.query.has("start-date") ? Number(request.query.get("start-date")) : end - 30 * DAY;
    if (end - start > CAP_SECONDS) start = end - CAP_SECONDS; // silently
    const withPending = request.query.has("pending"); // presence, not value
    const version2 = request.query.get("version") === "2";
    const wanted = request.query.getAll("account");
    const accounts = this.accounts
      .filter((account) => wanted.length === 0 || wanted.includes(account.id))
      .map((account) => ({
        ...account,
        transactions: request.query.has("balances-only")
          ? []
          : account.transactions.filter((row) => {
              if (row.posted === 0) return withPending && (row.transacted_at ?? now) >= start && (row.transacted_at ?? now) < end;
              return row.posted >= start && row.posted < end;
            }),
      }));
    const errors = this.errors;
    sendJson(res, 200, {
      errors: errors?.errors ?? [],
      ...(version2 ? { errlist: errors?.errlist ?? [], connections: [] } : {}),
      accounts: errors && !errors.partial ? [] : accounts,
    });
  }
}

/**
 * Deterministic history for tests and the benchmark: `perDay` transactions per account per day over
 * the `days` days ending today, ids unique per account.
 */
export function generateHistory(options: { accountId: string; days: number; perDay: number; seed?: number }): FakeSimplefinTransaction[] {
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
  const rows: FakeSimplefinTransaction[] = [];
  const payees = ["Grocer", "Coffee Shop", "Fuel Station", "Bookstore", "Pharmacy", "Cinema", "Bakery", "Hardware"];
  let n = options.seed ?? 0;
  for (let day = options.days - 1; day >= 0; day--) {
    for (let i = 0; i < options.perDay; i++) {
      n += 1;
      const payee = payees[n % payees.length];
      const cents = ((n * 7919) % 20000) + 100;
      const income = n % 10 === 0;
      rows.push({
        id: `${options.accountId}-t${n}`,
        posted: today - day * DAY + 3600 + i * 60,
        amount: `${income ? "" : "-"}${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`,
        description: `${payee} purchase ${n}`,
        payee,
      });
    }
  }
  return rows;
}
