/**
 * The probe's SSRF cases, through the API: the old check read only the text of a host, so an
 * IPv4-mapped IPv6 literal or a DNS name resolving to loopback or a private address passed, through the
 * Lunch Flow base URL, credential replacement, a SimpleFIN setup token (and the access URL its claim
 * answers) and the SSO issuer; the token_endpoint and jwks_uri of a discovery document were not checked
 * at all. Every one of these now goes through the outbound guard (src/platform/outbound).
 *
 * The DNS is a fake (test/helpers/fake-dns.ts): `*.attacker.example` names resolve to internal
 * addresses; `*.trusted.test` names resolve to this machine's loopback fakes and are the only
 * exceptions the service is given (OUTBOUND_ALLOWLIST), as a private deployment would be.
 */
import { FakeLunchflowServer } from "../fakes/lunchflow-server";
import { FakeHttpServer, sendJson } from "../fakes/fake-http";
import { fakeDns } from "../helpers/fake-dns";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
let user: TestUser;
let admin: TestUser;
let lunchflow: FakeLunchflowServer;
let bridge: FakeHttpServer;
let idp: FakeHttpServer;
let idpDocument: Record<string, unknown> = {};
const port = (server: { url: string }) => new URL(server.url).port;

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  lunchflow.keys.set("lf_key", "active");
  await lunchflow.start();
  bridge = new FakeHttpServer((_request, res) => {
    // The claim answers an access URL whose host is loopback, spelled as an IPv4-mapped IPv6 literal.
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`http://user:secret@[::ffff:127.0.0.1]:${port(bridge)}/simplefin`);
  });
  await bridge.start();
  idp = new FakeHttpServer((_request, res) => sendJson(res, 200, idpDocument));
  await idp.start();
  app = await startTestApp({
    env: { ALLOW_INSECURE_UPSTREAMS: "true", OUTBOUND_ALLOWLIST: "*.trusted.test", RATE_LIMIT_REQUESTS: "0" },
    resolve: fakeDns({
      "lunchflow.attacker.example": "127.0.0.1",
      "bridge.attacker.example": "10.0.0.7",
      "idp.attacker.example": ["93.184.216.34", "127.0.0.1"],
      "jwks.attacker.example": "169.254.169.254",
      "lunchflow.trusted.test": "127.0.0.1",
      "bridge.trusted.test": "127.0.0.1",
      "idp.trusted.test": "127.0.0.1",
    }),
  });
  user = await createUser(app.runtime.services);
  admin = await createUser(app.runtime.services, { role: "admin" });
});

afterAll(async () => {
  await app?.stop();
  await Promise.all([lunchflow?.stop(), bridge?.stop(), idp?.stop()]);
});

const gql = (who: TestUser, query: string, variables?: Record<string, unknown>) => apiKeyClient(app.url, who.key).graphql(query, variables);
const CONNECT_LUNCHFLOW = `mutation ($u: String) { connectLunchflow(apiKey: "lf_key", baseUrl: $u) { id } }`;

