import { randomBytes } from "node:crypto";
import http from "node:http";
import net, { isIP, type AddressInfo } from "node:net";
import tls from "node:tls";
// nsyslog-parser reads the syslog header and the CEF/LEEF header fields; the extension parsers below are
// this file's own, written from the CEF and LEEF specifications, not from the service's formatter.
import parseSyslog from "nsyslog-parser";

/**
 * Loopback stand-ins for the five SIEM platforms. Each speaks its platform's wire format strictly and
 * refuses (4xx) what the real one would refuse: wrong paths, headers, credentials, envelopes, field
 * types and size limits. What they accepted is kept in order for the tests to compare.
 */
abstract class HttpReceiver {
  protected server: http.Server | null = null;
  private port = 0;
  /** Every request: path, status answered, and the problem when refused. */
  readonly requests: Array<{ path: string; status: number; problem?: string; bytes: number }> = [];

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    const server = http.createServer((req, res) => void this.receive(req, res));
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = req.url ?? "/";
    const answer = (status: number, payload?: unknown, problem?: string) => {
      this.requests.push({ path, status, problem, bytes: body.length });
      res.writeHead(status, payload === undefined ? {} : { "content-type": "application/json" });
      res.end(payload === undefined ? undefined : JSON.stringify(payload));
    };
    try {
      await this.handle(req, body, answer);
    } catch (error) {
      answer(400, { error: (error as Error).message }, (error as Error).message);
    }
  }

  protected abstract handle(
    req: http.IncomingMessage,
    body: Buffer,
    answer: (status: number, payload?: unknown, problem?: string) => void,
  ): Promise<void> | void;
}

class Refusal extends Error {}

function require(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Refusal(message);
}

/** Splunk HTTP Event Collector: `Authorization: Splunk <token>`, concatenated event objects. */
export class SplunkReceiver extends HttpReceiver {
  readonly events: Array<{
    time: number;
    host: string;
    source: string;
    sourcetype: string;
    index?: string;
    event: Record<string, unknown>;
  }> = [];

  constructor(private readonly token: string) {
    super();
  }

  protected handle(req: http.IncomingMessage, body: Buffer, answer: (status: number, payload?: unknown, problem?: string) => void): void {
    if (req.method !== "POST" || req.url !== "/services/collector/event")
      return answer(404, { text: "The requested URL was not found on this server.", code: 404 });
    if (req.headers.authorization !== `Splunk ${this.token}`) return answer(401, { text: "Invalid token", code: 4 }, "token");
    const objects = concatenatedJson(body.toString("utf8"));
    require(objects.length > 0, "No data");
    for (const object of objects) {
      const keys = Object.keys(object);
      require(keys.every((key) =>
        ["time", "host", "source", "sourcetype", "index", "event", "fields"].includes(key),
      ), `unknown keys ${keys}`);
      require(typeof object.time === "number" && object.time > 1e9 && object.time < 1e11, "time must be epoch seconds");
      for (const key of ["host", "source", "sourcetype"]) require(typeof object[key] === "string", `${key} must be a string`);
      require(object.index === undefined || typeof object.index === "string", "index must be a string");
      require(object.event !== null && typeof object.event === "object", "event must be an object");
    }
    this.events.push(...(objects as SplunkReceiver["events"]));
    answer(200, { text: "Success", code: 0 });
  }
}

/** Parses `{…}{…}` (whitespace allowed between), as HEC does; anything else is refused. */
function concatenatedJson(text: string): Array<Record<string, unknown>> {
  const objects: Array<Record<string, unknown>> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}") {
      depth--;
      if (depth === 0) objects.push(JSON.parse(text.slice(start, i + 1)));
    } else if (depth === 0 && !/\s/.test(ch)) throw new Refusal(`unexpected ${ch} between events`);
  }
  require(depth === 0, "truncated event");
  return objects;
}

const ECS_CATEGORIES = ["authentication", "configuration", "iam", "session", "network", "process", "file", "host", "web", "database"];
const ECS_TYPES = ["start", "end", "info", "user", "creation", "deletion", "change", "access", "admin", "group", "denied", "allowed"];

/** Elasticsearch `_bulk` with ECS documents, field types checked as an ECS index template would. */
export class ElasticReceiver extends HttpReceiver {
  readonly documents = new Map<string, { index: string; doc: Record<string, any> }>();
  readonly order: string[] = [];
  duplicates = 0;

  constructor(private readonly apiKey: string) {
    super();
  }

