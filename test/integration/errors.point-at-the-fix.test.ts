/**
 * A refusal that configuration causes says which settings change it and which page explains them: a
 * new user trying the bank sandboxes or a local identity provider on a service started without
 * ALLOW_INSECURE_UPSTREAMS learns the two settings to add, not just "must be an https URL".
 */
import fs from "node:fs";
import path from "node:path";
import { DOCS_PAGES } from "../../src/platform/common/docs-pages";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { anchorsOf } from "../helpers/markdown-links";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
let member: TestUser;
let admin: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  member = await createUser(app.runtime.services);
  admin = await createUser(app.runtime.services, { role: "admin" });
});

afterAll(async () => {
  await app?.stop();
});

const SETTINGS = "ALLOW_INSECURE_UPSTREAMS=true OUTBOUND_ALLOW_PRIVATE=true";

test("connecting the Lunch Flow sandbox names the two settings and the bank connections page", async () => {
  const response = await apiKeyClient(app.url, member.key).graphql(
    `mutation { connectLunchflow(apiKey: "lf_sandbox_key", baseUrl: "http://127.0.0.1:8091/api/v1") { id } }`,
  );
  expect(response.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");
  expect(response.body.errors[0].extensions.errors).toEqual([
    `Base URL must be an https URL: to try the local sandboxes, start the service with ${SETTINGS} ` +
      "(never for real banks; see docs/bank-connections.md#try-it-without-a-bank)",
  ]);
});

test("a SimpleFIN sandbox token says the same instead of calling the token invalid", async () => {
  const token = Buffer.from("http://127.0.0.1:8092/simplefin/claim/abc").toString("base64");
  const response = await apiKeyClient(app.url, member.key).graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, {
    t: token,
  });
  expect(response.body.errors[0].extensions.errors[0]).toBe(
    `The setup token's claim URL must be an https URL: to try the local sandboxes, start the service with ${SETTINGS} ` +
      "(never for real banks; see docs/bank-connections.md#try-it-without-a-bank)",
  );
  // A token that decodes to no URL at all is still just not a token.
  const garbage = await apiKeyClient(app.url, member.key).graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, {
    t: Buffer.from("not a url").toString("base64"),
  });
  expect(garbage.body.errors[0].extensions.errors[0]).toMatch(/^The setup token is not valid/);
});

test("an http issuer names the settings and the SSO walk-through", async () => {
  const response = await apiKeyClient(app.url, admin.key).graphql(
    `mutation { createSsoProvider(input: {name: "Local", slug: "local", issuer: "http://127.0.0.1:8090", clientId: "c", clientSecret: "s"}) { id } }`,
  );
  expect(response.body.errors[0].extensions.errors).toEqual([
    `Issuer must be an https URL: to try a local identity provider, start the service with ${SETTINGS} (see docs/sso.md#sso-walk-through-local-idp)`,
  ]);
});

test("every page an error points at exists, with its anchor", () => {
  const root = path.join(__dirname, "..", "..");
  for (const target of Object.values(DOCS_PAGES)) {
    const [file, anchor] = target.split("#");
    const text = fs.readFileSync(path.join(root, file), "utf8");
    if (anchor) expect({ target, found: anchorsOf(text).has(anchor) }).toEqual({ target, found: true });
  }
});
