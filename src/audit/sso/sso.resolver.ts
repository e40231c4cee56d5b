import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { ConnectedAccountType, SsoProviderInput, SsoProviderTestType, SsoProviderType } from "./sso.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver()
export class SsoResolver {
  @Authorized()
  @Query(() => [SsoProviderType], { description: "Every SSO provider, oldest first." })
  ssoProviders(@Ctx() { services }: RequestContext) {
    return services.ssoProviders.list();
  }

  @Authorized()
  @Query(() => SsoProviderType)
  ssoProvider(@Ctx() { services }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.ssoProviders.get(id);
  }

  @Authorized()
  @Mutation(() => SsoProviderType, { description: "Adds a provider (provider.created)." })
  createSsoProvider(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input") input: SsoProviderInput) {
    return services.ssoProviders.create(actor, input);
  }

  @Authorized()
  @Mutation(() => SsoProviderType, {
    description: "Changes a provider's configuration (provider.updated, with changes; secrets redacted).",
  })
  updateSsoProvider(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input") input: SsoProviderInput,
  ) {
    return services.ssoProviders.update(actor, id, input);
  }

  @Authorized()
  @Mutation(() => SsoProviderType, { description: "provider.enabled" })
  enableSsoProvider(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.ssoProviders.setEnabled(actor, id, true);
  }

  @Authorized()
  @Mutation(() => SsoProviderType, { description: "Nobody can sign in with it until enabled again (provider.disabled)." })
  disableSsoProvider(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.ssoProviders.setEnabled(actor, id, false);
  }

  @Authorized()
  @Mutation(() => SsoProviderType, { description: "Removes a provider and its connected accounts (provider.deleted)." })
  deleteSsoProvider(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.ssoProviders.delete(actor, id);
  }

  @Authorized()
  @Mutation(() => SsoProviderTestType, { description: "Discovers the provider now and returns a test sign-in URL (provider.test)." })
  testSsoProvider(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.ssoProviders.test(actor, id, (provider, admin) => services.ssoLogins.prepareTest(provider, admin));
  }

  @Authorized()
  @Query(() => [ConnectedAccountType], { description: "The SSO identities you sign in with." })
  connectedAccounts(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.connectedAccounts.list(actor.userId);
  }

  @Authorized()
  @Mutation(() => ConnectedAccountType, {
    description: "Disconnects one of your SSO identities (account.disconnected); your last way to sign in cannot be removed.",
  })
  disconnectConnectedAccount(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.connectedAccounts.disconnect(actor, id);
  }
}
