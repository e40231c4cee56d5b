import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { MerchantInput, MerchantPageType, MerchantType } from "./merchant.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver(() => MerchantType)
export class MerchantResolver {
  @Authorized()
  @Query(() => MerchantPageType, { description: "The family's merchants ordered by name." })
  merchants(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return services.merchants.list(actor, page, perPage);
  }

  @Authorized()
  @Query(() => MerchantType)
  merchant(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.merchants.get(actor, id);
  }

  @Authorized()
  @Mutation(() => MerchantType)
  createMerchant(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => MerchantInput) input: MerchantInput,
  ) {
    return services.merchants.create(actor, input);
  }

  @Authorized()
  @Mutation(() => MerchantType)
  updateMerchant(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => MerchantInput) input: MerchantInput,
  ) {
    return services.merchants.update(actor, id, input);
  }

  @Authorized()
  @Mutation(() => MerchantType, { description: "Deletes the merchant; its transactions keep existing without one." })
  deleteMerchant(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.merchants.delete(actor, id);
  }
}