  protected handle(req: http.IncomingMessage, body: Buffer, answer: (status: number, payload?: unknown, problem?: string) => void): void {
    if (req.method !== "POST" || req.url !== "/_bulk") return answer(404, { error: "no handler" });
    if (req.headers.authorization !== `ApiKey ${this.apiKey}`)
      return answer(401, { error: { type: "security_exception" }, status: 401 }, "api key");
    require(req.headers["content-type"] === "application/x-ndjson", "content-type must be application/x-ndjson");
    const text = body.toString("utf8");
    require(text.endsWith("\n"), "The bulk request must be terminated by a newline [\\n]");
    const lines = text.slice(0, -1).split("\n");
    require(lines.length % 2 === 0, "action and document lines must pair up");
    const items: unknown[] = [];
    for (let i = 0; i < lines.length; i += 2) {
      const action = JSON.parse(lines[i]) as { create?: { _index: string; _id: string } };
      require(action.create &&
        typeof action.create._index === "string" &&
        typeof action.create._id === "string", "action must be create with _index and _id");
      const doc = JSON.parse(lines[i + 1]) as Record<string, any>;
      checkEcs(doc);
      const { _index, _id } = action.create;
      if (this.documents.has(_id)) {
        this.duplicates++;
        items.push({
          create: { _index, _id, status: 409, error: { type: "version_conflict_engine_exception", reason: "document already exists" } },
        });
        continue;
      }
      this.documents.set(_id, { index: _index, doc });
      this.order.push(_id);
      items.push({ create: { _index, _id, status: 201, result: "created" } });
    }
    answer(200, { took: 1, errors: items.some((item) => (item as { create: { status: number } }).create.status >= 300), items });
  }
}

function checkEcs(doc: Record<string, any>): void {
  require(typeof doc["@timestamp"] === "string" && !Number.isNaN(Date.parse(doc["@timestamp"])), "@timestamp must be a date");
  const event = doc.event;
  require(event && typeof event.action === "string", "event.action must be a keyword");
  require(Array.isArray(event.category) &&
    event.category.every((c: string) => ECS_CATEGORIES.includes(c)), `event.category ${event.category} not ECS`);
  require(Array.isArray(event.type) && event.type.every((t: string) => ECS_TYPES.includes(t)), `event.type ${event.type} not ECS`);
  require(["success", "failure", "unknown"].includes(event.outcome), "event.outcome must be success, failure or unknown");
  require(Number.isInteger(event.severity), "event.severity must be a long");
  if (doc.source !== undefined) require(typeof doc.source.ip === "string" && isIP(doc.source.ip) !== 0, "source.ip must be an ip");
  if (doc.user !== undefined) {
    require(doc.user.id === undefined || typeof doc.user.id === "string", "user.id must be a keyword");
    require(doc.user.email === undefined || typeof doc.user.email === "string", "user.email must be a keyword");
  }
  if (doc.user_agent !== undefined) require(typeof doc.user_agent.original === "string", "user_agent.original must be a keyword");
  if (doc.http !== undefined) require(typeof doc.http.request?.id === "string", "http.request.id must be a keyword");
  if (doc.error !== undefined) require(typeof doc.error.message === "string", "error.message must be text");
}

/** Datadog logs intake v2: `DD-API-KEY`, a JSON array of at most 1000 entries and 5 MB, each at most 1 MB. */
export class DatadogReceiver extends HttpReceiver {
  readonly entries: Array<Record<string, any>> = [];
  largestBatch = 0;

  constructor(private readonly apiKey: string) {
    super();
  }

  protected handle(req: http.IncomingMessage, body: Buffer, answer: (status: number, payload?: unknown, problem?: string) => void): void {
    if (req.method !== "POST" || req.url !== "/api/v2/logs") return answer(404, { errors: ["Not found"] });
    if (req.headers["dd-api-key"] !== this.apiKey) return answer(403, { errors: ["Forbidden"] }, "api key");
    if (body.length > 5 * 1024 * 1024) return answer(413, { errors: ["Payload too large"] }, "payload over 5 MB");
    require(req.headers["content-type"] === "application/json", "content-type must be application/json");
    const entries = JSON.parse(body.toString("utf8")) as Array<Record<string, any>>;
    require(Array.isArray(entries), "body must be an array");
    if (entries.length > 1000) return answer(400, { errors: ["Too many entries"] }, "over 1000 entries");
    for (const entry of entries) {
      require(Buffer.byteLength(JSON.stringify(entry)) <= 1024 * 1024, "entry over 1 MB");
      for (const key of ["ddsource", "service", "ddtags", "message", "hostname"])
        require(typeof entry[key] === "string", `${key} must be a string`);
      // The reserved date attribute, ISO 8601 in UTC; without it Datadog dates the entry at arrival.
      require(typeof entry.timestamp === "string" &&
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(entry.timestamp), "timestamp must be an ISO 8601 UTC date");
    }
    this.largestBatch = Math.max(this.largestBatch, entries.length);
    this.entries.push(...entries);
    answer(202, {});
  }
}

