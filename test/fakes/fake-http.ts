import http from "node:http";
import type { AddressInfo } from "node:net";
import { respondAfter } from "./latency";

/** What a fake server saw: every request, in order. */
export type RecordedRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  startedAt: number;
  finishedAt?: number;
};

/** Faults a fake injects into its next matching requests. */
export type Fault =
  | { kind: "reset" }
  | { kind: "timeout" }
  | { kind: "html"; status: number }
  | { kind: "status"; status: number; body?: string; headers?: Record<string, string> };

export type Route = (request: RecordedRequest, response: http.ServerResponse) => void | Promise<void>;

/**
 * A real HTTP server on loopback that records requests and can fail on purpose: connection resets,
 * answers that never come, HTML error pages, any status. Faults are consumed in order by requests whose
 * path matches.
 */
export class FakeHttpServer {
  readonly requests: RecordedRequest[] = [];
  private readonly faults: Array<{ match: RegExp; fault: Fault; remaining: number }> = [];
  private readonly server: http.Server;
  private readonly sockets = new Set<import("node:net").Socket>();
  /** Delay before each answer, to make concurrency observable. */
  respondAfterMs = 0;
  private inFlight = 0;
  /** The most requests this server had in flight at once. */
  maxInFlight = 0;

  constructor(private readonly route: Route) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  /** Listens on loopback: `port` 0 (tests) picks a free one; the sandboxes of `npm run dev:banks` name theirs. */
  async start(port = 0): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", resolve);
    });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next `times` requests whose path matches fail this way. */
  inject(fault: Fault, options: { times?: number; path?: RegExp } = {}): void {
    this.faults.push({ match: options.path ?? /./, fault, remaining: options.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  requestsTo(path: RegExp): RecordedRequest[] {
    return this.requests.filter((request) => path.test(request.path));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://fake");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
      startedAt: Date.now(),
    };
    this.requests.push(recorded);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on("close", () => {
      this.inFlight -= 1;
      recorded.finishedAt = Date.now();
    });
    if (this.respondAfterMs) await respondAfter(this.respondAfterMs);
    const slot = this.faults.find((entry) => entry.remaining > 0 && entry.match.test(url.pathname));
    if (slot) {
      slot.remaining -= 1;
      const { fault } = slot;
      if (fault.kind === "reset") return void req.socket.destroy();
      if (fault.kind === "timeout") return; // never answers; the client's timeout ends it
      if (fault.kind === "html") {
        res.writeHead(fault.status, { "content-type": "text/html" });
        return void res.end(
          `<html><head><title>${fault.status} Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>upstream <b>failed</b></p></body></html>`,
        );
      }
      res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
      return void res.end(fault.body ?? "");
    }
    try {
      await this.route(recorded, res);
    } catch (error) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    }
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
