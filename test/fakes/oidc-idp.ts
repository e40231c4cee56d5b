import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { promisify } from "node:util";
import type { Adapter, AdapterPayload, Configuration, JWK, KoaContextWithOIDC, Provider } from "oidc-provider";

/**
 * A real OpenID Connect provider (oidc-provider 9) on 127.0.0.1, for tests of SSO login and logout.
 *
 *   const idp = await startIdp({ name: "acme" });
 *   idp.addClient({ client_id: "fg", client_secret: "s3cret", redirect_uris: [`${app.url}/auth/sso/acme/callback`],
 *                   post_logout_redirect_uris: [`${app.url}/`] });
 *   idp.setUser("alice", { email: "alice@acme.test", email_verified: true, name: "Alice", groups: ["finance"] });
 *   // the service is configured with issuer idp.issuer, client fg / s3cret
 *   const page = await new Browser().get(`${app.url}/auth/sso/acme/start`);   // lands back on the service, logged in
 *   await idp.stop();
 *
 * What it serves: discovery (`/.well-known/openid-configuration`), JWKS (`/jwks`), authorization (`/auth`),
 * token (`/token`, client_secret_basic or client_secret_post, as each client registered), userinfo
 * (`/me`), RP-initiated logout (`/session/end`, an HTML confirmation form posting to `/session/end/confirm`).
 * Authorization code flow only, PKCE S256 required. Scopes `openid email profile groups` (plus
 * `offline_access`); claims email+email_verified (email), name (profile), groups (groups). The ID token
 * carries the claims of the granted scopes (not only userinfo), like most real IdPs.
 *
 * Login and consent happen without HTML: the provider sends the browser to `/interaction/:uid`, which
 * this fake completes at once, logging in as `setLoginAs(...)` (default: the first user set) and
 * granting every scope and claim asked for. The IdP keeps its own session cookie, so a second login in
 * the same Browser is silent (single sign-on), unless `setLoginAs` names another account, which makes
 * the IdP ask for a login again.
 *
 * Tests of failures:
 * - `failNextAuthorization()`: the next authorization answers the RP with `error=access_denied` (the user
 *   cancelled at the IdP), as a normal error redirect carrying the RP's state.
 * - `tamperNextIdTokenNonce("x")`: the next authorization code's ID token, validly signed, carries nonce
 *   "x" instead of the RP's. (A state mismatch needs no IdP help: stop the Browser at the callback with
 *   `stopAt` and change `state`, or replay one browser's callback URL in another browser.)
 * - `rotateKeys()`: a new signing key (new `kid`) signs from now on and the old one leaves the JWKS, so an
 *   RP that cached the JWKS must fetch it again. Two facts of openid-client 6 matter here: it checks ID
 *   token signatures from the token endpoint (and so ever fetches the JWKS) only after
 *   `client.enableNonRepudiationChecks(config)`; and it refetches for an unknown `kid` by itself only
 *   when its cached JWKS is at least 60 s old. A younger cache fails with OAUTH_KEY_SELECTION_FAILED
 *   ("no applicable keys found"), and the RP has to discover again (a new Configuration has no cache).
 *   An ID token signed by a retired key is also refused as `id_token_hint` at end-session.
 *
 * `requests` records every request served (method, path, query), e.g. to check that discovery and JWKS
 * were fetched again. Run several IdPs at once by calling `startIdp` several times: each has its own
 * port (so its own issuer), keys, clients, users and storage.
 *
 * The authorization response carries `iss` (RFC 9207) and discovery says so, so openid-client insists on
 * it: hand `authorizationCodeGrant` the whole callback URL. Starting an IdP costs one RSA-2048 key
 * generation (0.1–1 s on a busy 2-core machine), and so does each rotation.
 */

export type IdpUser = {
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
  /** Any further claims; only those mapped to a scope reach the RP. */
  [claim: string]: unknown;
};

