import { ConfigError, loadConfig } from "../../src/platform/config/config";

describe("configuration", () => {
  test("has defaults for everything, so an empty environment starts the service", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: undefined,
      redisUrl: undefined,
      rateLimitRequests: 1000,
      trustProxy: ["loopback"],
    });
  });

  test.each([
    [{ PORT: "seventy" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ REDIS_URL: "localhost:6379" }, "REDIS_URL"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ RATE_LIMIT_REQUESTS: "-1" }, "RATE_LIMIT_REQUESTS"],
    [{ TRUST_PROXY: "not-an-address" }, "TRUST_PROXY"],
    [{ DATABASE_POOL_MAX: "1" }, "DATABASE_POOL_MAX"],
    [{ REDIS_PREFIX: "a b" }, "REDIS_PREFIX"],
    [{ OUTBOUND_ALLOWLIST: "10.0.0.0/33" }, "OUTBOUND_ALLOWLIST"],
    [{ OUTBOUND_ALLOWLIST: "http://example.com" }, "OUTBOUND_ALLOWLIST"],
    [{ OUTBOUND_ALLOW_PRIVATE: "maybe" }, "OUTBOUND_ALLOW_PRIVATE"],
  ])("invalid %p fails naming %s", (env, setting) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`${setting}:`));
  });

  test("TRUST_PROXY takes booleans, hop counts and address lists as express does", () => {
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "loopback, 10.0.0.0/8" }).trustProxy).toEqual(["loopback", "10.0.0.0/8"]);
  });

  test("the outbound guard refuses private addresses unless OUTBOUND_ALLOW_PRIVATE or OUTBOUND_ALLOWLIST says otherwise", () => {
    expect(loadConfig({}).outbound).toMatchObject({ allowPrivate: false, allowlist: [] });
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_ALLOWLIST: "siem.corp, 10.1.0.0/16 , [fd00::1]" }).outbound).toMatchObject(
      {
        allowPrivate: true,
        allowlist: ["siem.corp", "10.1.0.0/16", "[fd00::1]"],
      },
    );
  });

  test("empty values count as unset", () => {
    expect(loadConfig({ DATABASE_URL: "", PORT: "" }).port).toBe(3000);
  });
});
