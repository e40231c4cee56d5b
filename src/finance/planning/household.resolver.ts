import { SafeIntResolver } from "graphql-scalars";
import { Arg, Authorized, Ctx, Field, ID, InputType, Int, ObjectType, Query, Resolver } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import type { Actor } from "../../platform/security/actor";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import { CalendarDateScalar } from "../money";

@ObjectType("FamilySettings", {
  description: "Upstream's family settings; those this service does not store are upstream's defaults.",
  simpleResolvers: true,
})
export class FamilySettingsType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() currency!: string;
  @Field() locale!: string;
  @Field() dateFormat!: string;
  @Field() country!: string;
  @Field(() => String, { nullable: true }) timezone!: string | null;
  @Field(() => Int) monthStartDay!: number;
  @Field() moniker!: string;
  @Field() defaultAccountSharing!: string;
  @Field() customEnabledCurrencies!: boolean;
  @Field(() => [String]) enabledCurrencies!: string[];
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("RejectedTransferAccount")
export class RejectedTransferAccountType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() accountType!: string;
}

@ObjectType("RejectedTransferSide")
export class RejectedTransferSideType {
  @Field(() => ID) id!: string;
  @Field(() => CalendarDateScalar) date!: string;
  @Field() formattedAmount!: string;
  @Field(() => SafeIntResolver) amountCents!: number;
  @Field() currency!: string;
  @Field() name!: string;
  @Field(() => RejectedTransferAccountType) account!: RejectedTransferAccountType;
}

@ObjectType("RejectedTransfer", {
  description: "A transfer match a user rejected. Transfers are never auto-matched here, so there are none (docs/planning.md).",
})
export class RejectedTransferType {
  @Field(() => ID) id!: string;
  @Field(() => RejectedTransferSideType) inflow!: RejectedTransferSideType;
  @Field(() => RejectedTransferSideType) outflow!: RejectedTransferSideType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("RejectedTransferPage")
export class RejectedTransferPageType {
  @Field(() => [RejectedTransferType]) items!: RejectedTransferType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("RejectedTransferFilter")
export class RejectedTransferFilterInput {
  @Field(() => ID, { nullable: true }) accountId?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) startDate?: string | null;
  @Field(() => CalendarDateScalar, { nullable: true }) endDate?: string | null;
}

@Resolver()
export class HouseholdResolver {
  @Authorized()
  @Query(() => FamilySettingsType)
  familySettings(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.household.settings(actor);
  }

  @Authorized()
  @Query(() => RejectedTransferPageType, { description: "Always empty: transfers are never auto-matched, so no match can be rejected." })
  rejectedTransfers(
    @Ctx() { services }: RequestContext,
    @Arg("filter", () => RejectedTransferFilterInput, { nullable: true }) filter?: RejectedTransferFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return services.household.rejectedTransfers(filter ?? {}, page, perPage);
  }

  @Authorized()
  @Query(() => RejectedTransferType)
  rejectedTransfer(@Ctx() { services }: RequestContext, @Arg("id", () => ID) _id: string) {
    return services.household.rejectedTransfer();
  }
}
