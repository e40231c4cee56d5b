import { eventually } from "../helpers/eventually";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createUser } from "../helpers/fixtures";
import { recordAuditEvents, streamAdmin } from "../helpers/streaming";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Destinations go through the outbound guard: with the default policy, URLs that are not http(s) or
 * that point (literally, through an IPv6 form, or through DNS) at loopback, private, link-local or
 * metadata addresses are refused when configured; a redirect at delivery time is refused and logged.
 */
describe("with the default outbound policy", () => {
  let app: TestApp;
  let admin$: ReturnType<typeof streamAdmin>;

  beforeAll(async () => {
    app = await startTestApp();
    admin$ = streamAdmin(app.url, (await createUser(app.runtime.services, { role: "admin" })).key);
  });
  afterAll(() => app?.stop());

  test.each([
    ["http://localhost:8080/hook", /localhost resolves to (127\.0\.0\.1|::1), not allowed/],
    ["http://127.0.0.1:8080/hook", /loopback address \(127\.0\.0\.1 is not allowed\)/],
    ["http://[::ffff:127.0.0.1]:8080/hook", /loopback address/],
    ["http://169.254.169.254/latest/meta-data/", /link-local address/],
    ["http://10.0.0.8/hook", /private address/],
    ["http://0.0.0.0/hook", /unspecified address/],
    ["ftp://example.com/hook", /must be an http or https URL/],
  ])("a webhook to %s is refused", async (url, problem) => {
    const answer = await admin$.gql(`mutation ($input: StreamDestinationInput!) { createStreamDestination(input: $input) { secret } }`, {
      input: { kind: "webhook", name: "Nope", url },
    });
    expect(answer.errors?.[0].extensions?.code).toBe("VALIDATION_FAILED");
    expect(answer.errors?.[0].extensions?.errors?.[0]).toMatch(problem);
  });

  test("a syslog destination at a name that resolves to loopback is refused", async () => {
    const answer = await admin$.gql(`mutation ($input: StreamDestinationInput!) { createStreamDestination(input: $input) { secret } }`, {
      input: { kind: "arcsight", name: "Nope", url: "syslog://localhost:514" },
    });
    expect(answer.errors?.[0].extensions?.errors?.[0]).toMatch(/^Url must not point at a loopback address/);
  });

  test("a Sentinel token authority on a private address is refused", async () => {
    const answer = await admin$.gql(`mutation ($input: StreamDestinationInput!) { createStreamDestination(input: $input) { secret } }`, {
      input: {
        kind: "sentinel",
        name: "Nope",
        url: "https://203.0.114.1",
        settings: ["tenantId", "clientId", "dcrImmutableId", "streamName"]
          .map((name) => ({ name, value: "x" }))
          .concat([{ name: "authorityUrl", value: "http://192.168.1.1" }]),
        credentials: [{ name: "clientSecret", value: "s" }],
      },
    });
    expect(answer.errors?.[0].extensions?.errors).toEqual([
      "Setting authorityUrl must not point at a private address (192.168.1.1 is not allowed)",
    ]);
  });
});

test("a receiver that redirects (here to the metadata address) is not followed: the attempt is logged as refused", async () => {
  const hits: string[] = [];
  const redirector = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
    res.end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  const app = await startTestApp({
    roles: { workers: true },
    env: { OUTBOUND_ALLOWLIST: "127.0.0.1/32", STREAM_POLL_MS: "100", STREAM_RETRY_SCHEDULE: "1h" },
  });
  try {
    const admin$ = streamAdmin(app.url, (await createUser(app.runtime.services, { role: "admin" })).key);
    const { id } = await admin$.create({
      kind: "webhook",
      name: "Redirector",
      url: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/hook`,
      eventTypes: ["auth.logout"],
    });
    await recordAuditEvents(app.runtime, 1, "auth.logout");
    await eventually(async () => (await admin$.destination(id)).health.failures === 1, { what: "the refused attempt" });
    const log = await admin$.gql(`query ($id: ID!) { streamDeliveries(destinationId: $id) { outcome status error } }`, { id });
    expect(log.data.streamDeliveries).toEqual([
      { outcome: "refused", status: null, error: "refused: answered 302 with a redirect, which is not followed" },
    ]);
    expect(hits).toEqual(["/hook"]);
  } finally {
    await app.stop();
    redirector.closeAllConnections();
    await new Promise<void>((resolve) => redirector.close(() => resolve()));
  }
});