/**
 * Microsoft Entra ID's token endpoint (client credentials) and the Logs Ingestion API in one server.
 * Tokens live `tokenLifetimeSeconds`; the ingestion endpoint refuses an expired or unknown one (401).
 */
export class SentinelReceiver extends HttpReceiver {
  readonly rows: Array<Record<string, any>> = [];
  readonly tokensIssued: Array<{ token: string; expiresAt: number }> = [];
  expiredTokenUses = 0;

  constructor(
    readonly settings: { tenantId: string; clientId: string; clientSecret: string; dcrImmutableId: string; streamName: string },
    private readonly tokenLifetimeSeconds = 3600,
  ) {
    super();
  }

  protected handle(req: http.IncomingMessage, body: Buffer, answer: (status: number, payload?: unknown, problem?: string) => void): void {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "POST" && url.pathname === `/${this.settings.tenantId}/oauth2/v2.0/token`) {
      require(req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded"), "token request must be form-encoded");
      const form = new URLSearchParams(body.toString("utf8"));
      if (form.get("grant_type") !== "client_credentials") return answer(400, { error: "unsupported_grant_type" }, "grant_type");
      if (form.get("scope") !== "https://monitor.azure.com//.default") return answer(400, { error: "invalid_scope" }, "scope");
      if (form.get("client_id") !== this.settings.clientId || form.get("client_secret") !== this.settings.clientSecret)
        return answer(401, { error: "invalid_client" }, "client credentials");
      const token = randomBytes(16).toString("hex");
      this.tokensIssued.push({ token, expiresAt: Date.now() + this.tokenLifetimeSeconds * 1000 });
      return answer(200, {
        token_type: "Bearer",
        expires_in: this.tokenLifetimeSeconds,
        ext_expires_in: this.tokenLifetimeSeconds,
        access_token: token,
      });
    }
    const ingest = `/dataCollectionRules/${this.settings.dcrImmutableId}/streams/${this.settings.streamName}`;
    if (req.method !== "POST" || url.pathname !== ingest) return answer(404, { error: { code: "NotFound" } });
    require(url.searchParams.get("api-version") === "2023-01-01", "api-version must be 2023-01-01");
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const issued = this.tokensIssued.find((entry) => entry.token === bearer);
    if (!issued) return answer(401, { error: { code: "InvalidToken" } }, "unknown token");
    if (issued.expiresAt <= Date.now()) {
      this.expiredTokenUses++;
      return answer(401, { error: { code: "TokenExpired" } }, "expired token");
    }
    if (body.length > 1024 * 1024) return answer(413, { error: { code: "ContentLengthLimitExceeded" } }, "over 1 MB");
    const rows = JSON.parse(body.toString("utf8"));
    require(Array.isArray(rows), "body must be a JSON array");
    for (const row of rows)
      require(typeof row.TimeGenerated === "string" && !Number.isNaN(Date.parse(row.TimeGenerated)), "TimeGenerated must be a datetime");
    this.rows.push(...rows);
    answer(204);
  }
}

/** A CEF or LEEF record as a SIEM reads it off the wire. */
export type SyslogRecord = { syslog: Record<string, any>; header: string[]; fields: Record<string, string> };

/**
 * A syslog receiver over TCP (TLS when given a certificate), newline-framed. Each line's RFC 5424 header
 * and CEF/LEEF header fields are read by nsyslog-parser; extensions by the strict parsers below.
 */
export class SyslogReceiver {
  readonly records: SyslogRecord[] = [];
  readonly problems: string[] = [];
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private port = 0;

  constructor(
    private readonly format: "cef" | "leef",
    private readonly certificate?: { key: string; cert: string },
  ) {}

