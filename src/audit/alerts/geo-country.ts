import fs from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import path from "node:path";
import { classifyAddress } from "../../platform/outbound/outbound.addresses";

/**
 * IP address → ISO 3166 country code, from the country database shipped in the npm package
 * `@ip-location-db/geo-whois-asn-country` (RIR whois + ASN data, CC BY 4.0 by the NRO; docs/alerts.md, "Countries").
 * Its `-num.csv` files are inclusive ranges `start,end,CC` in ascending order; they are read once, on
 * the first lookup, into typed arrays searched by bisection (IPv6 by its upper 64 bits: the files'
 * ranges do not split a /64). Private, loopback and other non-public addresses have no country.
 */
export const GEO_PACKAGE = "@ip-location-db/geo-whois-asn-country";

type Table4 = { starts: Uint32Array; ends: Uint32Array; codes: Uint16Array };
type Table6 = { starts: BigUint64Array; ends: BigUint64Array; codes: Uint16Array };

function packCode(code: string): number {
  return (code.charCodeAt(0) << 8) | code.charCodeAt(1);
}

function unpackCode(value: number): string {
  return String.fromCharCode(value >> 8, value & 0xff);
}

function lines(file: string): string[] {
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean);
}

export class GeoCountryLookup {
  private v4: Table4 | null = null;
  private v6: Table6 | null = null;

  /** `directory` holds the package's CSV files (ALERT_GEO_DIRECTORY replaces the bundled copy). */
  constructor(private readonly directory: string = GeoCountryLookup.bundledDirectory()) {}

  static bundledDirectory(): string {
    return path.dirname(require.resolve(`${GEO_PACKAGE}/package.json`));
  }

  /** The country of a public address; null for private, loopback, reserved, malformed or unknown ones. */
  country(address: string | null | undefined): string | null {
    if (!address) return null;
    const ip = address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
    if (!isIPv4(ip) && !isIPv6(ip)) return null;
    if (classifyAddress(ip).allowed === false) return null;
    return isIPv4(ip) ? this.lookup4(ip) : this.lookup6(ip);
  }

  private lookup4(ip: string): string | null {
    const table = (this.v4 ??= this.load4());
    const parts = ip.split(".").map(Number);
    const value = ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
    const index = bisect(table.starts, value);
    return index >= 0 && value <= table.ends[index] ? unpackCode(table.codes[index]) : null;
  }

  private lookup6(ip: string): string | null {
    const table = (this.v6 ??= this.load6());
    const value = upper64(ip);
    const index = bisect(table.starts, value);
    return index >= 0 && value <= table.ends[index] ? unpackCode(table.codes[index]) : null;
  }

  private load4(): Table4 {
    const rows = lines(path.join(this.directory, "geo-whois-asn-country-ipv4-num.csv"));
    const table = { starts: new Uint32Array(rows.length), ends: new Uint32Array(rows.length), codes: new Uint16Array(rows.length) };
    rows.forEach((row, i) => {
      const [start, end, code] = row.split(",");
      table.starts[i] = Number(start);
      table.ends[i] = Number(end);
      table.codes[i] = packCode(code);
    });
    return table;
  }

  private load6(): Table6 {
    const rows = lines(path.join(this.directory, "geo-whois-asn-country-ipv6-num.csv"));
    const table = {
      starts: new BigUint64Array(rows.length),
      ends: new BigUint64Array(rows.length),
      codes: new Uint16Array(rows.length),
    };
    rows.forEach((row, i) => {
      const [start, end, code] = row.split(",");
      table.starts[i] = BigInt(start) >> 64n;
      table.ends[i] = BigInt(end) >> 64n;
      table.codes[i] = packCode(code);
    });
    return table;
  }
}

/** The index of the last start ≤ value, or -1. */
function bisect<T extends number | bigint>(starts: ArrayLike<T>, value: T): number {
  let low = 0;
  let high = starts.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (starts[middle] <= value) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/** The upper 64 bits of an IPv6 address. */
function upper64(ip: string): bigint {
  const [head, tail = ""] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = ip.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  return groups.slice(0, 4).reduce((value, group) => (value << 16n) | BigInt(parseInt(group || "0", 16)), 0n);
}
