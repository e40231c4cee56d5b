import { Arg, Authorized, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@ObjectType("TwoFactorStatus", { description: "The caller's two-factor (TOTP) sign-in." })
export class TwoFactorStatusType {
  @Field({ description: "Whether a password sign-in asks for a code." }) enabled!: boolean;
  @Field(() => Date, { nullable: true }) enabledAt!: Date | null;
  @Field(() => Int, { description: "Unused recovery codes." }) recoveryCodesLeft!: number;
  @Field({ description: "An enrolment was started and waits for its first code." }) pending!: boolean;
}

@ObjectType("TwoFactorEnrolment", { description: "A pending TOTP secret: scan the QR code, then confirm with a code." })
export class TwoFactorEnrolmentType {
  @Field({ description: "The base32 secret, for typing into an authenticator app." }) secret!: string;
  @Field({ description: "The otpauth:// URI the QR code holds." }) otpauthUri!: string;
  @Field({ description: "The QR code as an SVG document." }) qrCodeSvg!: string;
}

/** Two-factor sign-in: enrol yourself; administrators reset a user's (a lost phone). */
@Resolver()
export class TwoFactorResolver {
  @Authorized()
  @Query(() => TwoFactorStatusType)
  twoFactorStatus(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.twoFactor.describe(actor.userId);
  }

  @Authorized()
  @Mutation(() => TwoFactorEnrolmentType, {
    description: "Starts (or restarts) your TOTP enrolment: a new secret and its QR code. Sign-in is unchanged until confirmed.",
  })
  beginTwoFactorEnrolment(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.twoFactor.begin(actor);
  }

  @Authorized()
  @Mutation(() => [String], {
    description:
      "Confirms the enrolment with a code from the app: two-factor sign-in is on (auth.mfa.enrolled). Returns 10 recovery codes, shown once.",
  })
  confirmTwoFactorEnrolment(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("code") code: string) {
    return services.twoFactor.confirm(actor, code);
  }

  @Authorized()
  @Mutation(() => Boolean, {
    description: "Turns a user's two-factor sign-in off (a lost phone); they enrol again (auth.mfa.reset).",
  })
  async resetTwoFactor(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("userId", () => ID) userId: string) {
    await services.twoFactor.reset(actor, userId);
    return true;
  }
}
