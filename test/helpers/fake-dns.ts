import type { Resolver } from "../../src/outbound/outbound.guard";

/**
 * A DNS that knows only the names given (each to one or more addresses) and fails for any other, so
 * tests can make a public-looking name resolve to loopback (the probe's case) without any real lookup.
 */
export function fakeDns(records: Record<string, string | string[]>): Resolver {
  return async (hostname) => {
    const answer = records[hostname.toLowerCase()];
    if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return (Array.isArray(answer) ? answer : [answer]).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}