  get url(): string {
    return `${this.certificate ? "syslog+tls" : "syslog"}://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    const onSocket = (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => undefined);
      let pending = "";
      socket.on("data", (data: Buffer) => {
        pending += data.toString("utf8");
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.line(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
      });
    };
    const server = this.certificate ? tls.createServer(this.certificate, onSocket) : net.createServer(onSocket);
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private line(text: string): void {
    try {
      const syslog = parseSyslog(text) as Record<string, any>;
      require(syslog.version === 1 && !Number.isNaN(new Date(syslog.ts).getTime()), "not an RFC 5424 line");
      if (this.format === "cef") {
        require(syslog.type === "CEF" && syslog.cef, "not CEF");
        const c = syslog.cef;
        const header = [c.version, c.deviceVendor, c.deviceProduct, c.deviceVersion, c.deviceEventClassID, c.name, c.severity].map(
          unescapeHeader,
        );
        require(/^\d+$/.test(header[6]) && Number(header[6]) <= 10, "CEF severity must be 0-10");
        this.records.push({ syslog, header, fields: parseCefExtension(c.extension ?? "") });
      } else {
        require(syslog.type === "LEEF" && syslog.leef, "not LEEF");
        const l = syslog.leef;
        require(l.leefVersion === "LEEF:2.0", "not LEEF 2.0");
        const delimiter =
          l.delimiter.startsWith("x") || l.delimiter.startsWith("0x")
            ? String.fromCharCode(parseInt(l.delimiter.replace(/^0?x/, ""), 16))
            : l.delimiter;
        require(delimiter.length === 1, "LEEF 2.0 delimiter must be one character");
        const header = [l.leefVersion, l.vendor, l.product, l.version, l.eventID].map(unescapeHeader);
        this.records.push({ syslog, header, fields: parseLeefAttributes(l.extension ?? "", delimiter) });
      }
    } catch (error) {
      this.problems.push(`${(error as Error).message}: ${text.slice(0, 200)}`);
    }
  }
}

function unescapeHeader(value: string): string {
  return value.replace(/\\([\\|])/g, "$1");
}

/**
 * CEF extension: `key=value` pairs separated by spaces; a value runs to the next unescaped `key=`.
 * `\\`, `\=`, `\n`, `\r` are the only escapes; an unescaped `=` inside a value is an error.
 */
export function parseCefExtension(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const keyAt = /(?:^| )([A-Za-z0-9_.]+)=/g;
  const starts: Array<{ key: string; from: number; valueFrom: number }> = [];
  for (let match: RegExpExecArray | null; (match = keyAt.exec(text));) {
    // A key is only a key when its `=` is not escaped: count the backslashes before the match.
    starts.push({ key: match[1], from: match.index, valueFrom: match.index + match[0].length });
  }
  const real = starts.filter((start) => !isEscapedPosition(text, start.valueFrom - 1));
  real.forEach((start, i) => {
    const raw = text.slice(start.valueFrom, i + 1 < real.length ? real[i + 1].from : text.length);
    fields[start.key] = unescapeValue(raw, "=", "CEF");
  });
  return fields;
}

/** LEEF 2.0 attributes: `key=value` split on the delimiter; `\\`, the escaped delimiter, `\n`, `\r` unescape. */
export function parseLeefAttributes(text: string, delimiter: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let current = "";
  const parts: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\" && i + 1 < text.length) {
      current += text[i] + text[i + 1];
      i++;
    } else if (text[i] === delimiter) {
      parts.push(current);
      current = "";
    } else current += text[i];
  }
  parts.push(current);
  for (const part of parts) {
    const equals = part.indexOf("=");
    require(equals > 0, `attribute without key: ${part}`);
    fields[part.slice(0, equals)] = unescapeValue(part.slice(equals + 1), delimiter, "LEEF");
  }
  return fields;
}

function isEscapedPosition(text: string, index: number): boolean {
  let backslashes = 0;
  for (let i = index - 1; i >= 0 && text[i] === "\\"; i--) backslashes++;
  return backslashes % 2 === 1;
}

function unescapeValue(raw: string, special: string, format: string): string {
  let value = "";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === "\\") {
      const next = raw[++i];
      if (next === "\\" || next === special || (format === "LEEF" && next === "|")) value += next;
      else if (next === "n") value += "\n";
      else if (next === "r") value += "\r";
      else throw new Refusal(`${format}: invalid escape \\${next}`);
    } else if (ch === "=" && format === "CEF") throw new Refusal("CEF: unescaped = in a value");
    else if (ch === "\n" || ch === "\r") throw new Refusal(`${format}: raw line break in a value`);
    else value += ch;
  }
  return value;
}
