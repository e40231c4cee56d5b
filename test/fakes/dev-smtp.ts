import http from "node:http";
import type { AddressInfo } from "node:net";
import { SmtpSink } from "./smtp-sink";

/**
 * A local mail catcher for trying alerts by hand (docs/alerts.md, its walk-through): the SMTP server the tests use,
 * without authentication, and an HTTP inbox listing what arrived (`GET /messages`, JSON). Prints one
 * JSON line with both addresses, then a line per message.
 *
 *   npm run dev:smtp -- [--smtp-port 2525] [--http-port 8025]
 */
function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback;
}

async function main(): Promise<void> {
  const sink = new SmtpSink();
  const smtpPort = await sink.start(Number(option("smtp-port", "2525")));
  const inbox = http.createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/messages") {
      res.writeHead(404, { "content-type": "text/plain" });
      return void res.end("GET /messages");
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify(
        sink.messages.map(({ from, to, subject, text, html, receivedAt }) => ({
          from,
          to,
          subject,
          text,
          html,
          receivedAt: new Date(receivedAt).toISOString(),
        })),
      ),
    );
  });
  await new Promise<void>((resolve) => inbox.listen(Number(option("http-port", "8025")), "127.0.0.1", resolve));
  const inboxUrl = `http://127.0.0.1:${(inbox.address() as AddressInfo).port}/messages`;
  console.log(JSON.stringify({ smtp: { host: "127.0.0.1", port: smtpPort }, inbox: inboxUrl }));
  console.log(`SMTP on 127.0.0.1:${smtpPort} (no TLS, no authentication); messages listed at ${inboxUrl}`);
  let shown = 0;
  setInterval(() => {
    for (; shown < sink.messages.length; shown++) console.log(`mail to ${sink.messages[shown].to}: ${sink.messages[shown].subject}`);
  }, 200).unref();
  const stop = () => {
    inbox.close();
    void sink.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

void main();
