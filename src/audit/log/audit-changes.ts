/**
 * What an update event says changed, with secrets removed before anything is stored. Keys that name
 * a secret keep their place (so "the password changed" is still recorded) but never their values;
 * credentials embedded in URLs are cut out wherever they appear.
 */
export type Changes = Record<string, { old: unknown; new: unknown }>;

export const REDACTED = "[REDACTED]";

const SECRET_KEY = /pass(word)?|secret|token|api[_-]?key|credential|authorization|cookie|private[_-]?key|access[_-]?url/i;
// Credentials already masked (`***`, as a stream destination's URL is stored) are left as they are.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)(?!\*\*\*(:\*\*\*)?@)[^\s/@:]+(:[^\s/@]*)?@/gi;
/** A query parameter that carries a credential (`?token=`, `&api_key=`, `&sig=` …): its value is cut out. */
export const SECRET_QUERY_PARAMETER =
  /^(.*[_-])?(token|api[_-]?key|key|sig|signature|secret|pass(word)?|auth|authorization|credentials?|access[_-]?key|code)$/i;
const URL_QUERY_CREDENTIALS =
  /([?&](?:[a-z0-9_.-]*[_-])?(?:token|api[_-]?key|key|sig|signature|secret|pass(?:word)?|auth|authorization|credentials?|access[_-]?key|code)=)(?!\*\*\*(?:[&#\s"']|$))[^&#\s"']+/gi;

export function redact(value: unknown, key?: string): unknown {
  if (key !== undefined && SECRET_KEY.test(key)) return value === null || value === undefined ? value : REDACTED;
  if (typeof value === "string") return value.replace(URL_CREDENTIALS, `$1${REDACTED}@`).replace(URL_QUERY_CREDENTIALS, `$1${REDACTED}`);
  if (Array.isArray(value)) return value.map((item) => redact(item));
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([entryKey, entryValue]) => [entryKey, redact(entryValue, entryKey)]));
  }
  return value;
}

/** Redacts every field of a `changes` map; a secret field's old and new values both become the marker. */
export function redactChanges(changes: Changes): Changes {
  return Object.fromEntries(
    Object.entries(changes).map(([field, { old, new: next }]) => [field, { old: redact(old, field), new: redact(next, field) }]),
  );
}

/**
 * `{field: {old, new}}` for each field whose value differs between the before and after states
 * (compared as canonical JSON, so dates and nested objects compare by value), limited to `fields` when given.
 */
export function diffChanges(before: Record<string, unknown>, after: Record<string, unknown>, fields?: readonly string[]): Changes {
  const keys = fields ?? [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changes: Changes = {};
  for (const key of keys) {
    const old = before[key] ?? null;
    const next = after[key] ?? null;
    if (canonicalJson(old) !== canonicalJson(next)) changes[key] = { old, new: next };
  }
  return redactChanges(changes);
}

/** JSON with object keys sorted: jsonb hands objects back in its own key order, which is not a change. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item) && !(item instanceof Date)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
