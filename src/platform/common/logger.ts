import pino, { type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger };

/**
 * Paths redacted from every log line, so credentials never reach logs even when an object holding them
 * is logged whole.
 */
const REDACTED_PATHS = [
  "req.headers.authorization",
  "req.headers['x-api-key']",
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  "*.password",
  "*.secret",
  "*.token",
  "*.apiKey",
  "*.api_key",
  "*.accessToken",
  "*.refreshToken",
];

export type LogFormat = "auto" | "json" | "pretty";

/**
 * JSON lines on stdout for the service, or pretty lines when `format` asks for them (auto: when the
 * output is a terminal); CLI commands log to stderr so `--json` output stays clean; tests pass a stream
 * to read what would be logged.
 */
export function createLogger(level: string, destination: 1 | 2 | DestinationStream = 1, format: LogFormat = "json"): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } };
  if (typeof destination !== "number") return pino(options, destination);
  const terminal = destination === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  if (format === "pretty" || (format === "auto" && terminal)) {
    // Synchronous, in this thread: no worker thread to outlive a short CLI command or lose lines at exit.
    // A request's fields are all in its message already: one line per request.
    const stream = pretty({
      destination,
      sync: true,
      colorize: format === "auto" ? terminal : false,
      ignore: "pid,hostname,method,path,status,ms,requestId",
    });
    return pino(options, stream);
  }
  return pino(options, pino.destination({ fd: destination, sync: destination === 2 }));
}
