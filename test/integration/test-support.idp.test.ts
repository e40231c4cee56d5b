import * as client from "openid-client";
import { FakeHttpServer } from "../fakes/fake-http";
import { startIdp, type IdpClient, type TestIdp } from "../fakes/oidc-idp";
import { Browser } from "../helpers/browser";

/**
 * The SSO test harness, proved without our service: openid-client 6 plays the relying party against
 * real oidc-provider IdPs on loopback, the Browser carries the redirects, and a plain loopback server
 * stands where the service's callback and post-logout pages would be.
 */
describe("the test IdP and Browser, with openid-client as the relying party", () => {
  const scope = "openid email profile groups";
  let rp: FakeHttpServer;
  let rpUrl: string;
  let acme: TestIdp;
  let globex: TestIdp;
  let acmeClient: IdpClient;
  let globexClient: IdpClient;

  beforeAll(async () => {
    rp = new FakeHttpServer((_request, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("relying party");
    });
    rpUrl = await rp.start();
    acmeClient = {
      client_id: "finance-gateway",
      client_secret: "acme-secret",
      redirect_uris: [`${rpUrl}/auth/sso/acme/callback`],
      post_logout_redirect_uris: [`${rpUrl}/signed-out`],
    };
    globexClient = {
      client_id: "finance-gateway",
      client_secret: "globex-secret",
      redirect_uris: [`${rpUrl}/auth/sso/globex/callback`],
      token_endpoint_auth_method: "client_secret_post",
    };
    acme = await startIdp({
      name: "acme",
      clients: [acmeClient],
      users: {
        alice: { email: "alice@acme.test", email_verified: true, name: "Alice Doe", groups: ["finance", "admins"] },
        carol: { email: "carol@acme.test", email_verified: false, name: "Carol Roe", groups: [] },
      },
    });
    globex = await startIdp({ name: "globex", clients: [globexClient] });
    globex.setUser("bob", { email: "bob@globex.test", email_verified: true, name: "Bob", groups: ["viewers"] });
  });

  afterAll(async () => {
    await Promise.all([acme?.stop(), globex?.stop(), rp?.stop()]);
  });

  /**
   * openid-client's view of an IdP; acme's client authenticates with client_secret_basic, globex's with
   * _post. enableNonRepudiationChecks makes openid-client verify ID token signatures against the JWKS:
   * by default it does not for tokens from the token endpoint, and never fetches the JWKS at all.
   */
  function discover(idp: TestIdp, registered: IdpClient): Promise<client.Configuration> {
    const authentication =
      registered.token_endpoint_auth_method === "client_secret_post" ? undefined : client.ClientSecretBasic(registered.client_secret);
    return client.discovery(new URL(idp.issuer), registered.client_id, registered.client_secret, authentication, {
      execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
    });
  }

  /** openid-client wraps the precise reason in `cause`. */
  const clientError = (code: string, reason: RegExp) =>
    expect.objectContaining({ code, cause: expect.objectContaining({ message: expect.stringMatching(reason) }) });

  /** One authorization code + PKCE round trip, as the service's /start and /callback routes will do it. */
  async function signIn(config: client.Configuration, registered: IdpClient, browser = new Browser()) {
    const redirectUri = registered.redirect_uris[0];
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    const page = await browser.get(authorizationUrl.href);
    const callback = new URL(page.url);
    const exchange = () =>
      client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    return { page, callback, state, exchange, browser };
  }

  const kidOf = (idToken: string) => JSON.parse(Buffer.from(idToken.split(".")[0], "base64url").toString()).kid as string;

  test("discovery advertises code flow with S256 PKCE, both secret methods, the groups scope and end-session", async () => {
    const metadata = (await discover(acme, acmeClient)).serverMetadata();
    expect(metadata.issuer).toBe(acme.issuer);
    expect(metadata.response_types_supported).toEqual(["code"]);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["client_secret_basic", "client_secret_post"]));
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(["openid", "email", "profile", "groups"]));
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(["email", "email_verified", "name", "groups"]));
    expect(metadata.end_session_endpoint).toBe(`${acme.issuer}/session/end`);
    expect(acme.requestsTo("/.well-known/openid-configuration").length).toBeGreaterThan(0);
  });

  test("a full code flow logs in as the chosen user and returns an ID token with email, name and groups", async () => {
    const config = await discover(acme, acmeClient);
    const { page, callback, state, exchange, browser } = await signIn(config, acmeClient);

    expect(page.status).toBe(200);
    expect(page.text).toBe("relying party");
    expect(callback.pathname).toBe("/auth/sso/acme/callback");
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.get("iss")).toBe(acme.issuer);
    const paths = browser.history.map((hop) => new URL(hop.url).pathname);
    expect(paths[0]).toBe("/auth");
    expect(paths.filter((path) => path.startsWith("/interaction/"))).toHaveLength(2); // login, then consent
    expect(paths.at(-1)).toBe("/auth/sso/acme/callback");
    expect(browser.history.slice(0, -1).every((hop) => hop.status === 303 && hop.location)).toBe(true);

    const tokens = await exchange();
    expect(tokens.claims()).toMatchObject({
      iss: acme.issuer,
      aud: "finance-gateway",
      sub: "alice",
      email: "alice@acme.test",
      email_verified: true,
      name: "Alice Doe",
      groups: ["finance", "admins"],
    });
    expect(kidOf(tokens.id_token!)).toBe(acme.signingKid);
    const authorization = acme.requestsTo("/auth")[0];
    expect(authorization.query.get("code_challenge_method")).toBe("S256");

    const session = browser.cookie(acme.issuer, "_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "lax", path: "/" });
    expect(browser.cookies(rpUrl)).toEqual([]);
  });

  test("a second login in the same browser is silent, and setLoginAs switches the account", async () => {
    const config = await discover(acme, acmeClient);
    const first = await signIn(config, acmeClient);
    await first.exchange();

    const again = await signIn(config, acmeClient, first.browser);
    expect(again.page.hops.some((hop) => hop.url.includes("/interaction/"))).toBe(false);
    expect((await again.exchange()).claims()?.sub).toBe("alice");

    acme.setLoginAs("carol");
    try {
      const switched = await signIn(config, acmeClient, first.browser);
      // oidc-provider ends alice's session with a self-submitting form before carol's login goes on.
      expect(switched.page.hops.some((hop) => hop.autoSubmitted)).toBe(true);
      expect(switched.page.hops.some((hop) => hop.url.includes("/interaction/"))).toBe(true);
      expect((await switched.exchange()).claims()).toMatchObject({
        sub: "carol",
        email: "carol@acme.test",
        email_verified: false,
        groups: [],
      });
    } finally {
      acme.setLoginAs("alice");
    }
  });

  test("the IdP refuses an authorization request without PKCE", async () => {
    const config = await discover(acme, acmeClient);
    const url = client.buildAuthorizationUrl(config, { redirect_uri: acmeClient.redirect_uris[0], scope, state: "s1" });
    const page = await new Browser().get(url.href);
    const callback = new URL(page.url);
    expect(callback.searchParams.get("error")).toBe("invalid_request");
    expect(callback.searchParams.get("error_description")).toMatch(/PKCE/);
  });

  test("two IdPs run at once with their own issuers, users, keys and cookies; one browser signs in to both", async () => {
    const browser = new Browser();
    const atAcme = await signIn(await discover(acme, acmeClient), acmeClient, browser);
    const atGlobex = await signIn(await discover(globex, globexClient), globexClient, browser);

    expect(globex.issuer).not.toBe(acme.issuer);
    expect((await atAcme.exchange()).claims()).toMatchObject({ iss: acme.issuer, sub: "alice" });
    expect((await atGlobex.exchange()).claims()).toMatchObject({ iss: globex.issuer, sub: "bob", groups: ["viewers"] });
    expect(globex.signingKid).toMatch(/^globex-key-/);
    expect(browser.cookie(acme.issuer, "_session")!.value).not.toBe(browser.cookie(globex.issuer, "_session")!.value);
    // globex's client is registered for client_secret_post, which is what openid-client sends by default.
    expect(globex.requestsTo("/token")).toHaveLength(1);
  });

  test("a code from one IdP replayed on the callback of another is refused (RFC 9207 iss)", async () => {
    const atGlobex = await signIn(await discover(globex, globexClient), globexClient);
    const globexCode = atGlobex.callback.searchParams.get("code")!;
    const acmeConfig = await discover(acme, acmeClient);
    const forged = new URL(acmeClient.redirect_uris[0]);
    forged.search = new URLSearchParams({ code: globexCode, state: atGlobex.state, iss: globex.issuer }).toString();
    await expect(
      client.authorizationCodeGrant(acmeConfig, forged, {
        pkceCodeVerifier: client.randomPKCECodeVerifier(),
        expectedState: atGlobex.state,
      }),
    ).rejects.toEqual(clientError("OAUTH_INVALID_RESPONSE", /"iss"/));
  });

  test("after a key rotation the cached JWKS misses the new kid; a fresh discovery fetches the JWKS again and validates", async () => {
    const cached = await discover(acme, acmeClient);
    const before = await signIn(cached, acmeClient);
    const oldIdToken = (await before.exchange()).id_token!;
    const oldKid = kidOf(oldIdToken);
    const jwksFetches = acme.requestsTo("/jwks").length;

    const newKid = await acme.rotateKeys();
    expect(newKid).not.toBe(oldKid);
    expect(acme.signingKid).toBe(newKid);
    expect(acme.publishedKids).toEqual([newKid]);
    const published = (await (await fetch(`${acme.issuer}/jwks`)).json()) as { keys: Array<{ kid: string; d?: string }> };
    expect(published.keys.map((key) => key.kid)).toEqual([newKid]);
    expect(published.keys[0].d).toBeUndefined();

    // The IdP session survived the rotation: this login is silent. openid-client's JWKS cache is young, so it refuses.
    const stale = await signIn(cached, acmeClient, before.browser);
    expect(stale.page.hops.some((hop) => hop.url.includes("/interaction/"))).toBe(false);
    await expect(stale.exchange()).rejects.toMatchObject({ code: "OAUTH_KEY_SELECTION_FAILED" });

    const fresh = await signIn(await discover(acme, acmeClient), acmeClient, before.browser);
    const tokens = await fresh.exchange();
    expect(kidOf(tokens.id_token!)).toBe(newKid);
    expect(tokens.claims()?.sub).toBe("alice");
    expect(acme.requestsTo("/jwks").length).toBeGreaterThan(jwksFetches + 1);

    // The IdP itself no longer accepts an ID token signed by the retired key as a logout hint.
    const logout = client.buildEndSessionUrl(cached, { id_token_hint: oldIdToken, post_logout_redirect_uri: `${rpUrl}/signed-out` });
    const refused = await before.browser.get(logout.href);
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id_token_hint/);

    const rolledKid = await acme.rotateKeys({ keepPrevious: true });
    expect(acme.publishedKids).toEqual([rolledKid, newKid]);
  });

  test("failNextAuthorization sends the RP an access_denied error redirect with its state, once", async () => {
    const config = await discover(acme, acmeClient);
    acme.failNextAuthorization();
    const denied = await signIn(config, acmeClient);
    expect(denied.callback.searchParams.get("error")).toBe("access_denied");
    expect(denied.callback.searchParams.get("state")).toBe(denied.state);
    expect(denied.callback.searchParams.get("code")).toBeNull();
    await expect(denied.exchange()).rejects.toMatchObject({ name: "AuthorizationResponseError", error: "access_denied" });

    // Even a browser with a live IdP session gets the error; the knob is then spent.
    const withSession = await signIn(config, acmeClient, denied.browser);
    await withSession.exchange();
    acme.failNextAuthorization("login_required", "ask again");
    const again = await signIn(config, acmeClient, withSession.browser);
    expect(again.callback.searchParams.get("error")).toBe("login_required");
    expect((await (await signIn(config, acmeClient, again.browser)).exchange()).claims()?.sub).toBe("alice");
  });

  test("tamperNextIdTokenNonce makes the RP's nonce check fail on a validly signed ID token", async () => {
    const config = await discover(acme, acmeClient);
    acme.tamperNextIdTokenNonce("someone-elses-nonce");
    const tampered = await signIn(config, acmeClient);
    await expect(tampered.exchange()).rejects.toEqual(clientError("OAUTH_JWT_CLAIM_COMPARISON_FAILED", /"nonce"/));

    const next = await signIn(config, acmeClient, tampered.browser);
    await expect(next.exchange()).resolves.toBeDefined();
  });

  test("a state mismatch needs only the Browser: stop at the callback and replay it elsewhere", async () => {
    const config = await discover(acme, acmeClient);
    const redirectUri = acmeClient.redirect_uris[0];
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state: "state-of-browser-a",
      nonce: "n",
    });
    const stopped = await new Browser().get(url.href, { stopAt: (target) => target.href.startsWith(redirectUri) });
    expect(stopped.status).toBe(303);
    expect(stopped.location).toContain("state=state-of-browser-a");
    expect(rp.requestsTo(/\/auth\/sso\/acme\/callback/).some((request) => request.query.get("state") === "state-of-browser-a")).toBe(false);
    await expect(
      client.authorizationCodeGrant(config, new URL(stopped.location!), {
        pkceCodeVerifier: verifier,
        expectedState: "state-of-browser-b",
        expectedNonce: "n",
      }),
    ).rejects.toEqual(clientError("OAUTH_INVALID_RESPONSE", /"state"/));
  });

  test("RP-initiated logout: the IdP's confirmation form, then a redirect to post_logout_redirect_uri with the state", async () => {
    const config = await discover(acme, acmeClient);
    const signedIn = await signIn(config, acmeClient);
    const tokens = await signedIn.exchange();
    const browser = signedIn.browser;

    const endSession = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${rpUrl}/signed-out`,
      state: "bye",
    });
    const confirm = await browser.get(endSession.href);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('name="xsrf"');

    const done = await browser.submitForm(confirm, { submitter: "logout" });
    expect(done.hops[0]).toMatchObject({ method: "POST", url: `${acme.issuer}/session/end/confirm`, status: 303 });
    expect(new URL(done.url).pathname).toBe("/signed-out");
    expect(new URL(done.url).searchParams.get("state")).toBe("bye");
    expect(done.text).toBe("relying party");
    expect(browser.cookie(acme.issuer, "_session")).toBeUndefined();

    // The IdP session is gone: the next login asks again.
    const next = await signIn(config, acmeClient, browser);
    expect(next.page.hops.some((hop) => hop.url.includes("/interaction/"))).toBe(true);
  });
});
