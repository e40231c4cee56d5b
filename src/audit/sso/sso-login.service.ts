import { timingSafeEqual } from "node:crypto";
import type { Sequelize, Transaction } from "sequelize";
import type { AuditService, AuditUser } from "../log";
import { deviceChanges, type DeviceInfo, type OpenedSession, type SessionService } from "../../finance/auth";
import type { MobileSsoCodeRepository } from "./mobile-sso-code.repository";
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
  /** The mobile app's sign-in: back to its deep link, with a one-time code or an error. */
  | { kind: "mobile"; redirect: string }
  | { kind: "link"; providerSlug: string; email: string | null; returnTo: string | null }
  | { kind: "test"; providerSlug: string; subject: string; email: string | null; name: string | null; groups: string[]; role: UserRole };

const MAX_RETURN_TO = 2000;
/** Upstream keeps the token code 5 minutes and the linking code 10. */
const MOBILE_TOKEN_CODE_TTL_SECONDS = 300;
const MOBILE_LINK_CODE_TTL_SECONDS = 600;

/** What a mobile token code stands for (sealed). */
type MobileTokens = { accessToken: string; refreshToken: string; expiresIn: number; createdAt: number; userId: string };
/** What a mobile linking code stands for (sealed): the IdP's identity, waiting for an account. */
type MobileIdentity = { subject: string; email: string; name: string | null; groups: string[]; allowCreation: boolean };

