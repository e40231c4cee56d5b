import { expandEventTypePattern } from "../log";
import { ValidationErrors } from "../../platform/common/errors";
import { checkNoControlCharacters, optionalText, requiredText } from "../../platform/common/validation";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import type { DestinationKind, DestinationRow } from "./stream.repository";

export type { DestinationKind };

export const DESTINATION_KINDS: DestinationKind[] = ["webhook", "splunk", "elastic", "datadog", "sentinel", "qradar", "arcsight"];

/**
 * Per platform: the non-secret settings it takes (required ones marked) and the credentials it needs.
 * Webhooks get a generated `whsec_` secret instead of a credential.
 */
const PLATFORM: Record<DestinationKind, { settings: Record<string, boolean>; credentials: string[]; syslog?: boolean }> = {
  webhook: { settings: {}, credentials: [] },
  splunk: { settings: { index: false, sourcetype: false, source: false, host: false }, credentials: ["token"] },
  elastic: { settings: { index: false }, credentials: ["apiKey"] },
  datadog: { settings: { service: false, tags: false, hostname: false }, credentials: ["apiKey"] },
  sentinel: {
    settings: { tenantId: true, clientId: true, dcrImmutableId: true, streamName: true, authorityUrl: false },
    credentials: ["clientSecret"],
  },
  qradar: { settings: { caCertificate: false }, credentials: [], syslog: true },
  arcsight: { settings: { caCertificate: false }, credentials: [], syslog: true },
};

/** What each kind takes, for the API's forms: the PLATFORM table as data. */
export function destinationKinds() {
  return DESTINATION_KINDS.map((kind) => ({
    kind,
    settings: Object.entries(PLATFORM[kind].settings).map(([name, required]) => ({ name, required })),
    credentials: PLATFORM[kind].credentials,
    syslog: PLATFORM[kind].syslog ?? false,
  }));
}

export type DestinationInput = {
  kind?: DestinationKind | null;
  name?: string | null;
  description?: string | null;
  url?: string | null;
  eventTypes?: string[] | null;
  enabled?: boolean | null;
  settings?: Record<string, unknown> | null;
  /** Write-only: stored encrypted, never returned. Omitted on update: the stored ones stay. */
  credentials?: Record<string, unknown> | null;
};

const MAX_EVENT_TYPES = 100;
const MAX_URL = 2048;
const MAX_SETTING = 16_384;
/**
 * Checks a destination's configuration (a new one's, or `current` changed by `input`) against what its
 * kind takes; answers every problem at once. Credentials given on update merge into the stored ones.
 */
export async function validateDestination(
  guard: OutboundGuard,
  kind: DestinationKind,
  input: DestinationInput,
  current: { row: DestinationRow; credentials: Record<string, string> } | null,
) {
  const problems = new ValidationErrors();
  const platform = PLATFORM[kind];
  const name = requiredText(problems, "Name", input.name ?? current?.row.name, 100);
  checkNoControlCharacters(problems, "Name", name);
  const description =
    input.description === undefined ? (current?.row.description ?? null) : optionalText(problems, "Description", input.description, 500);
  checkNoControlCharacters(problems, "Description", description, { multiline: true });
  const url = (input.url ?? current?.row.url ?? "").trim();
  if (!url) problems.add("Url can't be blank");
  else if (url.length > MAX_URL) problems.add(`Url is too long (maximum is ${MAX_URL} characters)`);
  // The URL parser drops CR, LF and tabs silently: checked on the text as sent.
  else if (checkNoControlCharacters(problems, "Url", url)) {
    const problem = platform.syslog ? await syslogUrlProblem(guard, url) : await guard.urlProblem(url);
    if (problem) problems.add(`Url ${problem}`);
  }
  const eventTypes = (input.eventTypes ?? current?.row.eventTypes ?? []).map((pattern) => pattern.trim());
  if (eventTypes.length > MAX_EVENT_TYPES) problems.add(`Event types has too many entries (maximum is ${MAX_EVENT_TYPES})`);
  for (const pattern of eventTypes)
    if (!expandEventTypePattern(pattern)) problems.add(`Event type ${JSON.stringify(pattern)} is not a known event type or prefix`);
  const settings = { ...(current?.row.settings ?? {}), ...(input.settings ?? {}) };
  for (const [key, value] of Object.entries(settings)) {
    if (!(key in platform.settings))
      problems.add(`Setting ${key} is not one ${kind} takes (${Object.keys(platform.settings).join(", ") || "none"})`);
    else if (value !== null && (typeof value !== "string" || value.length > MAX_SETTING))
      problems.add(`Setting ${key} must be text up to ${MAX_SETTING} characters`);
    // A CA certificate is PEM: lines are its form.
    else checkNoControlCharacters(problems, `Setting ${key}`, value, { multiline: key === "caCertificate" });
  }
  for (const [key, required] of Object.entries(platform.settings))
    if (required && !settings[key]) problems.add(`Setting ${key} is required for ${kind}`);
  if (typeof settings.authorityUrl === "string" && settings.authorityUrl) {
    const problem = await guard.urlProblem(settings.authorityUrl);
    if (problem) problems.add(`Setting authorityUrl ${problem}`);
  }
  let credentials: Record<string, string> | null = null;
  if (input.credentials) {
    if (kind === "webhook") problems.add("A webhook's secret is generated; rotate it with rotateStreamWebhookSecret");
    credentials = {};
    for (const [key, value] of Object.entries(input.credentials)) {
      if (!platform.credentials.includes(key))
        problems.add(`Credential ${key} is not one ${kind} takes (${platform.credentials.join(", ") || "none"})`);
      else if (typeof value !== "string" || value.trim() === "" || value.length > 4096)
        problems.add(`Credential ${key} must be non-empty text`);
      else if (checkNoControlCharacters(problems, `Credential ${key}`, value)) credentials[key] = value;
    }
  }
  if (!current && kind !== "webhook") {
    for (const key of platform.credentials)
      if (!credentials?.[key] && !(input.credentials && key in input.credentials))
        problems.add(`Credential ${key} is required for ${kind}`);
  } else if (current && credentials) {
    credentials = { ...current.credentials, ...credentials };
  }
  problems.throwIfAny();
  const cleaned = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== null && value !== ""));
  return { name, description, url, eventTypes, enabled: input.enabled ?? current?.row.enabled ?? true, settings: cleaned, credentials };
}

async function syslogUrlProblem(guard: OutboundGuard, raw: string): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a valid URL";
  }
  if (url.protocol !== "syslog:" && url.protocol !== "syslog+tls:") return "must be syslog://host:port or syslog+tls://host:port";
  try {
    await guard.checkHost(url.hostname, Number(url.port || 514));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * What a configuration event compares; credentials appear by name only (diffChanges redacts their values).
 * `url` is the masked URL; a change of the credentials inside it shows as `urlCredentials`, redacted.
 */
export function auditedState(row: DestinationRow, credentials: Record<string, string>, realUrl: string): Record<string, unknown> {
  return {
    kind: row.kind,
    name: row.name,
    description: row.description,
    url: row.url,
    ...(realUrl !== row.url ? { urlCredentials: realUrl } : {}),
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    settings: row.settings,
    ...Object.fromEntries(Object.entries(credentials).map(([key, value]) => [credentialField(key), value])),
  };
}

/** `token`, `apiKey`, `clientSecret`, `secret`: named so the redaction of audit changes recognises them. */
function credentialField(key: string): string {
  return /secret|token|api[_-]?key/i.test(key) ? key : `${key}Secret`;
}
