import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";

@ObjectType("User")
export class UserType {
  @Field(() => ID) id!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field({ description: "admin, auditor or member." }) role!: string;
  @Field(() => ID) familyId!: string;
  @Field({ description: "Whether the AI assistant is enabled for this user." }) aiEnabled!: boolean;
  @Field({ description: "active, suspended or deleted." }) status!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field(() => Date, {
    nullable: true,
    description:
      "While repeated wrong passwords keep the account locked: when it unlocks by itself (unlockUser lifts it now). Null when not locked.",
  })
  lockedUntil!: Date | null;
  @Field(() => Date, { nullable: true, description: "When the user last signed in (password or SSO); null if never." })
  lastSignInAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'How: "password", or "sso:" and the provider\'s id.' })
  lastSignInMethod!: string | null;
}

@ObjectType("UserPage")
export class UserPageType {
  @Field(() => [UserType]) items!: UserType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("UserProfileInput", { description: "Fields left out are unchanged; a null or blank name clears it." })
export class UserProfileInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: "Must stay unique (compared without case)." }) email?: string | null;
}

@ObjectType("RemovedRows", { description: "How many rows a deletion removed from one table." })
export class RemovedRowsType {
  @Field() table!: string;
  @Field(() => Int) count!: number;
}

@ObjectType("UserDeletion")
export class UserDeletionType {
  @Field(() => UserType, { description: "The anonymised account that remains, so audit events keep its id." }) user!: UserType;
  @Field({ description: "Whether the family's financial data was removed (no other member was left)." }) familyDataRemoved!: boolean;
  @Field(() => Int, { description: "Open sessions that were ended." }) sessionsEnded!: number;
  @Field(() => [RemovedRowsType]) removed!: RemovedRowsType[];
}

@ObjectType("ApiKey")
export class ApiKeyType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field({ description: "The key's first characters, to tell keys apart." }) displayPrefix!: string;
  @Field({ description: "read or read_write." }) scope!: string;
  @Field(() => Date, { nullable: true }) lastUsedAt!: Date | null;
  @Field(() => Date, { nullable: true }) expiresAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
  @Field() createdAt!: Date;
}

@ObjectType("CreatedApiKey")
export class CreatedApiKeyType {
  @Field(() => ApiKeyType) apiKey!: ApiKeyType;
  @Field({ description: "The key itself. Shown this once; only its hash is stored." }) plaintext!: string;
}
