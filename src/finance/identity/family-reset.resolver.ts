import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import { FamilyResetStatusType, FamilyResetType } from "./family-reset.type";

/** Where upstream's clients read the family's reset status. */
const RESET_STATUS_PATH = "/api/v1/users/reset/status";

/** A family's own reset of its financial data (upstream's users/reset), for the family's administrators. */
@Resolver()
export class FamilyResetResolver {
  @Authorized()
  @Query(() => FamilyResetStatusType, { description: "How much financial data your family holds; complete once a reset left none." })
  familyResetStatus(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.familyReset.currentStatus(actor);
  }

  @Authorized()
  @Mutation(() => FamilyResetType, {
    description: "Deletes your family's financial data at once; users, sessions, API keys and the audit log stay (family.reset).",
  })
  async resetFamilyData(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("confirm", { description: "Must be true." }) confirm: boolean,
  ): Promise<FamilyResetType> {
    const reset = await services.familyReset.reset(actor, confirm);
    return {
      message: "Account reset has been completed",
      status: "complete",
      jobId: null,
      familyId: reset.familyId,
      statusUrl: RESET_STATUS_PATH,
      removed: reset.removed,
    };
  }
}
