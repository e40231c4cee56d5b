import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { ApiKeyType, CreatedApiKeyType, UserDeletionType, UserType } from "./identity.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver()
export class IdentityResolver {
  @Authorized()
  @Query(() => UserType, { description: "The user the request's credentials belong to." })
  me(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.users.getById(actor.userId);
  }

  @Authorized()
  @Query(() => [ApiKeyType], { description: "Your API keys, newest first, revoked ones included." })
  apiKeys(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.apiKeys.listForUser(actor.userId);
  }

  @Authorized()
  @Mutation(() => CreatedApiKeyType)
  createApiKey(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("scope", { description: "read or read_write." }) scope: string,
    @Arg("name", () => String, { nullable: true }) name?: string,
    @Arg("expiresAt", () => Date, { nullable: true }) expiresAt?: Date,
  ) {
    return services.apiKeys.create(actor.userId, { scope, name, expiresAt }, actor);
  }

  @Authorized()
  @Mutation(() => UserType, { description: "Turns the AI assistant on for yourself (user.updated)." })
  enableAi(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.userAdmin.enableAi(actor);
  }

  @Authorized()
  @Mutation(() => ApiKeyType, { description: "Revokes one of your keys; it stops working at once." })
  revokeApiKey(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.apiKeys.revokeOwn(actor, id);
  }

  @Authorized()
  @Mutation(() => UserDeletionType, {
    description:
      "Deletes your own account under docs/users.md's user deletion policy (user.deleted); the last active administrator is refused.",
  })
  deleteMyAccount(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("confirm", { description: "Must be true." }) confirm: boolean,
  ) {
    return services.userAdmin.deleteSelf(actor, confirm);
  }
}
