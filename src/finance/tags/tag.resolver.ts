import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { TagInput, TagType } from "./tag.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver(() => TagType)
export class TagResolver {
  @Authorized()
  @Query(() => [TagType], { description: "The family's tags ordered by name." })
  tags(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.tags.list(actor);
  }

  @Authorized()
  @Query(() => TagType)
  tag(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.tags.get(actor, id);
  }

  @Authorized()
  @Mutation(() => TagType)
  createTag(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input", () => TagInput) input: TagInput) {
    return services.tags.create(actor, input);
  }

  @Authorized()
  @Mutation(() => TagType)
  updateTag(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => TagInput) input: TagInput,
  ) {
    return services.tags.update(actor, id, input);
  }

  @Authorized()
  @Mutation(() => TagType, { description: "Removes the tag from every transaction." })
  deleteTag(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.tags.delete(actor, id);
  }
}