export type IdpClient = {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  /**
   * How the client authenticates at the token endpoint; default "client_secret_basic". openid-client 6
   * sends client_secret_post when given only the secret: pass `client.ClientSecretBasic(secret)` to
   * `discovery`, or register "client_secret_post" here.
   */
  token_endpoint_auth_method?: "client_secret_basic" | "client_secret_post";
};

export type IdpRequest = { method: string; path: string; query: URLSearchParams; at: number };

export type StartIdpOptions = {
  /** Shown in kids ("<name>-key-1") and in the logout page; default "idp". */
  name?: string;
  clients?: IdpClient[];
  users?: Record<string, IdpUser>;
  /** Account the interaction logs in as; default the first user set. */
  loginAs?: string;
  /** ID token lifetime in seconds (default 3600). */
  idTokenTtlSeconds?: number;
};

type ProviderModule = typeof import("oidc-provider");

export async function startIdp(options: StartIdpOptions = {}): Promise<TestIdp> {
  const idp = new TestIdp(await loadOidcProvider(), options);
  await idp.listen();
  return idp;
}

export class TestIdp {
  /** Every request this IdP served, in order. */
  readonly requests: IdpRequest[] = [];
  readonly name: string;
  private readonly store = new IdpStore();
  private readonly users = new Map<string, IdpUser>();
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly cookieKey = crypto.randomBytes(32).toString("base64url");
  private signingKeys: JWK[] = [];
  private keyCount = 0;
  private provider!: Provider;
  private handleWithProvider!: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  private loginAs?: string;
  private pendingFailure?: { error: string; error_description: string };
  private issuerUrl?: string;

  constructor(
    private readonly oidc: ProviderModule,
    private readonly options: StartIdpOptions,
  ) {
    this.name = options.name ?? "idp";
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    for (const client of options.clients ?? []) this.addClient(client);
    for (const [accountId, claims] of Object.entries(options.users ?? {})) this.setUser(accountId, claims);
    if (options.loginAs) this.loginAs = options.loginAs;
  }

  /** `http://127.0.0.1:<port>`: the issuer, and the base of every endpoint. */
  get issuer(): string {
    if (!this.issuerUrl) throw new Error("the IdP is not listening yet");
    return this.issuerUrl;
  }

  /** The `kid` that signs ID tokens now. */
  get signingKid(): string {
    return this.signingKeys[0].kid!;
  }

  /** The public keys published at the JWKS endpoint now. */
  get publishedKids(): string[] {
    return this.signingKeys.map((key) => key.kid!);
  }

  /** @internal startIdp calls this. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.issuerUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.signingKeys = [await this.generateSigningKey()];
    this.buildProvider();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Registers (or replaces) a confidential web client. */
  addClient(client: IdpClient): void {
    this.store.setClient({
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: client.redirect_uris,
      post_logout_redirect_uris: client.post_logout_redirect_uris ?? [],
      token_endpoint_auth_method: client.token_endpoint_auth_method ?? "client_secret_basic",
      grant_types: ["authorization_code"],
      response_types: ["code"],
      id_token_signed_response_alg: "RS256",
    });
  }

  /** Creates or replaces an account; `accountId` becomes the `sub` claim. */
  setUser(accountId: string, claims: IdpUser): void {
    this.users.set(accountId, claims);
    this.loginAs ??= accountId;
  }

  /** The account the next login at this IdP signs in as. */
  setLoginAs(accountId: string): void {
    if (!this.users.has(accountId)) throw new Error(`test IdP ${this.name}: no user ${accountId}; call setUser first`);
    this.loginAs = accountId;
  }

  /**
   * Signs with a new key from now on. By default the old key leaves the JWKS at once; with
   * `keepPrevious` both are published (new first), as during a graceful rollover. Returns the new kid.
   * Sessions, clients and codes survive the rotation.
   */
  async rotateKeys(options: { keepPrevious?: boolean } = {}): Promise<string> {
    const fresh = await this.generateSigningKey();
    this.signingKeys = options.keepPrevious ? [fresh, ...this.signingKeys] : [fresh];
    this.buildProvider();
    return fresh.kid!;
  }