describe("Lunch Flow base URL", () => {
  test.each([
    ["an IPv4-mapped IPv6 literal", "http://[::ffff:127.0.0.1]:9/api/v1", /loopback address/],
    ["the same in hex", "http://[::ffff:7f00:1]:9/api/v1", /loopback address/],
    ["a DNS name resolving to loopback", "http://lunchflow.attacker.example/api/v1", /lunchflow.attacker.example resolves to 127.0.0.1/],
    ["cloud metadata", "http://169.254.169.254/latest", /link-local address/],
  ])("%s is refused before any request", async (_case, baseUrl, why) => {
    const before = lunchflow.requests.length;
    const response = await gql(user, CONNECT_LUNCHFLOW, { u: baseUrl });
    expect(response.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");
    expect(response.body.errors[0].extensions.errors[0]).toMatch(/^Base URL must not point at a/);
    expect(response.body.errors[0].message).toMatch(why);
    expect(lunchflow.requests.length).toBe(before);
  });

  test("credential replacement re-checks a new base URL", async () => {
    const connected = await gql(user, CONNECT_LUNCHFLOW, { u: `http://lunchflow.trusted.test:${port(lunchflow.http)}/api/v1` });
    expect(connected.body.errors).toBeUndefined();
    const id = connected.body.data.connectLunchflow.id;
    const replaced = await gql(
      user,
      `mutation ($id: ID!, $u: String) { replaceBankCredentials(id: $id, apiKey: "lf_key", baseUrl: $u) { id } }`,
      {
        id,
        u: "http://lunchflow.attacker.example/api/v1",
      },
    );
    expect(replaced.body.errors[0].extensions.errors).toEqual([
      "Base URL must not point at a loopback address (lunchflow.attacker.example resolves to 127.0.0.1, not allowed)",
    ]);
  });
});

describe("SimpleFIN", () => {
  const CONNECT = `mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`;
  const token = (url: string) => Buffer.from(url).toString("base64");

  test.each([
    ["an IPv4-mapped IPv6 claim URL", "http://[::ffff:127.0.0.1]:9/claim/x"],
    ["a claim URL whose name resolves to a private address", "http://bridge.attacker.example/claim/x"],
  ])("a setup token holding %s is not a valid token", async (_case, url) => {
    const response = await gql(user, CONNECT, { t: token(url) });
    expect(response.body.errors[0].message).toMatch(/setup token is not valid/);
  });

  test("an access URL answered by the claim is checked too: loopback, IPv4-mapped, is refused", async () => {
    const response = await gql(user, CONNECT, { t: token(`http://bridge.trusted.test:${port(bridge)}/claim/x`) });
    expect(bridge.requests.length).toBe(1);
    expect(response.body.errors[0]).toMatchObject({
      message: "SimpleFIN could not be reached to claim the token: SimpleFIN answered the claim with something that is not an access URL",
      extensions: { code: "UPSTREAM_UNAVAILABLE" },
    });
  });
});

describe("SSO", () => {
  const CREATE = `mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`;
  const TEST = `mutation ($id: ID!) { testSsoProvider(id: $id) { ok error } }`;
  const provider = (slug: string, issuer: string) => ({ name: slug, slug, issuer, clientId: "client", clientSecret: "secret" });

  test.each([
    ["an IPv4-mapped IPv6 issuer", "http://[::ffff:127.0.0.1]:9", /loopback address/],
    ["an issuer one of whose addresses is loopback", "http://idp.attacker.example", /idp.attacker.example resolves to 127.0.0.1/],
  ])("%s is refused", async (_case, issuer, why) => {
    const response = await gql(admin, CREATE, { input: provider(`p${Math.random().toString(36).slice(2, 8)}`, issuer) });
    expect(response.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");
    expect(response.body.errors[0].extensions.errors[0]).toMatch(why);
  });

  test.each([
    [
      "token_endpoint",
      { token_endpoint: "http://169.254.169.254/latest/meta-data" },
      /names a token_endpoint that must not point at a link-local address/,
    ],
    [
      "jwks_uri",
      { jwks_uri: "http://jwks.attacker.example/keys" },
      /names a jwks_uri that must not point at a link-local address \(jwks.attacker.example resolves to 169.254.169.254/,
    ],
    [
      "userinfo_endpoint",
      { userinfo_endpoint: "http://[::ffff:10.0.0.1]/userinfo" },
      /names a userinfo_endpoint that must not point at a private address/,
    ],
    [
      "end_session_endpoint",
      { end_session_endpoint: "http://127.0.0.1/logout" },
      /names a end_session_endpoint that must not point at a loopback address/,
    ],
  ])("a discovery document naming an internal %s is refused", async (name, override, why) => {
    const issuer = `http://idp.trusted.test:${port(idp)}`;
    idpDocument = {
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
      ...override,
    };
    const created = await gql(admin, CREATE, { input: provider(`d-${name.replace(/_/g, "-")}`, issuer) });
    expect(created.body.errors).toBeUndefined();
    const tested = await gql(admin, TEST, { id: created.body.data.createSsoProvider.id });
    const outcome = tested.body.data?.testSsoProvider ?? { ok: false, error: tested.body.errors[0].message };
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(why);
  });
});
