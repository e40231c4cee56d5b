import { timingSafeEqual } from "node:crypto";
import type { Sequelize, Transaction } from "sequelize";
import type { AuditService, AuditUser } from "../log";
import type { OpenedSession, SessionService } from "../../finance/auth";
import { ConflictError, NotFoundError, ValidationError } from "../../platform/common/errors";
import { newId } from "../../platform/common/ids";
import type { Actor } from "../../platform/security/actor";
import type { UserRole } from "../../platform/security/actor";
import type { UserRepository } from "../../finance/identity";
import type { UserService } from "../../finance/identity";
import type { SecretBox } from "../../platform/security/secret-box";
import type { ConnectedAccountService } from "./connected-accounts.service";
import {
  digest,
  randomSecret,
  type SsoLoginRequestRepository,
  type LoginPurpose,
  type LoginRequestRow,
} from "./sso-login-request.repository";
import { OidcCallbackError, type OidcClient } from "./oidc-client";
import { SsoLoginError } from "./sso-login.errors";
import { emailDomainAllowed, mapClaims, roleFromGroups, type MappedClaims } from "./provider-settings";
import type { SsoProviderService } from "./sso-provider.service";
import type { SsoProviderRow, SsoRepository } from "./sso.repository";

export type StartedLogin = { authorizationUrl: string; browserSecret: string };

export type CallbackOutcome =
  | { kind: "login"; session: OpenedSession; user: { id: string; email: string; role: UserRole }; returnTo: string | null }
  | { kind: "link"; providerSlug: string; email: string | null; returnTo: string | null }
  | { kind: "test"; providerSlug: string; subject: string; email: string | null; name: string | null; groups: string[]; role: UserRole };

const MAX_RETURN_TO = 2000;

/**
 * Signing in through an OpenID Connect provider: authorization code with PKCE, `state` and `nonce`.
 * `start` records an authorization request and sends the browser to the IdP; `callback` checks the
 * answer, finds or provisions the user, syncs their role from the IdP's groups and opens the same
 * session and tokens as a local login. The same flow links another identity to a signed-in user, and
 * runs an administrator's test without signing anyone in. Every failure is recorded with its reason.
 */
