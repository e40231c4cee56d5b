import type http from "node:http";
import { loadConfig } from "../../src/platform/config/config";
import { restErrorOf } from "../../src/platform/common/error-edges";
import { metricsAccess } from "../../src/transports/http/metrics.http";

/** Who may read /metrics: loopback peers without forwarding headers, or the bearer of METRICS_TOKEN. */
function request(remoteAddress: string, headers: Record<string, string> = {}): http.IncomingMessage {
  return { socket: { remoteAddress }, headers } as unknown as http.IncomingMessage;
}

const open = loadConfig({});
const token = "a-long-enough-metrics-token";
const guarded = loadConfig({ METRICS_TOKEN: token });

test.each(["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])("without a token, the loopback peer %s may read", (address) => {
  expect(metricsAccess(open, request(address))).toEqual({ ok: true });
});

test.each([
  ["a peer on the network", "10.1.2.3", {}],
  ["an IPv6 peer", "2001:db8::1", {}],
  ["an IPv4-mapped outside peer", "::ffff:192.0.2.7", {}],
  ["a loopback peer forwarding for someone (X-Forwarded-For)", "127.0.0.1", { "x-forwarded-for": "192.0.2.7" }],
  ["a loopback peer forwarding for someone (Forwarded)", "::1", { forwarded: "for=192.0.2.7" }],
  ["a loopback peer forwarding for someone (X-Real-IP)", "127.0.0.1", { "x-real-ip": "192.0.2.7" }],
])("without a token, %s is refused with 403", (_what, address, headers) => {
  const access = metricsAccess(open, request(address, headers));
  expect(access.ok).toBe(false);
  if (access.ok) return;
  expect(restErrorOf(access.error)).toEqual({ status: 403, body: { error: "forbidden", message: expect.stringContaining("loopback") } });
});

test("with a token, only its bearer may read, from anywhere; loopback alone is not enough", () => {
  expect(metricsAccess(guarded, request("192.0.2.7", { authorization: `Bearer ${token}` }))).toEqual({ ok: true });
  expect(metricsAccess(guarded, request("127.0.0.1", { authorization: `bearer ${token}` }))).toEqual({ ok: true });
  for (const authorization of [undefined, `Bearer ${token}x`, token, `Basic ${token}`, `Bearer ${token.slice(1)}`]) {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    const access = metricsAccess(guarded, request("127.0.0.1", headers));
    expect(access.ok).toBe(false);
    if (!access.ok) expect(restErrorOf(access.error)).toMatchObject({ status: 401, body: { error: "unauthorized" } });
  }
});

test("a token shorter than 16 characters is refused at boot", () => {
  expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
});
