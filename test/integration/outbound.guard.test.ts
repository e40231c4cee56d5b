import http from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import { OutboundRefusedError } from "../../src/platform/common/errors";
import { OutboundGuard, type OutboundPolicy, type Resolver } from "../../src/platform/outbound/outbound.guard";
import { fakeDns } from "../helpers/fake-dns";
import { selfSignedCertificate } from "../helpers/tls-certificate";
import { eventually } from "../helpers/eventually";

/**
 * The outbound guard against real servers on loopback. By default loopback is refused, so each test
 * says explicitly (allowlist, allowPrivate) what it lets through; a hostile DNS is an injected resolver.
 */
const STRICT: OutboundPolicy = { allowPrivate: false, allowlist: [], connectTimeoutMs: 2000, timeoutMs: 3000, maxResponseBytes: 64 * 1024 };

type Seen = { host?: string; path?: string; method?: string; servername?: string | false | null };

async function listen(server: http.Server | https.Server | net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function close(server: http.Server | https.Server | net.Server): Promise<void> {
  if ("closeAllConnections" in server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe("outbound guard", () => {
  let server: http.Server;
  let port: number;
  let seen: Seen[];
  const guards: OutboundGuard[] = [];
  const guard = (policy: Partial<OutboundPolicy> = {}, resolver?: Resolver) => {
    const created = new OutboundGuard({ ...STRICT, ...policy }, resolver);
    guards.push(created);
    return created;
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ host: req.headers.host, path: req.url, method: req.method });
      if (req.url === "/big") return void res.end("x".repeat(200 * 1024));
      if (req.url === "/big-chunked") {
        // Two writes, the second once the first has left: a streamed body with no declared length.
        return void res.write("x".repeat(40 * 1024), () => res.end("x".repeat(40 * 1024)));
      }
      if (req.url === "/silent") return; // never answers
      if (req.url?.startsWith("/redirect?to=")) {
        res.writeHead(302, { location: decodeURIComponent(req.url.slice("/redirect?to=".length)) });
        return void res.end();
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`hello ${req.method} ${req.url}`);
    });
    port = await listen(server);
  });
  beforeEach(() => {
    seen = [];
  });
  afterEach(() => {
    for (const created of guards.splice(0)) created.close();
  });
  afterAll(() => close(server));

  describe("refuses", () => {
    test.each([
      ["ftp://example.com/file", "scheme", /http or https/],
      ["file:///etc/passwd", "scheme", /http or https/],
      ["javascript:alert(1)", "scheme", /http or https/],
      ["not a url", "url", /not a valid URL/],
    ])("%s (%s)", async (url, reason, message) => {
      await expect(guard().request({ url })).rejects.toMatchObject({ reason, message: expect.stringMatching(message) });
    });

    test("plain http when the caller requires https", async () => {
      await expect(guard({ allowPrivate: true }).request({ url: `http://127.0.0.1:${port}/`, httpsOnly: true })).rejects.toMatchObject({
        reason: "scheme",
        message: "must be an https URL",
      });
    });

    test.each([
      ["127.0.0.1", "loopback"],
      ["[::1]", "loopback"],
      ["[::ffff:127.0.0.1]", "loopback"],
      ["[::ffff:7f00:1]", "loopback"],
      ["[64:ff9b::127.0.0.1]", "loopback"],
      ["0.0.0.0", "unspecified"],
      ["[::]", "unspecified"],
      ["10.0.0.7", "private"],
      ["192.168.0.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.1.1", "shared (CGNAT)"],
      ["[fd00::1]", "unique-local"],
      ["224.0.0.251", "multicast"],
      ["2130706433", "loopback"], // the URL parser reads a bare number as an IPv4 address
      ["0x7f.1", "loopback"],
    ])("the literal address %s (%s) without touching the network", async (host, reason) => {
      const dns = fakeDns({});
      await expect(guard({}, dns).request({ url: `http://${host}:${port}/` })).rejects.toMatchObject({
        reason: "address",
        message: expect.stringContaining(`must not point at a ${reason} address`),
      });
      expect(dns.calls).toEqual([]);
      expect(seen).toEqual([]);
    });

    test("localhost, which /etc/hosts maps to loopback, through the system resolver", async () => {
      await expect(guard().request({ url: `http://localhost:${port}/` })).rejects.toMatchObject({
        reason: "address",
        message: expect.stringMatching(/localhost resolves to (127\.0\.0\.1|::1), not allowed/),
      });
      expect(seen).toEqual([]);
    });

    test("a DNS name that resolves to loopback, or to a public and a private address", async () => {
      const dns = fakeDns({
        "hooks.example.com": ["127.0.0.1"],
        "mixed.example.com": ["93.184.216.34", "10.0.0.5"],
        "mapped.example.com": ["::ffff:7f00:1"],
      });
      await expect(guard({}, dns).request({ url: `http://hooks.example.com:${port}/` })).rejects.toThrow(
        "must not point at a loopback address (hooks.example.com resolves to 127.0.0.1, not allowed)",
      );
      await expect(guard({}, dns).request({ url: "http://mixed.example.com/" })).rejects.toThrow(
        /private address \(mixed.example.com resolves to 10.0.0.5/,
      );
      await expect(guard({}, dns).request({ url: `http://mapped.example.com:${port}/` })).rejects.toThrow(/loopback address/);
      expect(seen).toEqual([]);
    });

    test("a name that does not resolve", async () => {
      await expect(guard({}, fakeDns({})).request({ url: "https://nowhere.example/" })).rejects.toMatchObject({
        reason: "resolve",
        message: "host nowhere.example could not be resolved",
      });
    });

    test("a redirect, by default, even to an allowed place", async () => {
      const policy = { allowlist: ["127.0.0.1"] };
      await expect(
        guard(policy).request({ url: `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent("/ok")}` }),
      ).rejects.toMatchObject({
        reason: "redirect",
      });
    });

    test("a followed redirect to a private or loopback address, and the request never reaches it", async () => {
      const dns = fakeDns({ "public.example": ["127.0.0.1"], localhost: ["127.0.0.1"] });
      // public.example is trusted by name (it resolves to loopback here); the hop to a bare loopback address is not.
      const trusting = guard({ allowlist: ["public.example"] }, dns);
      for (const target of [
        `http://127.0.0.1:${port}/ok`,
        `http://localhost:${port}/ok`,
        `http://[::ffff:127.0.0.1]:${port}/ok`,
        "http://169.254.169.254/latest/meta-data/",
      ]) {
        seen = [];
        await expect(
          trusting.request({ url: `http://public.example:${port}/redirect?to=${encodeURIComponent(target)}`, redirect: "follow" }),
        ).rejects.toMatchObject({ reason: "address" });
        expect(seen.map((request) => request.path)).toEqual([`/redirect?to=${encodeURIComponent(target)}`]);
      }
    });

    test("a non-http redirect target and endless redirects", async () => {
      const allowed = guard({ allowlist: ["127.0.0.1"] });
      await expect(
        allowed.request({ url: `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent("file:///etc/passwd")}`, redirect: "follow" }),
      ).rejects.toMatchObject({ reason: "scheme" });
      const self = `http://127.0.0.1:${port}/redirect?to=`;
      let chain = `http://127.0.0.1:${port}/ok`;
      for (let i = 0; i < 7; i++) chain = `${self}${encodeURIComponent(chain)}`;
      await expect(allowed.request({ url: chain, redirect: "follow" })).rejects.toThrow(/more than 5 times/);
    });

    test("raw TCP connections to loopback (syslog destinations)", async () => {
      await expect(guard().connect({ host: "127.0.0.1", port })).rejects.toMatchObject({ reason: "address" });
      await expect(guard().connect({ host: "::ffff:127.0.0.1", port })).rejects.toMatchObject({ reason: "address" });
      await expect(
        guard({}, fakeDns({ "syslog.example": ["192.168.7.7"] })).connect({ host: "syslog.example", port: 514 }),
      ).rejects.toMatchObject({
        reason: "address",
      });
    });

    test("the guard's fetch refuses what request refuses", async () => {
      await expect(guard().fetch(`http://[::ffff:127.0.0.1]:${port}/`)).rejects.toBeInstanceOf(OutboundRefusedError);
      expect(seen).toEqual([]);
    });

    test("urlProblem explains a refusal for configuration forms, and accepts a public name", async () => {
      const dns = fakeDns({ "siem.example.com": ["203.0.114.10"], "internal.example.com": ["172.20.1.1"] });
      expect(await guard({}, dns).urlProblem("https://siem.example.com/ingest")).toBeNull();
      expect(await guard({}, dns).urlProblem("https://internal.example.com/ingest")).toBe(
        "must not point at a private address (internal.example.com resolves to 172.20.1.1, not allowed)",
      );
    });
  });

  describe("allows, when the operator says so", () => {
    test("an allowlisted address or CIDR range, and nothing next to it", async () => {
      const answer = await guard({ allowlist: ["127.0.0.0/30"] }).request({ url: `http://127.0.0.1:${port}/ok` });
      expect(answer.status).toBe(200);
      expect(answer.text()).toBe("hello GET /ok");
      await expect(guard({ allowlist: ["127.0.0.2/32"] }).request({ url: `http://127.0.0.1:${port}/ok` })).rejects.toMatchObject({
        reason: "address",
      });
    });

    test("any private address with allowPrivate, but never the unspecified address", async () => {
      expect((await guard({ allowPrivate: true }).request({ url: `http://localhost:${port}/ok` })).status).toBe(200);
      expect((await guard({ allowPrivate: true }).request({ url: `http://[::ffff:127.0.0.1]:${port}/ok` })).status).toBe(200);
      await expect(guard({ allowPrivate: true }).request({ url: `http://0.0.0.0:${port}/ok` })).rejects.toMatchObject({
        reason: "address",
      });
    });

    test("a followed redirect whose every hop is allowed; a POST becomes a GET on 302", async () => {
      const answer = await guard({ allowlist: ["127.0.0.1"] }).request({
        method: "POST",
        url: `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent("/landing")}`,
        body: "{}",
        headers: { "content-type": "application/json" },
        redirect: "follow",
      });
      expect(answer.text()).toBe("hello GET /landing");
      expect(seen.map((request) => `${request.method} ${request.path}`)).toEqual([`POST /redirect?to=%2Flanding`, "GET /landing"]);
    });

    test("the guard's fetch returns a standard Response", async () => {
      const response = await guard({ allowlist: ["127.0.0.1"] }).fetch(`http://127.0.0.1:${port}/ok`, {
        method: "POST",
        body: new URLSearchParams({ a: "1" }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain");
      expect(await response.text()).toBe("hello POST /ok");
    });
  });

  describe("no DNS rebinding", () => {
    test("the connection goes to the checked address: the name is resolved once, and the Host header keeps the name", async () => {
      // First answer: the allowlisted 127.0.0.1. Any later answer would be 127.0.0.2, which is refused and where nothing listens.
      let answers = 0;
      const dns = fakeDns({ "rebind.example": () => (answers++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"]) });
      const answer = await guard({ allowlist: ["127.0.0.1"] }, dns).request({ url: `http://rebind.example:${port}/ok` });
      expect(answer.text()).toBe("hello GET /ok");
      expect(dns.calls).toEqual(["rebind.example"]);
      expect(seen).toEqual([{ host: `rebind.example:${port}`, path: "/ok", method: "GET" }]);
    });

    test("over TLS the pinned connection still sends the name as SNI and verifies the certificate for it", async () => {
      const certificate = selfSignedCertificate(["receiver.example"]);
      const tlsSeen: Seen[] = [];
      const secure = https.createServer(certificate, (req, res) => {
        tlsSeen.push({ host: req.headers.host, servername: (req.socket as import("node:tls").TLSSocket).servername });
        res.end("secure hello");
      });
      const securePort = await listen(secure);
      try {
        const dns = fakeDns({ "receiver.example": ["127.0.0.1"], "other.example": ["127.0.0.1"] });
        const tlsGuard = guard({ allowlist: ["127.0.0.1"] }, dns);
        const answer = await tlsGuard.request({ url: `https://receiver.example:${securePort}/`, ca: certificate.cert });
        expect(answer.text()).toBe("secure hello");
        expect(tlsSeen).toEqual([{ host: `receiver.example:${securePort}`, servername: "receiver.example" }]);
        // Same address, another name: the certificate does not match, so the request fails rather than trusting the address.
        await expect(tlsGuard.request({ url: `https://other.example:${securePort}/`, ca: certificate.cert })).rejects.toMatchObject({
          reason: "network",
          message: expect.stringContaining("ERR_TLS_CERT_ALTNAME_INVALID"),
        });
      } finally {
        await close(secure);
      }
    });

    test("raw TCP connections are pinned too", async () => {
      const received: string[] = [];
      const tcp = net.createServer((socket) => socket.on("data", (data) => received.push(data.toString())));
      const tcpPort = await listen(tcp);
      try {
        const dns = fakeDns({ "syslog.example": ["127.0.0.1"] });
        const socket = await guard({ allowlist: ["127.0.0.1"] }, dns).connect({ host: "syslog.example", port: tcpPort });
        expect(socket.remoteAddress).toBe("127.0.0.1");
        await new Promise<void>((resolve) => socket.end("<14>hello\n", resolve));
        await eventually(() => expect(received.join("")).toBe("<14>hello\n"));
      } finally {
        await close(tcp);
      }
    });
  });

  describe("bounds", () => {
    test("a response body larger than the cap, declared or streamed, is refused", async () => {
      const capped = guard({ allowlist: ["127.0.0.1"], maxResponseBytes: 64 * 1024 });
      await expect(capped.request({ url: `http://127.0.0.1:${port}/big` })).rejects.toMatchObject({ reason: "too_large" });
      await expect(capped.request({ url: `http://127.0.0.1:${port}/big-chunked` })).rejects.toMatchObject({ reason: "too_large" });
      expect((await capped.request({ url: `http://127.0.0.1:${port}/big-chunked`, maxResponseBytes: 100 * 1024 })).body.length).toBe(
        80 * 1024,
      );
    });

    // The reasons tell the timers apart: only the answer timer ends a request with "timeout", only the
    // connect timer with "connect_timeout" (the answer timer there is 5 s).
    test("an answer that never comes ends at the timeout", async () => {
      await expect(
        guard({ allowlist: ["127.0.0.1"] }).request({ url: `http://127.0.0.1:${port}/silent`, timeoutMs: 300 }),
      ).rejects.toMatchObject({
        reason: "timeout",
      });
    });

    test("a connection that is not established in time (a TLS handshake that never completes) ends at the connect timeout", async () => {
      const held: net.Socket[] = [];
      const mute = net.createServer((socket) => void held.push(socket)); // accepts TCP, never speaks TLS
      const mutePort = await listen(mute);
      try {
        await expect(
          guard({ allowlist: ["127.0.0.1"] }).request({ url: `https://127.0.0.1:${mutePort}/`, connectTimeoutMs: 300, timeoutMs: 5000 }),
        ).rejects.toMatchObject({ reason: "connect_timeout" });
      } finally {
        for (const socket of held) socket.destroy();
        await close(mute);
      }
    });

    test("an aborted request stops", async () => {
      const controller = new AbortController();
      const request = guard({ allowlist: ["127.0.0.1"] }).request({ url: `http://127.0.0.1:${port}/silent`, signal: controller.signal });
      // Aborted while the request is at the server, waiting for an answer that never comes.
      await eventually(() => seen.some((request) => request.path === "/silent"));
      controller.abort();
      await expect(request).rejects.toMatchObject({ reason: "aborted" });
    });
  });
});
