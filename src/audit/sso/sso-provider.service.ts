import { createHash } from "node:crypto";
import type { Sequelize, Transaction } from "sequelize";
import { diffChanges, type Changes } from "../log";
import type { AuditService } from "../log";
import { ConflictError, NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { checkNoControlCharacters, requiredText, saveUnique } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import { isUserRole, type UserRole } from "../../platform/security/actor";
import type { SecretBox } from "../../platform/security/secret-box";
import type { DiscoveredEndpoints, OidcClient, OidcClientCredentials } from "./oidc-client";
import { checkSlug, normalizeClaimMapping, normalizeDomains, normalizeRoleMappings, normalizeScopes } from "./provider-settings";
import type { ClaimMapping } from "./sso.model";
import type { SsoProviderRow, SsoRepository } from "./sso.repository";

export type SsoProviderInput = {
  name?: string | null;
  slug?: string | null;
  issuer?: string | null;
  clientId?: string | null;
  /** Write-only: stored encrypted, never returned. Omit on update to keep the current one. */
  clientSecret?: string | null;
  scopes?: string[] | null;
  claimMapping?: { [K in keyof ClaimMapping]?: string | null } | null;
  /** Roles are checked against admin, auditor and member. */
  roleMappings?: Array<{ group: string; role: string }> | null;
  defaultRole?: string | null;
  jitProvisioning?: boolean | null;
  allowedDomains?: string[] | null;
  provisioningFamilyId?: string | null;
  enabled?: boolean | null;
};

/** A provider as administrators see it: everything but the client secret, plus the URLs to register at the IdP. */
export type SsoProviderView = Omit<SsoProviderRow, "clientSecretEncrypted"> & {
  redirectUri: string;
  postLogoutRedirectUri: string;
  loginUrl: string;
};

export type SsoProviderTestResult = {
  ok: boolean;
  error: string | null;
  endpoints: DiscoveredEndpoints | null;
  /** Completing a sign-in at this URL records the outcome as `provider.test` without signing anyone in. */
  loginUrl: string | null;
};

/** Starts the test sign-in of `testSsoProvider`; the login service owns authorization requests. */
export type TestLoginStarter = (provider: SsoProviderRow, actor: Actor) => Promise<string>;

/** The configuration fields an update can change, compared for `provider.updated`'s `changes`. */
const AUDITED_FIELDS = [
  "name",
  "slug",
  "issuer",
  "clientId",
  "clientSecret",
  "scopes",
  "claimMapping",
  "roleMappings",
  "defaultRole",
  "jitProvisioning",
  "allowedDomains",
  "provisioningFamilyId",
  "enabled",
] as const;

/**
 * SSO provider administration. Every change records its `provider.*` event in the same transaction;
 * `changes` compare a fingerprint of the client secret, so a new secret shows as changed (redacted)
 * without its value ever reaching the audit log.
 */
export class SsoProviderService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: SsoRepository,
    private readonly audit: AuditService,
    private readonly secrets: SecretBox,
    private readonly oidc: OidcClient,
    private readonly publicUrl: () => string,
  ) {}

  async list(): Promise<SsoProviderView[]> {
    const providers = await this.repository.listProviders();
    return providers.map((provider) => this.view(provider));
  }

  async get(id: string): Promise<SsoProviderView> {
    return this.view(await this.find(id));
  }

  async bySlug(slug: string): Promise<SsoProviderRow | null> {
    return this.repository.providerBySlug(slug);
  }

  async byId(id: string, transaction?: Transaction): Promise<SsoProviderRow | null> {
    return isUuid(id) ? this.repository.providerById(id, transaction) : null;
  }

  /** What the OIDC client needs to talk to the provider, with the secret decrypted. */
  credentialsOf(provider: SsoProviderRow): OidcClientCredentials {
    return {
      id: provider.id,
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: this.secrets.open(provider.clientSecretEncrypted),
      version: provider.updatedAt.getTime(),
    };
  }

  redirectUri(slug: string): string {
    return `${this.publicUrl()}/auth/sso/${slug}/callback`;
  }

  loginUrl(slug: string): string {
    return `${this.publicUrl()}/auth/sso/${slug}/start`;
  }

  postLogoutRedirectUri(): string {
    return `${this.publicUrl()}/auth/sso/logged-out`;
  }

  async create(actor: Actor, input: SsoProviderInput): Promise<SsoProviderView> {
    const settings = await this.validate(input, null);
    return this.sequelize.transaction(async (transaction) => {
      const provider = await saveUnique("Slug has already been taken", () =>
        this.repository.insertProvider({ id: newId(), ...settings }, transaction),
      );
      await this.record(
        transaction,
        actor,
        provider,
        "provider.created",
        "create",
        diffChanges({}, auditedState(provider, input.clientSecret)),
      );
      return this.view(provider);
    });
  }

  async update(actor: Actor, id: string, input: SsoProviderInput): Promise<SsoProviderView> {
    const current = await this.find(id);
    const settings = await this.validate(input, current);
    return this.sequelize.transaction(async (transaction) => {
      const current = await this.lock(id, transaction);
      const currentSecret = this.secrets.open(current.clientSecretEncrypted);
      const changes = diffChanges(
        auditedState(current, currentSecret),
        auditedState({ ...current, ...settings }, input.clientSecret || currentSecret),
      );
      if (Object.keys(changes).length === 0) return this.view(current);
      const provider = await saveUnique("Slug has already been taken", () => this.repository.updateProvider(id, settings, transaction));
      await this.record(transaction, actor, provider, "provider.updated", "update", changes);
      this.oidc.forget(provider.id);
      return this.view(provider);
    });
  }

  async setEnabled(actor: Actor, id: string, enabled: boolean): Promise<SsoProviderView> {
    await this.find(id);
    return this.sequelize.transaction(async (transaction) => {
      const current = await this.lock(id, transaction);
      if (current.enabled === enabled) return this.view(current);
      const provider = await this.repository.updateProvider(id, { enabled }, transaction);
      await this.record(transaction, actor, provider, enabled ? "provider.enabled" : "provider.disabled", enabled ? "enable" : "disable", {
        enabled: { old: !enabled, new: enabled },
      });
      return this.view(provider);
    });
  }

  /** Deletes a provider with its connected accounts; users who signed in only through it keep their data but not that way in. */
  async delete(actor: Actor, id: string): Promise<SsoProviderView> {
    await this.find(id);
    return this.sequelize.transaction(async (transaction) => {
      const provider = await this.lock(id, transaction);
      const view = this.view(provider);
      const connectedAccounts = await this.repository.identitiesOfProvider(id, transaction);
      await this.repository.deleteProvider(id, transaction);
      await this.record(transaction, actor, provider, "provider.deleted", "delete", {
        connectedAccounts: { old: connectedAccounts, new: 0 },
      });
      this.oidc.forget(provider.id);
      return view;
    });
  }

  /**
   * Runs a real discovery against the issuer and, when it works, returns a sign-in URL marked as a
   * test. Both steps are recorded as `provider.test`.
   */
  async test(actor: Actor, id: string, startTestLogin: TestLoginStarter): Promise<SsoProviderTestResult> {
    const provider = await this.find(id);
    let result: SsoProviderTestResult;
    try {
      const endpoints = await this.oidc.discover(this.credentialsOf(provider));
      result = { ok: true, error: null, endpoints, loginUrl: await startTestLogin(provider, actor) };
    } catch (error) {
      result = { ok: false, error: (error as Error).message.slice(0, 500), endpoints: null, loginUrl: null };
    }
    await this.sequelize.transaction((transaction) =>
      this.record(transaction, actor, provider, "provider.test", "test.discovery", null, result.error),
    );
    return result;
  }

  private async find(id: string): Promise<SsoProviderRow> {
    const provider = await this.byId(id);
    if (!provider) throw new NotFoundError("SSO provider");
    return provider;
  }

  private async lock(id: string, transaction: Transaction): Promise<SsoProviderRow> {
    const provider = await this.repository.lockProvider(id, transaction);
    if (!provider) throw new NotFoundError("SSO provider");
    return provider;
  }

  private async record(
    transaction: Transaction,
    actor: Actor,
    provider: SsoProviderRow,
    type: "provider.created" | "provider.updated" | "provider.enabled" | "provider.disabled" | "provider.deleted" | "provider.test",
    action: string,
    changes: Changes | null,
    error: string | null = null,
  ): Promise<void> {
    await this.audit.record(transaction, {
      type,
      actor,
      provider: provider.id,
      action,
      resource: { type: "sso_provider", id: provider.id, label: provider.slug },
      changes,
      error,
    });
  }

  /** The stored settings an input asks for: every field on create, the given ones merged over `current` on update. */
  private async validate(input: SsoProviderInput, current: SsoProviderRow | null) {
    const problems = new ValidationErrors();
    const pick = <K extends keyof SsoProviderInput>(key: K) => input[key] ?? undefined;
    const name = requiredText(problems, "Name", pick("name") ?? current?.name, 100);
    const slug = (pick("slug") ?? current?.slug ?? "").trim();
    checkSlug(problems, slug);
    const issuer = (pick("issuer") ?? current?.issuer ?? "").trim().replace(/\/+$/, "");
    if (!issuer) problems.add("Issuer can't be blank");
    else if (checkNoControlCharacters(problems, "Issuer", issuer)) {
      try {
        await this.oidc.checkIssuer(issuer);
      } catch (error) {
        problems.add((error as { errors?: string[] }).errors?.[0] ?? "Issuer is not a valid URL");
      }
    }
    const clientId = requiredText(problems, "Client id", pick("clientId") ?? current?.clientId, 255);
    const clientSecret = pick("clientSecret");
    if (!current && !clientSecret) problems.add("Client secret can't be blank");
    if (clientSecret !== undefined && (clientSecret.length === 0 || clientSecret.length > 1000))
      problems.add("Client secret must be 1-1000 characters");
    checkNoControlCharacters(problems, "Client id", clientId);
    checkNoControlCharacters(problems, "Client secret", clientSecret);
    const scopes = normalizeScopes(problems, pick("scopes") ?? current?.scopes);
    const claimMapping = normalizeClaimMapping(problems, pick("claimMapping") ?? current?.claimMapping);
    const roleMappings = normalizeRoleMappings(problems, pick("roleMappings") ?? current?.roleMappings);
    const defaultRole = pick("defaultRole") ?? current?.defaultRole ?? "member";
    if (!isUserRole(defaultRole)) problems.add("Default role must be one of admin, auditor, member");
    const allowedDomains = normalizeDomains(problems, pick("allowedDomains") ?? current?.allowedDomains);
    const provisioningFamilyId =
      input.provisioningFamilyId === undefined ? (current?.provisioningFamilyId ?? null) : input.provisioningFamilyId;
    if (provisioningFamilyId !== null && !(isUuid(provisioningFamilyId) && (await this.repository.familyExists(provisioningFamilyId)))) {
      problems.add("Provisioning family does not exist");
    }
    if (current && input.enabled !== undefined && input.enabled !== null && input.enabled !== current.enabled) {
      problems.add("Enabled is changed with enableSsoProvider or disableSsoProvider");
    }
    problems.throwIfAny();
    if (current && slug !== current.slug && (await this.repository.slugTaken(slug))) {
      throw new ConflictError("Slug has already been taken");
    }
    return {
      name,
      slug,
      issuer,
      clientId,
      clientSecretEncrypted: clientSecret ? this.secrets.seal(clientSecret) : current!.clientSecretEncrypted,
      scopes,
      claimMapping,
      roleMappings,
      defaultRole: defaultRole as UserRole,
      jitProvisioning: pick("jitProvisioning") ?? current?.jitProvisioning ?? false,
      allowedDomains,
      provisioningFamilyId,
      enabled: current ? current.enabled : (pick("enabled") ?? true),
    };
  }

  private view(provider: SsoProviderRow): SsoProviderView {
    const { clientSecretEncrypted: _secret, ...rest } = provider;
    return {
      ...rest,
      redirectUri: this.redirectUri(provider.slug),
      postLogoutRedirectUri: this.postLogoutRedirectUri(),
      loginUrl: this.loginUrl(provider.slug),
    };
  }
}

/**
 * The audited view of a provider's configuration. The client secret appears only as a fingerprint
 * (redacted before storage), so `changes` can say it changed without ever holding it.
 */
function auditedState(provider: SsoProviderRow, secret: string | null | undefined): Record<string, unknown> {
  const state: Record<string, unknown> = Object.fromEntries(
    AUDITED_FIELDS.filter((field) => field !== "clientSecret").map((field) => [field, provider[field as keyof SsoProviderRow]]),
  );
  if (secret) state.clientSecret = createHash("sha256").update(secret).digest("hex");
  return state;
}
