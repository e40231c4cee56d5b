import {
  classifyAddress,
  embeddedIpv4,
  parseAllowlist,
  addressIsAllowlisted,
  hostIsAllowlisted,
} from "../../src/platform/outbound/outbound.addresses";

describe("outbound address classification", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"], // how the URL parser writes [::ffff:127.0.0.1]
    ["::ffff:0:127.0.0.1", "loopback"], // SIIT
    ["::127.0.0.1", "loopback"], // deprecated IPv4-compatible
    ["64:ff9b::7f00:1", "loopback"], // NAT64 well-known prefix
    ["64:ff9b:1::a00:1", "private"], // NAT64 local-use prefix
    ["2002:7f00:1::", "loopback"], // 6to4
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["169.254.169.254", "link-local"], // cloud metadata
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["100.64.0.1", "shared (CGNAT)"],
    ["100.127.255.254", "shared (CGNAT)"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "reserved"],
    ["198.18.0.1", "reserved"],
    ["2001:db8::1", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"], // Teredo
    ["100::1", "reserved"],
    ["4000::1", "reserved"], // outside 2000::/3
    ["localhost", "not an IP address"],
  ])("%s is refused as %s", (address, reason) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, reason });
  });

  test.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"])(
    "%s is a public address",
    (address) => {
      expect(classifyAddress(address)).toEqual({ allowed: true });
    },
  );

  test("embedded IPv4 addresses are unwrapped from every translation form", () => {
    expect(embeddedIpv4("::ffff:c0a8:101")).toBe("192.168.1.1");
    expect(embeddedIpv4("64:ff9b::c0a8:101")).toBe("192.168.1.1");
    expect(embeddedIpv4("2002:c0a8:101::1")).toBe("192.168.1.1");
    expect(embeddedIpv4("2606:4700::1")).toBeNull();
    expect(embeddedIpv4("::1")).toBeNull();
  });

  test("the allowlist takes hosts, wildcard suffixes, addresses and CIDR ranges", () => {
    const allowlist = parseAllowlist(["siem.corp", "*.hooks.internal", "10.1.0.0/16", "127.0.0.1", "[fd00::1]"]);
    expect(hostIsAllowlisted(allowlist, "SIEM.corp")).toBe(true);
    expect(hostIsAllowlisted(allowlist, "a.hooks.internal")).toBe(true);
    expect(hostIsAllowlisted(allowlist, "hooks.internal.evil.com")).toBe(false);
    expect(hostIsAllowlisted(allowlist, "evilsiem.corp")).toBe(false);
    expect(addressIsAllowlisted(allowlist, "10.1.200.3")).toBe(true);
    expect(addressIsAllowlisted(allowlist, "::ffff:10.1.200.3")).toBe(true);
    expect(addressIsAllowlisted(allowlist, "10.2.0.1")).toBe(false);
    expect(addressIsAllowlisted(allowlist, "127.0.0.1")).toBe(true);
    expect(addressIsAllowlisted(allowlist, "127.0.0.2")).toBe(false);
    expect(addressIsAllowlisted(allowlist, "fd00::1")).toBe(true);
    expect(() => parseAllowlist(["10.0.0.0/40"])).toThrow(/CIDR/);
    expect(() => parseAllowlist(["https://x.example"])).toThrow(/neither/);
  });
});
