import { createRemoteJWKSet, customFetch as joseFetch, jwtVerify, type JWTPayload } from "jose";
import * as oidc from "openid-client";
import { UpstreamUnavailableError, ValidationError } from "../../platform/common/errors";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import { DOCS_PAGES } from "../../platform/common/docs-pages";

/** How to try a local identity provider (plain http on loopback), which production refuses. */
const LOCAL_IDP_HINT =
  "to try a local identity provider, start the service with ALLOW_INSECURE_UPSTREAMS=true OUTBOUND_ALLOW_PRIVATE=true " +
  `(see ${DOCS_PAGES.ssoWalkthrough})`;

export type OidcSettings = {
  /** http issuers and loopback hosts (test IdPs); never in production. */
  allowInsecure: boolean;
  /** How long a provider's discovery document is trusted before it is fetched again. */
  discoveryTtlMs: number;
  /** A token signed with a key we do not know refetches the JWKS, at most this often. */
  jwksCooldownMs: number;
  /** Tolerated clock difference with the IdP when checking `iat`, `exp` and `nbf`. */
  clockToleranceSeconds: number;
  timeoutSeconds: number;
};

/** What a provider needs to talk OIDC: its issuer and client credentials (the secret in plaintext). */
export type OidcClientCredentials = { id: string; issuer: string; clientId: string; clientSecret: string; version: number };

/** The endpoints a discovery found, for the administrator's test and for logout. */
export type DiscoveredEndpoints = {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  endSessionEndpoint: string | null;
};

/** Why an authorization response was refused, as recorded in `auth.login.failed`. */
export type CallbackFailureReason = "nonce_mismatch" | "state_mismatch" | "invalid_id_token" | "token_exchange_failed";

export class OidcCallbackError extends Error {
  constructor(
    readonly reason: CallbackFailureReason,
    detail: string,
  ) {
    super(detail);
  }
}

/** The authorization request lifetime: an ID token older than that cannot belong to it. */
const MAX_ID_TOKEN_AGE_SECONDS = 600;

type Discovered = {
  config: oidc.Configuration;
  jwks: ReturnType<typeof createRemoteJWKSet>;
  fetchedAt: number;
  version: number;
};

/**
 * The relying party side of OpenID Connect (authorization code + PKCE), over openid-client. Discovery
 * documents and JWKS are cached per provider: a configuration change (new `version`) or the TTL
 * fetches discovery again, and an ID token signed by a key not in the cached JWKS refetches the JWKS
 * (the IdP rotated its keys). ID token signatures are verified even though the token comes straight
 * from the token endpoint: it costs one cached key lookup and catches a misconfigured or spoofed IdP.
 */
export class OidcClient {
  private readonly discovered = new Map<string, Discovered>();

  constructor(
    private readonly settings: OidcSettings,
    /** Discovery, token, userinfo and JWKS requests all go through it, each to a checked address. */
    private readonly outbound: OutboundGuard,
  ) {}

  /** Refuses issuer URLs the service must not call: plain http unless allowed, and what the outbound guard refuses. */
  async checkIssuer(issuer: string): Promise<void> {
    const problem = await this.outbound.urlProblem(issuer, { httpsOnly: !this.settings.allowInsecure });
    // Plain http is refused by configuration: a local identity provider needs it allowed, and an outbound exception.
    const hint = !this.settings.allowInsecure && issuer.startsWith("http:") ? `: ${LOCAL_IDP_HINT}` : "";
    if (problem) throw new ValidationError([`Issuer ${problem}${hint}`]);
  }

  /** A fresh discovery, bypassing the cache: the administrator's test. */
  async discover(credentials: OidcClientCredentials): Promise<DiscoveredEndpoints> {
    this.discovered.delete(credentials.id);
    return endpointsOf((await this.load(credentials)).config);
  }

