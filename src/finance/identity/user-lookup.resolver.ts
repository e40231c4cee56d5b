import { Arg, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@ObjectType("UserChoice", { description: "A user as a picker shows them: no role, status or sign-in details." })
export class UserChoiceType {
  @Field(() => ID) id!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
}

/** Picking users by e-mail where auditors name them (reports, exports, the audit log's user filter). */
@Resolver()
export class UserLookupResolver {
  @Authorized()
  @Query(() => [UserChoiceType], {
    description:
      "Users whose e-mail begins with emailPrefix (at least 2 characters; a user id finds that user), in e-mail order, deleted " +
      "accounts left out. Auditors find members of their own family only; administrators find anyone.",
  })
  auditUserLookup(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("emailPrefix") emailPrefix: string,
    @Arg("limit", () => Int, { nullable: true, description: "Default 8, at most 20." }) limit?: number | null,
  ) {
    return services.userLookup.byEmailPrefix(actor, emailPrefix, limit);
  }
}
