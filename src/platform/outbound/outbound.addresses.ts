import { BlockList, isIP } from "node:net";

/**
 * Which IP addresses an outbound request may reach. Only globally routable unicast addresses pass by
 * default; every special-purpose range of the IANA registries (RFC 6890 and successors) is refused,
 * and IPv6 forms that carry an IPv4 address (IPv4-mapped, SIIT, NAT64, 6to4) are judged by the IPv4
 * address they carry, so `[::ffff:127.0.0.1]` is loopback like `127.0.0.1`.
 */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: AddressRefusal };

export type AddressRefusal =
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "shared (CGNAT)"
  | "unique-local"
  | "multicast"
  | "reserved"
  | "not an IP address";

type Range = { cidr: string; reason: AddressRefusal };

const IPV4_RANGES: Range[] = [
  { cidr: "0.0.0.0/8", reason: "unspecified" },
  { cidr: "10.0.0.0/8", reason: "private" },
  { cidr: "100.64.0.0/10", reason: "shared (CGNAT)" },
  { cidr: "127.0.0.0/8", reason: "loopback" },
  { cidr: "169.254.0.0/16", reason: "link-local" },
  { cidr: "172.16.0.0/12", reason: "private" },
  { cidr: "192.0.0.0/24", reason: "reserved" }, // IETF protocol assignments
  { cidr: "192.0.2.0/24", reason: "reserved" }, // documentation
  { cidr: "192.88.99.0/24", reason: "reserved" }, // 6to4 relay anycast
  { cidr: "192.168.0.0/16", reason: "private" },
  { cidr: "198.18.0.0/15", reason: "reserved" }, // benchmarking
  { cidr: "198.51.100.0/24", reason: "reserved" }, // documentation
  { cidr: "203.0.113.0/24", reason: "reserved" }, // documentation
  { cidr: "224.0.0.0/4", reason: "multicast" },
  { cidr: "240.0.0.0/4", reason: "reserved" }, // future use and broadcast
];

const IPV6_RANGES: Range[] = [
  { cidr: "::/128", reason: "unspecified" },
  { cidr: "::1/128", reason: "loopback" },
  { cidr: "100::/64", reason: "reserved" }, // discard-only
  { cidr: "2001::/23", reason: "reserved" }, // IETF protocol assignments, Teredo among them
  { cidr: "2001:db8::/32", reason: "reserved" }, // documentation
  { cidr: "fc00::/7", reason: "unique-local" },
  { cidr: "fe80::/10", reason: "link-local" },
  { cidr: "fec0::/10", reason: "reserved" }, // deprecated site-local
  { cidr: "ff00::/8", reason: "multicast" },
];

/** Only 2000::/3 is allocated for global unicast; everything outside it (once embedded IPv4 is unwrapped) is refused. */
const IPV6_GLOBAL_UNICAST = "2000::/3";

function rangeList(ranges: Range[], family: "ipv4" | "ipv6"): Array<{ list: BlockList; reason: AddressRefusal }> {
  return ranges.map(({ cidr, reason }) => {
    const [network, prefix] = cidr.split("/");
    const list = new BlockList();
    list.addSubnet(network, Number(prefix), family);
    return { list, reason };
  });
}

const ipv4Ranges = rangeList(IPV4_RANGES, "ipv4");
const ipv6Ranges = rangeList(IPV6_RANGES, "ipv6");
const ipv6GlobalUnicast = rangeList([{ cidr: IPV6_GLOBAL_UNICAST, reason: "reserved" }], "ipv6")[0].list;

/** The verdict on one address (without any allowlist: see OutboundPolicy for that). */
export function classifyAddress(address: string): AddressVerdict {
  const ip = stripBrackets(address).split("%")[0]; // a zone id names an interface, not another address
  const version = isIP(ip);
  if (version === 4) return classifyIpv4(ip);
  if (version !== 6) return { allowed: false, reason: "not an IP address" };
  const embedded = embeddedIpv4(ip);
  if (embedded) return classifyIpv4(embedded);
  for (const { list, reason } of ipv6Ranges) if (list.check(ip, "ipv6")) return { allowed: false, reason };
  if (!ipv6GlobalUnicast.check(ip, "ipv6")) return { allowed: false, reason: "reserved" };
  return { allowed: true };
}