export class SsoLoginService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: SsoRepository,
    private readonly requests: SsoLoginRequestRepository,
    private readonly userRows: UserRepository,
    private readonly audit: AuditService,
    private readonly secrets: SecretBox,
    private readonly oidc: OidcClient,
    private readonly providers: SsoProviderService,
    private readonly accounts: ConnectedAccountService,
    private readonly sessions: SessionService,
    private readonly users: UserService,
  ) {}

  /** Starts a sign-in (`user` null) or the linking of another identity to `user`. */
  async start(slug: string, options: { purpose: "login" | "link"; user?: Actor | null; returnTo?: string | null }): Promise<StartedLogin> {
    const provider = await this.provider(slug);
    const returnTo = checkReturnTo(options.returnTo);
    if (!provider.enabled) {
      const user = options.user ? { id: options.user.userId, email: options.user.email } : null;
      throw await this.fail(provider, options.purpose, user, new SsoLoginError("provider_disabled", "provider is disabled"));
    }
    const browserSecret = randomSecret();
    const request = { nonce: randomSecret(), codeVerifier: randomSecret() };
    const state = randomSecret();
    await this.requests.create(state, {
      providerId: provider.id,
      purpose: options.purpose,
      userId: options.user?.userId ?? null,
      nonce: request.nonce,
      codeVerifierEncrypted: this.secrets.seal(request.codeVerifier),
      returnTo,
      browserHash: digest(browserSecret),
    });
    return { authorizationUrl: (await this.authorizationUrl(provider, state, request)).href, browserSecret };
  }

  /** Prepares an administrator's test sign-in and returns its URL; the browser that opens it is bound to it. */
  async prepareTest(provider: SsoProviderRow, actor: Actor): Promise<string> {
    const state = randomSecret();
    await this.requests.create(state, {
      providerId: provider.id,
      purpose: "test",
      userId: actor.userId,
      nonce: randomSecret(),
      codeVerifierEncrypted: this.secrets.seal(randomSecret()),
      returnTo: null,
      browserHash: null,
    });
    return `${this.providers.loginUrl(provider.slug)}?test=${encodeURIComponent(state)}`;
  }

  /** Opens a prepared test sign-in in this browser. */
  async startTest(slug: string, state: string): Promise<StartedLogin> {
    const provider = await this.provider(slug);
    const browserSecret = randomSecret();
    const request = await this.requests.bindTest(state, provider.id, digest(browserSecret));
    if (!request) throw new ValidationError(["Test sign-in link is unknown, expired or already used"]);
    const checks = { nonce: request.nonce, codeVerifier: this.secrets.open(request.codeVerifierEncrypted) };
    return { authorizationUrl: (await this.authorizationUrl(provider, state, checks)).href, browserSecret };
  }

  /** Completes a sign-in, link or test from the IdP's redirect. Throws SsoLoginError (recorded) on failure. */
  async callback(slug: string, query: URLSearchParams, browserSecret: string | undefined): Promise<CallbackOutcome> {
    const provider = await this.provider(slug);
    const state = query.get("state");
    const request = state ? await this.requests.take(state) : null;
    if (!request || request.providerId !== provider.id || !sameBrowser(request.browserHash, browserSecret)) {
      throw await this.fail(provider, "login", null, new SsoLoginError("state_mismatch", "unknown, expired, reused or foreign state"));
    }
    const requester = request.userId ? await this.actorOf(request.userId) : null;
    const fail = (error: SsoLoginError, user: AuditUser | null = requester) => this.fail(provider, request.purpose, user, error);
    const idpError = query.get("error");
    if (idpError) {
      const description = query.get("error_description");
      throw await fail(new SsoLoginError("idp_error", `${idpError.slice(0, 100)}${description ? `: ${description.slice(0, 300)}` : ""}`));
    }
    if (!provider.enabled) throw await fail(new SsoLoginError("provider_disabled", "provider is disabled"));

    let claims: MappedClaims;
    let idToken: string;
    try {
      const callbackUrl = new URL(`${this.providers.redirectUri(provider.slug)}?${query.toString()}`);
      const redeemed = await this.oidc.redeem(this.providers.credentialsOf(provider), callbackUrl, {
        state: state!,
        nonce: request.nonce,
        codeVerifier: this.secrets.open(request.codeVerifierEncrypted),
      });
      claims = mapClaims(redeemed.claims, provider.claimMapping);
      idToken = redeemed.idToken;
    } catch (error) {
      if (error instanceof OidcCallbackError) throw await fail(new SsoLoginError(error.reason, error.message.slice(0, 300)));
      throw await fail(new SsoLoginError("token_exchange_failed", (error as Error).message.slice(0, 300)));
    }
    const claimed: AuditUser | null = requester ?? (claims.email ? { id: null, email: claims.email } : null);
    if (!claims.email)
      throw await fail(new SsoLoginError("missing_email_claim", `no e-mail in claim ${provider.claimMapping.email}`), claimed);
    if (!claims.emailVerified)
      throw await fail(new SsoLoginError("email_not_verified", `email_verified is false for ${claims.email}`), claimed);
    if (!emailDomainAllowed(claims.email, provider.allowedDomains)) {
      throw await fail(new SsoLoginError("domain_not_allowed", `domain of ${claims.email} is not in the allowed list`), claimed);
    }

    if (request.purpose === "test") return this.completeTest(provider, requester, claims);
    const outcome = await this.sequelize.transaction(
      (transaction): Promise<CallbackOutcome | { failure: SsoLoginError; user: AuditUser | null }> =>
        request.purpose === "link"
          ? this.completeLink(transaction, provider, request, requester, claims)
          : this.completeLogin(transaction, provider, request, claims, idToken),
    );
    if ("failure" in outcome) throw await fail(outcome.failure, outcome.user);
    return outcome;
  }

  /** The IdP's end-session URL for an SSO session (RP-initiated logout), or null. */
  async endSessionUrl(sessionId: string): Promise<{ url: string; providerId: string } | null> {
    const row = await this.repository.sessionOf(sessionId);
    const provider = row?.providerId ? await this.providers.byId(row.providerId) : null;
    if (!row || !provider) return null;
    try {
      const url = await this.oidc.endSessionUrl(
        this.providers.credentialsOf(provider),
        this.secrets.open(row.idTokenEncrypted),
        this.providers.postLogoutRedirectUri(),
      );
      return url ? { url: url.href, providerId: provider.id } : null;
    } catch {
      // The IdP being unreachable must not keep anyone signed in here: logout goes on locally.
      return null;
    }
  }

  sweepExpiredRequests(): Promise<number> {
    return this.requests.sweepExpired();
  }

  private async completeLogin(
    transaction: Transaction,
    provider: SsoProviderRow,
    request: LoginRequestRow,
    claims: MappedClaims,
    idToken: string,
  ): Promise<CallbackOutcome | { failure: SsoLoginError; user: AuditUser | null }> {
    const email = claims.email!;
    const identity = await this.accounts.find(provider.id, claims.subject, transaction);
    let user = identity ? await this.userRows.byId(identity.userId, transaction, true) : null;
    const mappedRole = roleFromGroups(claims.groups, provider.roleMappings, provider.defaultRole);
    if (!user) {
      user = await this.userRows.byEmail(email, transaction, true);
      if (!user && !provider.jitProvisioning) {
        return { failure: new SsoLoginError("jit_disabled_no_account", `no account for ${email}`), user: { id: null, email } };
      }
      if (!user) {
        const id = newId();
        await this.users.insert(transaction, {
          id,
          email,
          role: mappedRole,
          name: claims.name,
          familyId: provider.provisioningFamilyId,
          actor: { id, email },
          provider: provider.id,
        });
        user = (await this.userRows.byId(id, transaction))!;
      }
      if (user.status === "active") await this.accounts.connect(transaction, user, provider, claims, { id: user.id, email: user.email });
    }
    const actor = { id: user.id, email: user.email };
    if (user.status === "suspended") return { failure: new SsoLoginError("user_suspended", `user ${user.id} is suspended`), user: actor };
    if (user.status !== "active") return { failure: new SsoLoginError("user_deleted", `user ${user.id} is deleted`), user: actor };
    const role = provider.roleMappings.length > 0 ? await this.syncRole(transaction, user, mappedRole, actor, provider) : user.role;
    const session = await this.sessions.open(transaction, actor, { method: "sso", provider: provider.id });
    await this.repository.insertSession(session.sessionId, provider.id, this.secrets.seal(idToken), transaction);
    await this.repository.recordIdentityLogin(provider.id, claims.subject, email, transaction);
    await this.audit.record(transaction, {
      type: "auth.login.success",
      user: actor,
      provider: provider.id,
      action: "login",
      sessionId: session.sessionId,
      resource: { type: "session", id: session.sessionId, label: `sso:${provider.slug}` },
    });
    return { kind: "login", session, user: { id: user.id, email: user.email, role }, returnTo: request.returnTo };
  }

  /**
   * Applies the role the IdP's groups grant (`user.roles.synced`). A sync that would demote the last
   * active administrator is not applied: the sign-in goes on with the current role, so the instance
   * keeps someone who can manage it (the IdP's groups can be fixed, or another admin appointed).
   */
  private async syncRole(
    transaction: Transaction,
    user: { id: string; role: UserRole },
    role: UserRole,
    actor: AuditUser,
    provider: SsoProviderRow,
  ): Promise<UserRole> {
    try {
      await this.users.changeRole(transaction, user, role, { eventType: "user.roles.synced", actor, provider: provider.id });
      return role;
    } catch (error) {
      if (!(error instanceof ConflictError && error.details?.reason === "last_active_administrator")) throw error;
      return user.role;
    }
  }

  private async completeLink(
    transaction: Transaction,
    provider: SsoProviderRow,
    request: LoginRequestRow,
    requester: AuditUser | null,
    claims: MappedClaims,
  ): Promise<CallbackOutcome | { failure: SsoLoginError; user: AuditUser | null }> {
    const user = request.userId ? await this.userRows.byId(request.userId, transaction) : null;
    if (!user || !requester) return { failure: new SsoLoginError("user_deleted", "the user who started linking is gone"), user: null };
    if (user.status === "suspended")
      return { failure: new SsoLoginError("user_suspended", `user ${user.id} is suspended`), user: requester };
    if (user.status !== "active") return { failure: new SsoLoginError("user_deleted", `user ${user.id} is deleted`), user: requester };
    const identity = await this.accounts.find(provider.id, claims.subject, transaction);
    if (identity && identity.userId !== user.id) {
      return {
        failure: new SsoLoginError("identity_already_linked", `${provider.slug}:${claims.subject} belongs to another user`),
        user: requester,
      };
    }
    if (!identity) await this.accounts.connect(transaction, user, provider, claims, requester);
    return { kind: "link", providerSlug: provider.slug, email: claims.email, returnTo: request.returnTo };
  }

  private async completeTest(provider: SsoProviderRow, requester: AuditUser | null, claims: MappedClaims): Promise<CallbackOutcome> {
    const role = roleFromGroups(claims.groups, provider.roleMappings, provider.defaultRole);
    await this.sequelize.transaction((transaction) =>
      this.audit.record(transaction, {
        type: "provider.test",
        user: requester,
        provider: provider.id,
        action: "test.login",
        resource: { type: "sso_provider", id: provider.id, label: provider.slug },
        changes: { outcome: { old: null, new: { subject: claims.subject, email: claims.email, groups: claims.groups, role } } },
      }),
    );
    return {
      kind: "test",
      providerSlug: provider.slug,
      subject: claims.subject,
      email: claims.email,
      name: claims.name,
      groups: claims.groups,
      role,
    };
  }

  /** Records a failure (its own transaction: nothing else of the attempt is kept) and returns the error to throw. */
  private async fail(
    provider: SsoProviderRow,
    purpose: LoginPurpose,
    user: AuditUser | null,
    error: SsoLoginError,
  ): Promise<SsoLoginError> {
    await this.sequelize.transaction((transaction) =>
      this.audit.record(transaction, {
        type: purpose === "test" ? "provider.test" : "auth.login.failed",
        user,
        provider: provider.id,
        action: purpose === "test" ? "test.login" : purpose === "link" ? "link" : "login",
        resource: { type: "sso_provider", id: provider.id, label: provider.slug },
        error: `${error.reason}: ${error.detail}`,
      }),
    );
    return error;
  }

  private async provider(slug: string): Promise<SsoProviderRow> {
    const provider = await this.providers.bySlug(slug);
    if (!provider) throw new NotFoundError("SSO provider");
    return provider;
  }

  private async actorOf(userId: string): Promise<AuditUser | null> {
    const user = await this.userRows.byId(userId);
    return user ? { id: user.id, email: user.email } : null;
  }

  private authorizationUrl(provider: SsoProviderRow, state: string, checks: { nonce: string; codeVerifier: string }): Promise<URL> {
    return this.oidc.authorizationUrl(this.providers.credentialsOf(provider), {
      redirectUri: this.providers.redirectUri(provider.slug),
      scopes: provider.scopes,
      state,
      nonce: checks.nonce,
      codeVerifier: checks.codeVerifier,
    });
  }
}

function sameBrowser(expectedHash: Buffer | null, browserSecret: string | undefined): boolean {
  if (!expectedHash || !browserSecret) return false;
  return timingSafeEqual(expectedHash, digest(browserSecret));
}

function hasControlCharacters(value: string): boolean {
  return [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
}

/** Only a path on this site: an absolute or scheme-relative URL would make the login an open redirect. */
function checkReturnTo(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === "") return null;
  if (
    !value.startsWith("/") ||
    value.startsWith("//") ||
    value.includes("\\") ||
    value.length > MAX_RETURN_TO ||
    hasControlCharacters(value)
  ) {
    throw new ValidationError(["Return to must be a path on this site, such as /admin/audit-logs"]);
  }
  return value;
}
