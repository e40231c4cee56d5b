import { Field, ID, InputType, ObjectType } from "type-graphql";

@ObjectType("SsoClaimMapping", {
  description: "Which ID token claims hold the e-mail, name and groups; a dotted name reads a nested claim.",
})
export class SsoClaimMappingType {
  @Field() email!: string;
  @Field() name!: string;
  @Field() groups!: string;
}

@InputType("SsoClaimMappingInput")
export class SsoClaimMappingInput {
  @Field(() => String, { nullable: true }) email?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) groups?: string | null;
}

@ObjectType("SsoRoleMapping", { description: "Members of this IdP group get this role; the highest matching role wins." })
export class SsoRoleMappingType {
  @Field() group!: string;
  @Field({ description: "admin, auditor or member." }) role!: string;
}

@InputType("SsoRoleMappingInput")
export class SsoRoleMappingInput {
  @Field() group!: string;
  @Field({ description: "admin, auditor or member." }) role!: string;
}

@ObjectType("SsoProvider", { description: "An OpenID Connect identity provider. The client secret is write-only." })
export class SsoProviderType {
  @Field(() => ID) id!: string;
  @Field({ description: "Names the provider in its URLs: /auth/sso/{slug}/start." }) slug!: string;
  @Field() name!: string;
  @Field({ description: "Issuer URL; its /.well-known/openid-configuration is discovered." }) issuer!: string;
  @Field() clientId!: string;
  @Field(() => [String]) scopes!: string[];
  @Field(() => SsoClaimMappingType) claimMapping!: SsoClaimMappingType;
  @Field(() => [SsoRoleMappingType]) roleMappings!: SsoRoleMappingType[];
  @Field({ description: "Role of users whose groups match no mapping." }) defaultRole!: string;
  @Field({ description: "Create an account at first sign-in for people who have none." }) jitProvisioning!: boolean;
  @Field(() => [String], { description: "E-mail domains allowed to sign in; empty allows any." }) allowedDomains!: string[];
  @Field(() => ID, { nullable: true, description: "Family that provisioned users join; null gives each a family of their own." })
  provisioningFamilyId!: string | null;
  @Field() enabled!: boolean;
  @Field({ description: "Register this exact redirect URI at the IdP." }) redirectUri!: string;
  @Field({ description: "Register this as a post-logout redirect URI at the IdP." }) postLogoutRedirectUri!: string;
  @Field({ description: "Where a browser starts signing in with this provider." }) loginUrl!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@InputType("SsoProviderInput", { description: "On update, omitted fields keep their values; clientSecret only when it changes." })
export class SsoProviderInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) slug?: string | null;
  @Field(() => String, { nullable: true }) issuer?: string | null;
  @Field(() => String, { nullable: true }) clientId?: string | null;
  @Field(() => String, { nullable: true, description: "Stored encrypted; never returned." }) clientSecret?: string | null;
  @Field(() => [String], { nullable: true, description: "Default: openid email profile." }) scopes?: string[] | null;
  @Field(() => SsoClaimMappingInput, { nullable: true }) claimMapping?: SsoClaimMappingInput | null;
  @Field(() => [SsoRoleMappingInput], { nullable: true }) roleMappings?: SsoRoleMappingInput[] | null;
  @Field(() => String, { nullable: true }) defaultRole?: string | null;
  @Field(() => Boolean, { nullable: true }) jitProvisioning?: boolean | null;
  @Field(() => [String], { nullable: true }) allowedDomains?: string[] | null;
  @Field(() => ID, { nullable: true }) provisioningFamilyId?: string | null;
  @Field(() => Boolean, { nullable: true, description: "On create only (default true); then enableSsoProvider / disableSsoProvider." })
  enabled?: boolean | null;
}

@ObjectType("SsoDiscoveredEndpoints")
export class SsoDiscoveredEndpointsType {
  @Field() issuer!: string;
  @Field() authorizationEndpoint!: string;
  @Field() tokenEndpoint!: string;
  @Field() jwksUri!: string;
  @Field(() => String, { nullable: true }) endSessionEndpoint!: string | null;
}

@ObjectType("SsoProviderTest", { description: "A real discovery; on success, a test sign-in URL that signs nobody in." })
export class SsoProviderTestType {
  @Field() ok!: boolean;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => SsoDiscoveredEndpointsType, { nullable: true }) endpoints!: SsoDiscoveredEndpointsType | null;
  @Field(() => String, { nullable: true, description: "Open in a browser within 10 minutes; the outcome is recorded as provider.test." })
  loginUrl!: string | null;
}

@ObjectType("ConnectedAccount", { description: "An SSO identity you sign in with." })
export class ConnectedAccountType {
  @Field(() => ID) id!: string;
  @Field(() => ID) providerId!: string;
  @Field() providerSlug!: string;
  @Field() providerName!: string;
  @Field({ description: "The IdP's subject identifier." }) subject!: string;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) lastLoginAt!: Date | null;
}