function classifyIpv4(ip: string): AddressVerdict {
  for (const { list, reason } of ipv4Ranges) if (list.check(ip, "ipv4")) return { allowed: false, reason };
  return { allowed: true };
}

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the translation forms a resolver or
 * a NAT64 gateway would deliver to that IPv4 host: IPv4-mapped (::ffff:a.b.c.d), SIIT
 * (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated), NAT64 well-known (64:ff9b::/96) and
 * local-use (64:ff9b:1::/48) prefixes, and 6to4 (2002::/16).
 */
export function embeddedIpv4(ipv6: string): string | null {
  const words = ipv6Words(ipv6);
  if (!words) return null;
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  const lastTwo = (): string => dotted(words[6], words[7]);
  if (zeros(0, 5) && words[5] === 0xffff) return lastTwo(); // IPv4-mapped
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return lastTwo(); // SIIT (RFC 6145)
  if (zeros(0, 6) && (words[6] !== 0 || words[7] > 1)) return lastTwo(); // IPv4-compatible (not :: or ::1)
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return lastTwo(); // NAT64 64:ff9b::/96
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return lastTwo(); // NAT64 local-use /48
  if (words[0] === 0x2002) return dotted(words[1], words[2]); // 6to4
  return null;
}

function dotted(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/** The eight 16-bit words of a textual IPv6 address (with `::` and a dotted IPv4 tail expanded). */
function ipv6Words(ipv6: string): number[] | null {
  let text = ipv6.toLowerCase().split("%")[0];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    if (isIP(tail[1]) !== 4) return null;
    const [a, b, c, d] = tail[1].split(".").map(Number);
    text = `${text.slice(0, -tail[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((word) => parseInt(word, 16)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const words = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
  return words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : null;
}

export function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * The operator's exceptions: hostnames (exact, or `*.suffix`) whose addresses are not checked, and
 * addresses or CIDR ranges that pass even when private. Parsed from OUTBOUND_ALLOWLIST.
 */
export type OutboundAllowlist = { hosts: string[]; addresses: BlockList; entries: string[] };

export function parseAllowlist(entries: string[]): OutboundAllowlist {
  const hosts: string[] = [];
  const addresses = new BlockList();
  for (const raw of entries) {
    const entry = stripBrackets(raw.trim().toLowerCase());
    if (!entry) continue;
    const [network, prefix] = entry.split("/");
    const version = isIP(stripBrackets(network));
    if (version) {
      const family = version === 4 ? "ipv4" : "ipv6";
      const bits = prefix === undefined ? (version === 4 ? 32 : 128) : Number(prefix);
      if (!/^\d+$/.test(prefix ?? "0") || bits > (version === 4 ? 32 : 128)) throw new Error(`${raw} is not a valid CIDR range`);
      addresses.addSubnet(stripBrackets(network), bits, family);
    } else if (/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry) && prefix === undefined) {
      hosts.push(entry.replace(/\.$/, ""));
    } else {
      throw new Error(`${raw} is neither a hostname nor an address or CIDR range`);
    }
  }
  return { hosts, addresses, entries: entries.map((entry) => entry.trim()).filter(Boolean) };
}

export function hostIsAllowlisted(allowlist: OutboundAllowlist, hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return allowlist.hosts.some((entry) => (entry.startsWith("*.") ? host.endsWith(entry.slice(1)) : host === entry));
}

export function addressIsAllowlisted(allowlist: OutboundAllowlist, address: string): boolean {
  const ip = stripBrackets(address);
  const version = isIP(ip);
  if (!version) return false;
  if (allowlist.addresses.check(ip, version === 4 ? "ipv4" : "ipv6")) return true;
  const embedded = version === 6 ? embeddedIpv4(ip) : null;
  return embedded !== null && allowlist.addresses.check(embedded, "ipv4");
}
