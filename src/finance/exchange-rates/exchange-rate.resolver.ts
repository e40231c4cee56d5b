import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import {
  ExchangeRateFilterInput,
  ExchangeRateInput,
  ExchangeRatePageType,
  ExchangeRateType,
  SetExchangeRatePayload,
} from "./exchange-rate.type";

@Resolver(() => ExchangeRateType)
export class ExchangeRateResolver {
  @Authorized()
  @Query(() => ExchangeRatePageType, { description: "The family's exchange rates, newest day first." })
  exchangeRates(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("filter", () => ExchangeRateFilterInput, { nullable: true }) filter?: ExchangeRateFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ) {
    return services.exchangeRates.list(actor, filter ?? {}, page, perPage);
  }

  @Authorized()
  @Mutation(() => SetExchangeRatePayload, {
    description:
      "Sets a currency pair's rate for a day (a second rate for the same day replaces it); the family's totals use it from that day on.",
  })
  async setExchangeRate(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => ExchangeRateInput) input: ExchangeRateInput,
  ): Promise<SetExchangeRatePayload> {
    const { rate, created } = await services.exchangeRates.set(actor, input);
    return { exchangeRate: rate, created };
  }

  @Authorized()
  @Mutation(() => ExchangeRateType, { description: "Removes a rate; returns it." })
  deleteExchangeRate(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.exchangeRates.delete(actor, id);
  }
}