  async authorizationUrl(
    credentials: OidcClientCredentials,
    request: { redirectUri: string; scopes: string[]; state: string; nonce: string; codeVerifier: string },
  ): Promise<URL> {
    const { config } = await this.load(credentials);
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: request.redirectUri,
      scope: request.scopes.join(" "),
      state: request.state,
      nonce: request.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
      code_challenge_method: "S256",
    });
  }

  /**
   * Redeems the authorization code of a callback and returns the verified ID token's claims. The
   * library checks state, PKCE, issuer, audience, expiry and nonce; we then check the signature.
   */
  async redeem(
    credentials: OidcClientCredentials,
    callbackUrl: URL,
    checks: { state: string; nonce: string; codeVerifier: string },
  ): Promise<{ claims: JWTPayload; idToken: string }> {
    const discovered = await this.load(credentials);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(discovered.config, callbackUrl, {
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        pkceCodeVerifier: checks.codeVerifier,
        idTokenExpected: true,
      });
    } catch (error) {
      // openid-client's own message is generic; the check that failed is named in its cause.
      const { message: outer, cause } = error as Error & { cause?: { message?: string } };
      const message = [outer, cause?.message].filter(Boolean).join(": ");
      if (/nonce/i.test(message)) throw new OidcCallbackError("nonce_mismatch", message);
      if (/"state"/i.test(message)) throw new OidcCallbackError("state_mismatch", message);
      if (/ID Token|JWT/i.test(message)) throw new OidcCallbackError("invalid_id_token", message);
      throw new OidcCallbackError("token_exchange_failed", message);
    }
    const idToken = tokens.id_token!;
    try {
      const { payload } = await jwtVerify(idToken, discovered.jwks, {
        issuer: discovered.config.serverMetadata().issuer,
        audience: credentials.clientId,
        clockTolerance: this.settings.clockToleranceSeconds,
        // An ID token fresh from the token endpoint: issued just now, give or take the tolerated skew.
        // This also refuses one issued "in the future", which neither library checks on its own.
        maxTokenAge: MAX_ID_TOKEN_AGE_SECONDS,
      });
      return { claims: payload, idToken };
    } catch (error) {
      throw new OidcCallbackError("invalid_id_token", `ID token signature: ${(error as Error).message}`);
    }
  }

  /** The IdP's RP-initiated logout URL, or null when it has no end-session endpoint. */
  async endSessionUrl(credentials: OidcClientCredentials, idTokenHint: string, postLogoutRedirectUri: string): Promise<URL | null> {
    const { config } = await this.load(credentials);
    if (!config.serverMetadata().end_session_endpoint) return null;
    return oidc.buildEndSessionUrl(config, { id_token_hint: idTokenHint, post_logout_redirect_uri: postLogoutRedirectUri });
  }

  forget(providerId: string): void {
    this.discovered.delete(providerId);
  }

  private async load(credentials: OidcClientCredentials): Promise<Discovered> {
    const cached = this.discovered.get(credentials.id);
    if (cached && cached.version === credentials.version && Date.now() - cached.fetchedAt < this.settings.discoveryTtlMs) return cached;
    await this.checkIssuer(credentials.issuer);
    let config: oidc.Configuration;
    try {
      config = await oidc.discovery(
        new URL(credentials.issuer),
        credentials.clientId,
        { [oidc.clockTolerance]: this.settings.clockToleranceSeconds } as Partial<oidc.ClientMetadata>,
        oidc.ClientSecretBasic(credentials.clientSecret),
        {
          timeout: this.settings.timeoutSeconds,
          execute: this.settings.allowInsecure ? [oidc.allowInsecureRequests] : [],
          // Kept by the configuration: the token and userinfo requests go through the guard too.
          [oidc.customFetch]: this.outbound.fetch,
        },
      );
    } catch (error) {
      throw new UpstreamUnavailableError(`OpenID discovery at ${credentials.issuer} failed: ${(error as Error).message}`);
    }
    const metadata = config.serverMetadata();
    if (!metadata.jwks_uri) throw new UpstreamUnavailableError(`The IdP at ${credentials.issuer} publishes no jwks_uri`);
    await this.checkEndpoints(credentials.issuer, metadata);
    const entry: Discovered = {
      config,
      jwks: createRemoteJWKSet(new URL(metadata.jwks_uri), {
        cooldownDuration: this.settings.jwksCooldownMs,
        timeoutDuration: this.settings.timeoutSeconds * 1000,
        [joseFetch]: this.outbound.fetch,
      }),
      fetchedAt: Date.now(),
      version: credentials.version,
    };
    this.discovered.set(credentials.id, entry);
    return entry;
  }

  /**
   * A discovery document is upstream input: every endpoint it names is checked like the issuer, so
   * it cannot send the service (token, userinfo, JWKS) or the user's browser (end session) somewhere
   * internal. The guard checks the requests again when they are made, against a fresh DNS answer.
   */
  private async checkEndpoints(issuer: string, metadata: oidc.ServerMetadata): Promise<void> {
    const named = {
      token_endpoint: metadata.token_endpoint,
      jwks_uri: metadata.jwks_uri,
      userinfo_endpoint: metadata.userinfo_endpoint,
      end_session_endpoint: metadata.end_session_endpoint,
    };
    for (const [name, url] of Object.entries(named)) {
      if (url === undefined) continue;
      const problem = await this.outbound.urlProblem(url, { httpsOnly: !this.settings.allowInsecure });
      if (problem) throw new UpstreamUnavailableError(`The IdP at ${issuer} names a ${name} that ${problem}`);
    }
  }
}

function endpointsOf(config: oidc.Configuration): DiscoveredEndpoints {
  const metadata = config.serverMetadata();
  return {
    issuer: metadata.issuer,
    authorizationEndpoint: metadata.authorization_endpoint ?? "",
    tokenEndpoint: metadata.token_endpoint ?? "",
    jwksUri: metadata.jwks_uri ?? "",
    endSessionEndpoint: metadata.end_session_endpoint ?? null,
  };
}
