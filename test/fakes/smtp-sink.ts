import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A message as the SMTP server received it, parsed by mailparser (the MIME oracle). */
export type ReceivedMail = {
  envelopeFrom: string;
  envelopeTo: string[];
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Map<string, unknown>;
  receivedAt: number;
};

/**
 * A real SMTP server on loopback (the npm `smtp-server` package, the one nodemailer is tested against):
 * it speaks the protocol strictly, takes AUTH PLAIN/LOGIN when `users` are given, and can refuse the
 * next messages with a 451 (a transient failure a sender must retry).
 */
export class SmtpSink {
  readonly messages: ReceivedMail[] = [];
  /** Every DATA attempt in order, with the answer code. */
  readonly attempts: Array<{ code: number; at: number }> = [];
  /** Told of each message as it is stored (the dev SMTP server prints it). */
  onMessage: (message: ReceivedMail) => void = () => undefined;
  private refusals = 0;
  private readonly server: SMTPServer;

  constructor(users: Record<string, string> | null = null) {
    this.server = new SMTPServer({
      secure: false,
      // A loopback test server: no certificate to offer, so no STARTTLS; the sender sends in the clear.
      disabledCommands: users ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
      authOptional: !users,
      allowInsecureAuth: true,
      logger: false,
      size: 1024 * 1024,
      onAuth: (auth, _session, callback) => {
        if (users && users[auth.username ?? ""] === auth.password) return callback(null, { user: auth.username });
        return callback(new Error("Invalid username or password"));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          if (this.refusals > 0) {
            this.refusals -= 1;
            this.attempts.push({ code: 451, at: Date.now() });
            return callback(Object.assign(new Error("Requested action aborted: local error in processing"), { responseCode: 451 }));
          }
          this.attempts.push({ code: 250, at: Date.now() });
          simpleParser(Buffer.concat(chunks)).then(
            (mail) => {
              this.messages.push({
                envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
                envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
                from: mail.from?.text ?? "",
                to: Array.isArray(mail.to) ? mail.to.map((to) => to.text).join(", ") : (mail.to?.text ?? ""),
                subject: mail.subject ?? "",
                text: mail.text ?? "",
                html: typeof mail.html === "string" ? mail.html : "",
                headers: mail.headers,
                receivedAt: Date.now(),
              });
              this.onMessage(this.messages[this.messages.length - 1]);
              callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
  }

  async start(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => resolve());
    });
    return this.port;
  }

  get port(): number {
    return ((this.server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
  }

  /** The next `times` messages are refused with 451. */
  refuseNext(times: number): void {
    this.refusals = times;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
