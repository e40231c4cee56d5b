import { Field, ID, ObjectType } from "type-graphql";

@ObjectType("User")
export class UserType {
  @Field(() => ID) id!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field({ description: "admin, auditor or member." }) role!: string;
  @Field(() => ID) familyId!: string;
  @Field({ description: "Whether the AI assistant is enabled for this user." }) aiEnabled!: boolean;
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
