import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { respondAfter } from "./latency";

/** A message the receiver accepted: verified by the `standardwebhooks` package, the independent oracle. */
export type ReceivedWebhook = {
  id: string;
  timestamp: number;
  signatures: string[];
  type: string;
  data: Record<string, unknown> & { id?: string; eventType?: string; seq?: string };
  raw: string;
  receivedAt: number;
};

/** What the receiver answers instead of accepting, for the next requests. */
export type ReceiverFault = { status: number; headers?: Record<string, string>; times: number };

/**
 * A Standard Webhooks receiver on loopback. Every request is verified with the `standardwebhooks`
 * package against the secrets it trusts (any of them, as a receiver does during a rotation); a request
 * that does not verify is answered 400 and kept in `rejected`. It can go down (stop listening) and come
 * back on the same port, and answer chosen statuses (410, 429 with Retry-After, 500).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  readonly rejected: Array<{ reason: string; headers: http.IncomingHttpHeaders }> = [];
  /** Every request, accepted or not, in arrival order: id and what was answered. */
  readonly attempts: Array<{ id: string | undefined; status: number; at: number }> = [];
  /** Every request's path with its query, and its Authorization header (credentials a URL carried). */
  readonly requests: Array<{ path: string; authorization: string | undefined }> = [];
  private readonly faults: ReceiverFault[] = [];
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private port = 0;
  /** Delay before answering, to make a batch observable mid-flight. */
  respondAfterMs = 0;

  constructor(private secrets: string[]) {}

  trust(secrets: string[]): void {
    this.secrets = secrets;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<string> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this.url;
  }

  /** Stops listening: connections are refused until start() again (same port). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  failNext(fault: ReceiverFault): void {
    this.faults.push({ ...fault });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Distinct ids in the order they first arrived. */
  firstArrivals(): string[] {
    const seen = new Set<string>();
    for (const message of this.received) seen.add(message.id);
    return [...seen];
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const id = req.headers["webhook-id"] as string | undefined;
    this.requests.push({ path: req.url ?? "", authorization: req.headers.authorization });
    if (this.respondAfterMs) await respondAfter(this.respondAfterMs);
    const answer = (status: number, headers: Record<string, string> = {}) => {
      this.attempts.push({ id, status, at: Date.now() });
      res.writeHead(status, headers);
      res.end();
    };
    const fault = this.faults[0];
    if (fault) {
      if (--fault.times <= 0) this.faults.shift();
      return answer(fault.status, fault.headers);
    }
    if (req.method !== "POST" || req.headers["content-type"] !== "application/json") {
      this.rejected.push({ reason: `${req.method} ${req.headers["content-type"]}`, headers: req.headers });
      return answer(400);
    }
    type Payload = { type: string; timestamp: string; data: ReceivedWebhook["data"] };
    let payload: Payload | null = null as Payload | null;
    let lastError: unknown = null;
    for (const secret of this.secrets) {
      try {
        payload = new Webhook(secret).verify(raw, req.headers as Record<string, string>) as Payload;
        break;
      } catch (error) {
        lastError = error;
      }
    }
    if (!payload) {
      this.rejected.push({ reason: String((lastError as Error)?.message ?? lastError), headers: req.headers });
      return answer(400);
    }
    this.received.push({
      id: id!,
      timestamp: Number(req.headers["webhook-timestamp"]),
      signatures: String(req.headers["webhook-signature"]).split(" "),
      type: payload.type,
      data: payload.data,
      raw,
      receivedAt: Date.now(),
    });
    answer(204);
  }
}
