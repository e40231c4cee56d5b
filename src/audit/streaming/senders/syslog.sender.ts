import os from "node:os";
import type { Socket } from "node:net";
import type { AuditEvent } from "../../log";
import type { OutboundGuard } from "../../../platform/outbound/outbound.guard";
import { cefMessage, leefMessage, syslogLine } from "../stream.formats";
import { seqRange, unansweredAttempt, type Sender, type SenderTarget, type SendResult } from "./sender";

/** Lines per turn (one write). */
const SYSLOG_TURN = 500;

/**
 * QRadar (LEEF 2.0) and ArcSight (CEF) over syslog TCP, TLS when the URL says `syslog+tls://`: one
 * RFC 5424 line per event, newline-framed (RFC 6587). The connection stays open between turns; a
 * write that fails closes it and the batch is retried on a new one.
 */
export class SyslogSender implements Sender {
  readonly turnSize = SYSLOG_TURN;
  private socket: Socket | null = null;
  private readonly hostname = os.hostname().replace(/\s+/g, "-") || "-";

  constructor(
    private readonly target: SenderTarget,
    private readonly guard: OutboundGuard,
  ) {}

  private async connection(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed && this.socket.writable) return this.socket;
    const url = new URL(this.target.url);
    const ca = this.target.settings.caCertificate;
    const socket = await this.guard.connect({
      host: url.hostname,
      port: Number(url.port || 514),
      tls: url.protocol === "syslog+tls:" ? { ca: typeof ca === "string" && ca ? ca : undefined } : false,
    });
    socket.on("error", () => socket.destroy());
    // A syslog receiver never answers; anything it sends is ignored.
    socket.resume();
    this.socket = socket;
    return socket;
  }

  async send(events: AuditEvent[]): Promise<SendResult> {
    const attemptedAt = new Date();
    const started = performance.now();
    const format = this.target.kind === "qradar" ? leefMessage : cefMessage;
    const payload = events.map((event) => syslogLine(event, format(event), this.hostname)).join("");
    try {
      const socket = await this.connection();
      await new Promise<void>((resolve, reject) => {
        const onClose = () => reject(new Error("the syslog receiver closed the connection"));
        socket.once("close", onClose);
        socket.write(payload, (error) => {
          socket.off("close", onClose);
          if (error) reject(error);
          else resolve();
        });
      });
      const latencyMs = Math.round(performance.now() - started);
      return {
        delivered: events.length,
        attempts: [{ attemptedAt, ...seqRange(events), status: null, latencyMs, outcome: "delivered", error: null }],
        failure: null,
      };
    } catch (caught) {
      this.close();
      const unanswered = unansweredAttempt(caught, events, attemptedAt, started);
      return { delivered: 0, attempts: [unanswered.attempt], failure: unanswered.failure };
    }
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}