/** The deep link with its query (upstream's `mobile_sso_redirect`). */
export function deepLink(base: string, params: Record<string, string | boolean | null | undefined>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined) url.searchParams.set(name, String(value));
  return url.href;
}

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
    private readonly mobileCodes: MobileSsoCodeRepository,
  ) {}

  /** Starts a sign-in (`user` null) or the linking of another identity to `user`. */
  async start(
    slug: string,
    options: {
      purpose: "login" | "link" | "mobile";
      user?: Actor | null;
      returnTo?: string | null;
      /** The mobile app's device and its allowlisted deep link (purpose "mobile"). */
      mobile?: { device: Record<string, string>; deepLink: string };
    },
  ): Promise<StartedLogin> {
    const provider = await this.provider(slug);
    const returnTo = options.mobile ? options.mobile.deepLink : checkReturnTo(options.returnTo);
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
      device: options.mobile?.device ?? null,
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
    if (request.purpose === "mobile") {
      // The app waits at its deep link: every outcome, failures included (recorded), goes back there.
      try {
        return await this.redeem(provider, request, query, state!);
      } catch (error) {
        if (!(error instanceof SsoLoginError)) throw error;
        return { kind: "mobile", redirect: deepLink(request.returnTo!, { error: error.reason, message: "SSO sign-in failed" }) };
      }
    }
    return this.redeem(provider, request, query, state!);
  }

  private async redeem(
    provider: SsoProviderRow,
    request: LoginRequestRow,
    query: URLSearchParams,
    state: string,
  ): Promise<CallbackOutcome> {
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
        state,
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
          : request.purpose === "mobile"
            ? this.completeMobile(transaction, provider, request, claims, idToken)
            : (this.completeLogin(transaction, provider, request, claims, idToken) as Promise<
                CallbackOutcome | { failure: SsoLoginError; user: AuditUser | null }
              >),
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
    device: DeviceInfo | null = null,
  ): Promise<CallbackOutcome | { failure: SsoLoginError; user: AuditUser | null } | { unlinked: true }> {
    const email = claims.email!;
    const identity = await this.accounts.find(provider.id, claims.subject, transaction);
    let user = identity ? await this.userRows.byId(identity.userId, transaction, true) : null;
    const mappedRole = roleFromGroups(claims.groups, provider.roleMappings, provider.defaultRole);
    if (!user) {
      user = await this.userRows.byEmail(email, transaction, true);
      // The app asks the person: link an existing account with its password, or create one (when JIT allows).
      if (!user && device) return { unlinked: true };
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
    const session = await this.sessions.open(transaction, actor, { method: "sso", provider: provider.id, device });
    await this.repository.insertSession(session.sessionId, provider.id, this.secrets.seal(idToken), transaction);
    await this.repository.recordIdentityLogin(provider.id, claims.subject, email, transaction);
    await this.audit.record(transaction, {
      type: "auth.login.success",
      user: actor,
      provider: provider.id,
      action: "login",
      sessionId: session.sessionId,
      resource: { type: "session", id: session.sessionId, label: `sso:${provider.slug}` },
      changes: deviceChanges(device),
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

  /**
   * The mobile app's callback: signed in (a one-time code for sso_exchange, bound to the session
   * opened for the app's device), or, for an identity with no account here, a linking code.
   */
  private async completeMobile(
    transaction: Transaction,
    provider: SsoProviderRow,
    request: LoginRequestRow,
    claims: MappedClaims,
    idToken: string,
  ): Promise<CallbackOutcome | { failure: SsoLoginError; user: AuditUser | null }> {
    const device = (request.device ?? null) as DeviceInfo | null;
    if (!device) return { failure: new SsoLoginError("state_mismatch", "the mobile sign-in lost its device"), user: null };
    const outcome = await this.completeLogin(transaction, provider, request, claims, idToken, device);
    const code = randomSecret();
    if ("unlinked" in outcome) {
      const pending: MobileIdentity = {
        subject: claims.subject,
        email: claims.email!,
        name: claims.name,
        groups: claims.groups,
        allowCreation: provider.jitProvisioning,
      };
      await this.mobileCodes.create(
        code,
        { kind: "link", providerId: provider.id, userId: null, device, payloadSealed: this.secrets.seal(JSON.stringify(pending)) },
        MOBILE_LINK_CODE_TTL_SECONDS,
        transaction,
      );
      const [first, ...rest] = (claims.name ?? "").trim().split(/\s+/);
      return {
        kind: "mobile",
        redirect: deepLink(request.returnTo!, {
          status: "account_not_linked",
          linking_code: code,
          email: claims.email,
          first_name: first || "",
          last_name: rest.join(" "),
          allow_account_creation: provider.jitProvisioning,
          has_pending_invitation: false,
        }),
      };
    }
    if ("failure" in outcome || outcome.kind !== "login") return outcome;
    const tokens: MobileTokens = {
      accessToken: outcome.session.accessToken,
      refreshToken: outcome.session.refreshToken,
      expiresIn: outcome.session.expiresIn,
      createdAt: Math.floor(Date.now() / 1000),
      userId: outcome.user.id,
    };
    await this.mobileCodes.create(
      code,
      {
        kind: "tokens",
        providerId: provider.id,
        userId: outcome.user.id,
        device,
        payloadSealed: this.secrets.seal(JSON.stringify(tokens)),
      },
      MOBILE_TOKEN_CODE_TTL_SECONDS,
      transaction,
    );
    return { kind: "mobile", redirect: deepLink(request.returnTo!, { code }) };
  }

  /** POST /api/v1/auth/sso_exchange: the tokens a mobile code stands for, once. */
  async exchangeMobileCode(code: string): Promise<MobileTokens | null> {
    const row = await this.mobileCodes.take(code, "tokens");
    return row ? (JSON.parse(this.secrets.open(row.payloadSealed)) as MobileTokens) : null;
  }

  /** A live linking code's device, without using it (sso_link checks the password first). */
  async mobileLinkDevice(code: string): Promise<DeviceInfo | null> {
    const row = await this.mobileCodes.peek(code, "link");
    return row ? (row.device as DeviceInfo) : null;
  }

  /**
   * POST /api/v1/auth/sso_link, once the password of `user` was checked: connects the IdP's identity
   * to that account (account.connected). False when the code was used meanwhile.
   */
  async linkMobileIdentity(code: string, user: { id: string; email: string }): Promise<boolean> {
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.mobileCodes.take(code, "link", transaction);
      const provider = row?.providerId ? await this.providers.byId(row.providerId) : null;
      if (!row || !provider) return false;
      const pending = JSON.parse(this.secrets.open(row.payloadSealed)) as MobileIdentity;
      const identity = await this.accounts.find(provider.id, pending.subject, transaction);
      if (identity && identity.userId !== user.id) throw new ConflictError("This SSO identity is already linked to another account");
      if (!identity) await this.accounts.connect(transaction, user, provider, claimsOf(pending), user);
      return true;
    });
  }

  /**
   * POST /api/v1/auth/sso_create_account: a new account for the IdP's identity (JIT provisioning,
   * `user.created` and `account.connected`), signed in on the device. Null when the code is not live;
   * "disabled" when the provider does not provision accounts.
   */
  async createMobileAccount(
    code: string,
    names: { firstName: string | null; lastName: string | null },
  ): Promise<{ session: OpenedSession; userId: string } | null | "disabled"> {
    const row = await this.mobileCodes.peek(code, "link");
    if (!row) return null;
    const pending = JSON.parse(this.secrets.open(row.payloadSealed)) as MobileIdentity;
    if (!pending.allowCreation) return "disabled";
    return this.sequelize.transaction(async (transaction) => {
      if (!(await this.mobileCodes.take(code, "link", transaction))) return null;
      const provider = row.providerId ? await this.providers.byId(row.providerId) : null;
      if (!provider) return null;
      if (await this.userRows.byEmail(pending.email, transaction, true))
        throw new ConflictError("An account with this e-mail exists: link it instead");
      const id = newId();
      const name = [names.firstName, names.lastName].filter(Boolean).join(" ") || pending.name;
      await this.users.insert(transaction, {
        id,
        email: pending.email,
        role: roleFromGroups(pending.groups, provider.roleMappings, provider.defaultRole),
        name,
        familyId: provider.provisioningFamilyId,
        actor: { id, email: pending.email },
        provider: provider.id,
      });
      const actor = { id, email: pending.email };
      await this.accounts.connect(transaction, actor, provider, claimsOf(pending), actor);
      const device = row.device as DeviceInfo;
      const session = await this.sessions.open(transaction, actor, { method: "sso", provider: provider.id, device });
      await this.audit.record(transaction, {
        type: "auth.login.success",
        user: actor,
        provider: provider.id,
        action: "login",
        sessionId: session.sessionId,
        resource: { type: "session", id: session.sessionId, label: `sso:${provider.slug}` },
        changes: deviceChanges(device),
      });
      return { session, userId: id };
    });
  }

  sweepExpiredMobileCodes(): Promise<number> {
    return this.mobileCodes.sweepExpired();
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

function claimsOf(pending: MobileIdentity): MappedClaims {
  return { subject: pending.subject, email: pending.email, emailVerified: true, name: pending.name, groups: pending.groups };
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
