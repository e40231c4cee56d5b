import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { UserDeletionType, UserPageType, UserProfileInput, UserType } from "./identity.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

/** Instance-wide user administration: administrators only; changes need a read_write credential. */
@Resolver()
export class UserAdminResolver {
  @Authorized()
  @Query(() => UserPageType, {
    description: 'Every user of the instance, by e-mail. Deleted (anonymised) users only with status: "deleted".',
  })
  users(
    @Ctx() { services }: RequestContext,
    @Arg("search", () => String, { nullable: true, description: "Part of the e-mail or name, or a user id." }) search?: string | null,
    @Arg("role", () => String, { nullable: true, description: "admin, auditor or member." }) role?: string | null,
    @Arg("status", () => String, { nullable: true, description: "active, suspended or deleted." }) status?: string | null,
    @Arg("page", () => Int, { nullable: true }) page?: number | null,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number | null,
  ) {
    return services.userAdmin.list({ search, role, status }, { page, perPage });
  }

  @Authorized()
  @Query(() => UserType)
  user(@Ctx() { services }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.userAdmin.get(id);
  }

  @Authorized()
  @Mutation(() => UserType, {
    description: "Lifts the lock that repeated wrong passwords put on an account, before it ends by itself (user.unlocked).",
  })
  unlockUser(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.userAdmin.unlock(actor, id);
  }

  @Authorized()
  @Mutation(() => UserType, { description: "Changes a user's name or e-mail (user.updated)." })
  updateUser(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input") input: UserProfileInput,
  ) {
    return services.userAdmin.updateProfile(actor, id, input);
  }

  @Authorized()
  @Mutation(() => UserType, { description: "Sets a user's role: admin, auditor or member (user.roles.updated)." })
  setUserRole(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("role") role: string,
  ) {
    return services.userAdmin.setRole(actor, id, role);
  }

  @Authorized()
  @Mutation(() => UserType, {
    description: "Suspends a user at once: their sessions end, their tokens and API keys are refused, their WebSocket connections close.",
  })
  suspendUser(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("reason", () => String, { nullable: true, description: "Recorded in the user.suspended event." }) reason?: string | null,
  ) {
    return services.userAdmin.suspend(actor, id, reason);
  }

  @Authorized()
  @Mutation(() => UserType, { description: "Lets a suspended user back in; their API keys work again, ended sessions stay ended." })
  reactivateUser(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.userAdmin.reactivate(actor, id);
  }

  @Authorized()
  @Mutation(() => UserDeletionType, { description: "Deletes a user as docs/users.md's user deletion policy describes (user.deleted)." })
  deleteUser(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.userAdmin.delete(actor, id);
  }
}
