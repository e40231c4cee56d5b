import { Authorized, Ctx, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { UsageType } from "./usage.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver(() => UsageType)
export class UsageResolver {
  @Authorized()
  @Query(() => UsageType, { description: "The credential making this request and its rate-limit state." })
  async usage(@Ctx() { services, rateLimit }: RequestContext, @CurrentActor() actor: Actor): Promise<UsageType> {
    const usage = await services.usage.usage(actor, rateLimit);
    return {
      authenticationMethod: usage.authenticationMethod,
      apiKey: usage.apiKey && {
        name: usage.apiKey.name,
        scopes: [usage.apiKey.scope],
        lastUsedAt: usage.apiKey.lastUsedAt,
        createdAt: usage.apiKey.createdAt,
      },
      rateLimit: usage.rateLimit && { tier: "standard", ...usage.rateLimit },
    };
  }
}
