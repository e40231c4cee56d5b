import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { FakeHttpServer, sendJson } from "./fake-http";

/**
 * A minimal OpenID Connect IdP whose clock is off by `skewSeconds`: the ID tokens it issues carry
 * `iat` and `exp` as its wrong clock sees them, as happens with an IdP whose NTP has drifted. It
 * speaks just enough of the protocol for one authorization code flow: discovery, JWKS, an
 * authorization endpoint that signs `loginAs` in at once, and a token endpoint. (oidc-provider runs
 * in the test's own process, so its clock cannot be moved apart from the service's.)
 */
export class SkewedIdp {
  /** Seconds the IdP's clock is ahead of (positive) or behind (negative) the real time. */
  skewSeconds = 0;
  readonly loginAs = { sub: "skewed-user", email: "skewed@skew.test", email_verified: true, name: "Skewed" };
  private readonly server: FakeHttpServer;
  private readonly codes = new Map<string, { nonce: string; clientId: string }>();
  private key!: { privateKey: CryptoKey; jwk: JWK };
  issuer = "";

  constructor() {
    this.server = new FakeHttpServer((request, res) => {
      const issuer = this.issuer;
      switch (request.path) {
        case "/.well-known/openid-configuration":
          return sendJson(res, 200, {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ["code"],
            subject_types_supported: ["public"],
            id_token_signing_alg_values_supported: ["RS256"],
            code_challenge_methods_supported: ["S256"],
          });
        case "/jwks":
          return sendJson(res, 200, { keys: [this.key.jwk] });
        case "/authorize": {
          const code = `code-${this.codes.size + 1}`;
          this.codes.set(code, { nonce: request.query.get("nonce") ?? "", clientId: request.query.get("client_id") ?? "" });
          const target = new URL(request.query.get("redirect_uri")!);
          target.searchParams.set("code", code);
          target.searchParams.set("state", request.query.get("state") ?? "");
          res.writeHead(302, { location: target.href });
          return void res.end();
        }
        case "/token":
          return void this.token(request.body).then((body) => sendJson(res, 200, body));
        default:
          return sendJson(res, 404, { error: "not_found" });
      }
    });
  }

  async start(): Promise<this> {
    this.issuer = await this.server.start();
    const { privateKey, publicKey } = await generateKeyPair("RS256");
    this.key = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: "skewed-1", alg: "RS256", use: "sig" } };
    return this;
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  private async token(body: string) {
    const code = new URLSearchParams(body).get("code") ?? "";
    const grant = this.codes.get(code)!;
    this.codes.delete(code);
    const now = Math.floor(Date.now() / 1000) + this.skewSeconds;
    const idToken = await new SignJWT({ ...this.loginAs, nonce: grant.nonce })
      .setProtectedHeader({ alg: "RS256", kid: "skewed-1" })
      .setIssuer(this.issuer)
      .setAudience(grant.clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(this.key.privateKey);
    return { access_token: `at-${code}`, token_type: "Bearer", expires_in: 300, id_token: idToken };
  }
}
