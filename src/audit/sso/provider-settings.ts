import type { JWTPayload } from "jose";
import type { ValidationErrors } from "../../platform/common/errors";
import { isUserRole, ROLE_PRIVILEGE, USER_ROLES, type UserRole } from "../../platform/security/actor";
import type { ClaimMapping, RoleMapping } from "./sso.model";

export const DEFAULT_SCOPES = ["openid", "email", "profile"];
export const DEFAULT_CLAIM_MAPPING: ClaimMapping = { email: "email", name: "name", groups: "groups" };

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
/** RFC 6749 §3.3 scope-token characters. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/;
/** Claim names, including the URL-namespaced ones some IdPs use (`https://example.com/groups`). */
const CLAIM = /^[A-Za-z0-9_:/.-]{1,200}$/;
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const MAX_ROLE_MAPPINGS = 100;
const MAX_DOMAINS = 100;

export function checkSlug(problems: ValidationErrors, slug: string): void {
  if (!SLUG.test(slug)) problems.add("Slug must be 1-64 lowercase letters, digits or dashes, not starting or ending with a dash");
}

export function normalizeScopes(problems: ValidationErrors, scopes: string[] | null | undefined): string[] {
  const list = [...new Set((scopes ?? DEFAULT_SCOPES).map((scope) => scope.trim()).filter(Boolean))];
  if (!list.includes("openid")) problems.add("Scopes must include openid");
  if (list.length > 20) problems.add("Scopes may list at most 20 scopes");
  for (const scope of list) if (!SCOPE.test(scope)) problems.add(`Scope ${JSON.stringify(scope.slice(0, 40))} is not a valid scope`);
  return list;
}

export function normalizeClaimMapping(
  problems: ValidationErrors,
  mapping: { [K in keyof ClaimMapping]?: string | null } | null | undefined,
): ClaimMapping {
  const given = Object.entries(mapping ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "");
  const result: ClaimMapping = { ...DEFAULT_CLAIM_MAPPING, ...Object.fromEntries(given.map(([key, value]) => [key, value.trim()])) };
  for (const [key, claim] of Object.entries(result)) {
    if (!CLAIM.test(claim)) problems.add(`Claim mapping ${key} is not a valid claim name`);
  }
  return result;
}

export function normalizeRoleMappings(
  problems: ValidationErrors,
  mappings: Array<{ group: string; role: string }> | null | undefined,
): RoleMapping[] {
  const list = (mappings ?? []).map(({ group, role }) => ({ group: group.trim(), role: role as UserRole }));
  if (list.length > MAX_ROLE_MAPPINGS) problems.add(`Role mappings may hold at most ${MAX_ROLE_MAPPINGS} rules`);
  for (const { group, role } of list) {
    if (!group || group.length > 200) problems.add("Role mapping group must be 1-200 characters");
    if (!isUserRole(role)) problems.add(`Role mapping role must be one of ${USER_ROLES.join(", ")}`);
  }
  return list;
}

export function normalizeDomains(problems: ValidationErrors, domains: string[] | null | undefined): string[] {
  const list = [...new Set((domains ?? []).map((domain) => domain.trim().toLowerCase().replace(/^@/, "")).filter(Boolean))];
  if (list.length > MAX_DOMAINS) problems.add(`Allowed domains may list at most ${MAX_DOMAINS} domains`);
  for (const domain of list)
    if (!DOMAIN.test(domain)) problems.add(`Allowed domain ${JSON.stringify(domain.slice(0, 80))} is not a domain name`);
  return list;
}

/** What the service reads from a verified ID token, through the provider's claim mapping. */
export type MappedClaims = {
  subject: string;
  email: string | null;
  /** False only when the IdP says so; absent means the IdP vouches for its e-mails. */
  emailVerified: boolean;
  name: string | null;
  groups: string[];
};

export function mapClaims(claims: JWTPayload, mapping: ClaimMapping): MappedClaims {
  const email = claimAt(claims, mapping.email);
  const name = claimAt(claims, mapping.name);
  const groups = claimAt(claims, mapping.groups);
  return {
    subject: String(claims.sub ?? ""),
    email: typeof email === "string" && email.includes("@") ? email.trim().toLowerCase() : null,
    emailVerified: claims.email_verified !== false,
    name: typeof name === "string" ? name.slice(0, 200) : null,
    groups: Array.isArray(groups)
      ? groups.filter((group): group is string => typeof group === "string")
      : typeof groups === "string"
        ? [groups]
        : [],
  };
}

/** A claim by name, or by a dotted path into nested objects (Keycloak's `realm_access.roles`). */
function claimAt(claims: JWTPayload, name: string): unknown {
  if (name in claims) return claims[name];
  return name
    .split(".")
    .reduce<unknown>((value, key) => (value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined), claims);
}

/** The role the IdP's groups grant: the highest mapped role, else the provider's default. */
export function roleFromGroups(groups: string[], mappings: RoleMapping[], defaultRole: UserRole): UserRole {
  let role: UserRole | null = null;
  for (const mapping of mappings) {
    if (groups.includes(mapping.group) && (role === null || ROLE_PRIVILEGE[mapping.role] > ROLE_PRIVILEGE[role])) role = mapping.role;
  }
  return role ?? defaultRole;
}

export function emailDomainAllowed(email: string, allowedDomains: string[]): boolean {
  if (allowedDomains.length === 0) return true;
  const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase();
  return allowedDomains.includes(domain);
}