  /** The next authorization ends with this error redirect to the RP (default access_denied) instead of a code. */
  failNextAuthorization(error = "access_denied", description = "The end-user denied the request at the test IdP"): void {
    this.pendingFailure = { error, error_description: description };
  }

  /** The next issued authorization code yields an ID token whose nonce is `nonce`, not the one the RP sent. */
  tamperNextIdTokenNonce(nonce = "nonce-the-rp-never-sent"): void {
    this.store.nextCodeNonce = nonce;
  }

  requestsTo(path: string | RegExp): IdpRequest[] {
    return this.requests.filter((request) => (typeof path === "string" ? request.path === path : path.test(request.path)));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.issuer);
    this.requests.push({ method: req.method ?? "GET", path: url.pathname, query: url.searchParams, at: Date.now() });
    if (req.method === "GET" && /^\/interaction\/[^/]+$/.test(url.pathname)) {
      this.completeInteraction(req, res).catch((error: Error) => {
        if (res.headersSent) return void res.destroy(error);
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`test IdP ${this.name}: ${error.message}`);
      });
      return;
    }
    this.handleWithProvider(req, res);
  }

  /** What a user would do on the login and consent pages, done at once. */
  private async completeInteraction(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const provider = this.provider;
    const interaction = await provider.interactionDetails(req, res);
    const finish = (result: Parameters<Provider["interactionFinished"]>[2]) =>
      provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    if (this.pendingFailure) {
      const failure = this.pendingFailure;
      this.pendingFailure = undefined;
      return finish(failure);
    }
    if (interaction.prompt.name === "login") {
      if (!this.loginAs) throw new Error("no account to log in as: call setUser or setLoginAs");
      return finish({ login: { accountId: this.loginAs } });
    }
    if (interaction.prompt.name === "consent") {
      const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      const grant = interaction.grantId
        ? (await provider.Grant.find(interaction.grantId))!
        : new provider.Grant({ accountId: interaction.session!.accountId, clientId: String(interaction.params.client_id) });
      if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(" "));
      if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
      return finish({ consent: { grantId: await grant.save() } });
    }
    throw new Error(`unexpected prompt ${interaction.prompt.name}`);
  }

  private async generateSigningKey(): Promise<JWK> {
    const { privateKey } = await promisify(crypto.generateKeyPair)("rsa", { modulusLength: 2048 });
    this.keyCount += 1;
    return { ...(privateKey.export({ format: "jwk" }) as JWK), kid: `${this.name}-key-${this.keyCount}`, alg: "RS256", use: "sig" };
  }

  /**
   * oidc-provider reads its keys once, at construction, so new keys mean a new Provider. Everything
   * stateful (clients, sessions, grants, codes) lives in this IdP's store, and the cookie keys stay,
   * so the swap is invisible to browsers and RPs apart from the keys.
   */
  private buildProvider(): void {
    const { Provider: ProviderClass, interactionPolicy } = this.oidc;
    const { Check, base } = interactionPolicy;
    const policy = base();
    const login = policy.get("login")!;
    login.checks.add(new Check("test_failure_armed", "the test armed an authorization failure", () => this.pendingFailure !== undefined));
    login.checks.add(
      new Check("test_other_account", "the test switched the account to log in as", (ctx: KoaContextWithOIDC) => {
        const current = ctx.oidc.session?.accountId;
        return current !== undefined && this.loginAs !== undefined && current !== this.loginAs;
      }),
    );
    const issuer = this.issuer;
    const configuration: Configuration = {
      adapter: (model: string) => this.store.adapter(model),
      jwks: { keys: this.signingKeys },
      cookies: { keys: [this.cookieKey] },
      findAccount: (_ctx, accountId) => {
        const user = this.users.get(accountId);
        return user && { accountId, claims: () => ({ sub: accountId, ...user }) };
      },
      scopes: ["openid", "offline_access", "email", "profile", "groups"],
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
      conformIdTokenClaims: false,
      responseTypes: ["code"],
      pkce: { required: () => true },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}`, policy },
      features: {
        devInteractions: { enabled: false },
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: (ctx, form) => {
            // The shape of oidc-provider's default page: the form holds the xsrf field, the buttons sit outside it.
            ctx.type = "html";
            ctx.body = `<!DOCTYPE html><html><head><title>Sign out</title></head><body><h1>Sign out from ${this.name} (${issuer})?</h1>${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button><button type="submit" form="op.logoutForm">No, stay signed in</button></body></html>`;
          },
          postLogoutSuccessSource: (ctx) => {
            ctx.type = "html";
            ctx.body = `<!DOCTYPE html><html><body><h1>Signed out from ${this.name}</h1></body></html>`;
          },
        },
      },
      renderError: (ctx, out) => {
        ctx.type = "text/plain";
        ctx.body = `test IdP ${this.name}: ${out.error}: ${out.error_description ?? ""}`;
      },
      clientBasedCORS: () => false,
      ttl: {
        AccessToken: 3600,
        AuthorizationCode: 60,
        IdToken: this.options.idTokenTtlSeconds ?? 3600,
        Interaction: 600,
        Session: 86400,
        Grant: 86400,
        RefreshToken: 86400,
      },
    };
    this.provider = new ProviderClass(issuer, configuration);
    this.handleWithProvider = this.provider.callback();
  }
}

/**
 * Storage for one IdP (oidc-provider's own memory adapter is one store per process, shared by every
 * Provider): a Map with expiry, kept across Provider rebuilds. It also holds the clients.
 */
/** What revoking a grant removes (an Interaction or Session may name the grant too, and must stay). */
const GRANT_BOUND_MODELS = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"]);

class IdpStore {
  /** Set by tamperNextIdTokenNonce; applied to the next stored authorization code. */
  nextCodeNonce?: string;
  private readonly entries = new Map<string, { payload: AdapterPayload; expiresAt: number }>();

  setClient(metadata: AdapterPayload & { client_id: string }): void {
    this.entries.set(`Client:${metadata.client_id}`, { payload: metadata, expiresAt: Infinity });
  }

  adapter(model: string): Adapter {
    const key = (id: string) => `${model}:${id}`;
    const live = (id: string) => {
      const entry = this.entries.get(key(id));
      if (entry && entry.expiresAt <= Date.now()) this.entries.delete(key(id));
      return entry && entry.expiresAt > Date.now() ? entry.payload : undefined;
    };
    const findBy = (field: "uid" | "userCode", value: string) => {
      for (const [entryKey, entry] of this.entries) {
        if (entryKey.startsWith(`${model}:`) && entry.payload[field] === value) return live(entryKey.slice(model.length + 1));
      }
      return undefined;
    };
    return {
      upsert: async (id, payload, expiresIn) => {
        if (model === "AuthorizationCode" && this.nextCodeNonce !== undefined) {
          payload.nonce = this.nextCodeNonce;
          this.nextCodeNonce = undefined;
        }
        this.entries.set(key(id), { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
      },
      find: async (id) => live(id),
      findByUid: async (uid) => findBy("uid", uid),
      findByUserCode: async (userCode) => findBy("userCode", userCode),
      consume: async (id) => {
        const payload = live(id);
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      destroy: async (id) => {
        this.entries.delete(key(id));
      },
      revokeByGrantId: async (grantId) => {
        for (const [entryKey, entry] of this.entries) {
          if (entry.payload.grantId === grantId && GRANT_BOUND_MODELS.has(entryKey.slice(0, entryKey.indexOf(":"))))
            this.entries.delete(entryKey);
        }
      },
    };
  }
}

let oidcProviderModule: Promise<ProviderModule> | undefined;

/**
 * Loads oidc-provider once, hiding the warning it prints on import under Node 20 ("Unsupported runtime.
 * Use Node.js v22.x LTS"): it works on Node 20, and the warning would otherwise appear in every test file.
 */
function loadOidcProvider(): Promise<ProviderModule> {
  oidcProviderModule ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (!String(args[0]).includes("Unsupported runtime")) warn(...args);
    };
    try {
      return await import("oidc-provider");
    } finally {
      console.warn = warn;
    }
  })();
  return oidcProviderModule;
}
