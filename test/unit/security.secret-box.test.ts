import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../src/platform/config/config";
import { SecretBox } from "../../src/platform/security/secret-box";
import { redactor, sanitizeUpstreamText, upstreamUrlProblem } from "../../src/finance/banking/upstream-http";
import { OutboundGuard } from "../../src/platform/outbound/outbound.guard";
import { fakeDns } from "../helpers/fake-dns";

describe("secrets at rest", () => {
  test("seal/open round-trips with a fresh IV each time, and tampering is detected", () => {
    const box = new SecretBox(Buffer.alloc(32, 1));
    const a = box.seal("https://user:pass@bridge.example/simplefin");
    const b = box.seal("https://user:pass@bridge.example/simplefin");
    expect(a).toMatch(/^v1:[^:]+:[^:]+:[^:]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("pass");
    expect(box.open(a)).toBe("https://user:pass@bridge.example/simplefin");
    const parts = a.split(":");
    const flipped = Buffer.from(parts[3], "base64");
    flipped[0] ^= 1;
    expect(() => box.open([...parts.slice(0, 3), flipped.toString("base64")].join(":"))).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 2)).open(a)).toThrow();
    expect(() => box.open("v9:x:y:z")).toThrow(/known version/);
  });

  test("without ENCRYPTION_KEY a key is generated once into DATA_DIR with mode 0600 and reused", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-key-"));
    try {
      const first = SecretBox.fromConfig({ dataDir });
      const file = path.join(dataDir, "encryption-key");
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const sealed = first.seal("secret");
      expect(SecretBox.fromConfig({ dataDir }).open(sealed)).toBe("secret");
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("an invalid ENCRYPTION_KEY stops the boot, naming the setting", () => {
    expect(() => loadConfig({ ENCRYPTION_KEY: "too-short" })).toThrow(/ENCRYPTION_KEY: must be the base64 encoding of exactly 32 bytes/);
    expect(loadConfig({ ENCRYPTION_KEY: Buffer.alloc(32, 3).toString("base64") }).encryptionKey).toBeDefined();
  });
});

describe("provider URLs and provider text", () => {
  test("plain http needs ALLOW_INSECURE_UPSTREAMS; loopback or private addresses an outbound exception", async () => {
    const outbound = new OutboundGuard(loadConfig({}).outbound, fakeDns({ "lunchflow.app": "104.18.1.1" }));
    const strict = { outbound, httpsOnly: true };
    expect(await upstreamUrlProblem(strict, "https://lunchflow.app/api/v1")).toBeNull();
    expect(await upstreamUrlProblem(strict, "http://lunchflow.app/api/v1")).toMatch(/https/);
    expect(await upstreamUrlProblem(strict, "https://127.0.0.1:8443/")).toMatch(/loopback/);
    expect(await upstreamUrlProblem(strict, "https://192.168.1.4/")).toMatch(/private/);
    expect(await upstreamUrlProblem(strict, "https://[::1]/")).toMatch(/loopback/);
    expect(await upstreamUrlProblem({ outbound, httpsOnly: false }, "http://127.0.0.1:9/")).toMatch(/loopback/);
    const allowlisted = new OutboundGuard(loadConfig({ OUTBOUND_ALLOWLIST: "127.0.0.1" }).outbound);
    expect(await upstreamUrlProblem({ outbound: allowlisted, httpsOnly: false }, "http://127.0.0.1:9/")).toBeNull();
    expect(loadConfig({}).allowInsecureUpstreams).toBe(false);
  });

  test("credentials are redacted and HTML error pages reduced to text", () => {
    const redact = redactor(["sk_live_secret"]);
    expect(redact('{"url":"https://alice:pw123@bridge.example/sf","key":"sk_live_secret"}')).toBe(
      '{"url":"https://[redacted]@bridge.example/sf","key":"[redacted]"}',
    );
    expect(sanitizeUpstreamText("<html><script>x()</script><h1>502 Bad Gateway</h1>&nbsp;<p>nginx</p></html>")).toBe(
      "502 Bad Gateway nginx",
    );
  });
});
