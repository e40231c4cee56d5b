import { isIP } from "node:net";
import type { Resolver } from "../../src/platform/outbound/outbound.guard";

/** A name's addresses: one, several, or a function asked at each lookup (a rebinding DNS answers differently each time). */
type Answer = string | string[] | (() => string[]);

/**
 * A DNS that knows only the names given and fails for any other, so tests can make a public-looking
 * name resolve to loopback (the probe's case) without any real lookup. `calls` lists the names it was
 * asked, in order (a guard that resolves once per request asks once).
 */
export function fakeDns(records: Record<string, Answer>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const entry = records[hostname.toLowerCase()];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    const addresses = typeof entry === "function" ? entry() : Array.isArray(entry) ? entry : [entry];
    return addresses.map((address) => ({ address, family: (isIP(address) === 6 ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolve, { calls });
}
