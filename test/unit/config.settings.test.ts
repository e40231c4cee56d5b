import { ConfigError, loadConfig } from "../../src/config/config";

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
  ])("invalid %p fails naming %s", (env, setting) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`${setting}:`));
  });

  test("TRUST_PROXY takes booleans, hop counts and address lists as express does", () => {
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "loopback, 10.0.0.0/8" }).trustProxy).toEqual(["loopback", "10.0.0.0/8"]);
  });

  test("empty values count as unset", () => {
    expect(loadConfig({ DATABASE_URL: "", PORT: "" }).port).toBe(3000);
  });
});
