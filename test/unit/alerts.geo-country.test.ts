import { GeoCountryLookup } from "../../src/audit/alerts/geo-country";

/** The bundled country database (npm @ip-location-db/geo-whois-asn-country) as the evaluator reads it. */
const geo = new GeoCountryLookup();

test("public addresses map to the country the database knows, IPv4 and IPv6", () => {
  expect(geo.country("8.8.8.8")).toBe("US");
  expect(geo.country("81.2.69.142")).toBe("GB");
  expect(geo.country("193.0.6.139")).toBe("NL");
  expect(geo.country("133.242.0.3")).toBe("JP");
  expect(geo.country("::ffff:81.2.69.142")).toBe("GB");
  expect(geo.country("2001:4860:4860::8888")).toBe("US");
  expect(geo.country("2a00:1450:4001:80b::200e")).toBe("IE");
});

test("private, loopback, documentation and malformed addresses have no country", () => {
  for (const ip of [
    "127.0.0.1",
    "10.1.2.3",
    "192.168.1.1",
    "172.16.0.1",
    "::1",
    "fe80::1",
    "fd00::1",
    "203.0.113.7",
    "not-an-ip",
    "",
    null,
  ])
    expect(geo.country(ip)).toBeNull();
});
