import { SECRET_QUERY_PARAMETER } from "../log";

/**
 * A destination URL may carry credentials: `https://user:password@host/…` or a query parameter such
 * as `?token=`, `&api_key=`, `&sig=`. Such a URL is kept sealed (audit_stream_destinations.url_encrypted)
 * and only its masked form is stored in `url`, shown to administrators and auditors and written into
 * audit events. Senders open the sealed one.
 */
export const MASK = "***";

/** The URL with its credentials replaced by `***`; the URL itself when it carries none (or is not a URL). */
export function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  let masked = false;
  if (url.username) {
    url.username = MASK;
    masked = true;
  }
  if (url.password) {
    url.password = MASK;
    masked = true;
  }
  for (const name of [...new Set(url.searchParams.keys())]) {
    if (SECRET_QUERY_PARAMETER.test(name)) {
      url.searchParams.set(name, MASK);
      masked = true;
    }
  }
  return masked ? url.toString() : raw;
}

export function hasUrlCredentials(raw: string): boolean {
  return maskUrl(raw) !== raw;
}
