import pino, { type DestinationStream, type Logger } from "pino";

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

/**
 * JSON lines on stdout for the service; CLI commands log to stderr so `--json` output stays clean;
 * tests pass a stream to read what would be logged.
 */
export function createLogger(level: string, destination: 1 | 2 | DestinationStream = 1): Logger {
  const stream = typeof destination === "number" ? pino.destination({ fd: destination, sync: destination === 2 }) : destination;
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, stream);
}
