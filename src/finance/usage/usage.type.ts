import { Field, Int, ObjectType } from "type-graphql";

@ObjectType("UsageApiKey", { description: "The API key making the request." })
export class UsageApiKeyType {
  @Field() name!: string;
  @Field(() => [String], { description: "The key's scope as a list, as upstream shows it: [read] or [read_write]." }) scopes!: string[];
  @Field(() => Date, { nullable: true }) lastUsedAt!: Date | null;
  @Field() createdAt!: Date;
}

@ObjectType("RateLimitUsage", { description: "The credential's rate-limit window, this request counted." })
export class RateLimitUsageType {
  @Field({ description: "standard: one configured limit for every credential." }) tier!: string;
  @Field(() => Int, { description: "Requests allowed per window." }) limit!: number;
  @Field(() => Int) windowSeconds!: number;
  @Field(() => Int) currentCount!: number;
  @Field(() => Int) remaining!: number;
  @Field(() => Int) resetInSeconds!: number;
  @Field() resetAt!: Date;
}

@ObjectType("Usage")
export class UsageType {
  @Field({ description: "api_key, access_token or session." }) authenticationMethod!: string;
  @Field(() => UsageApiKeyType, { nullable: true, description: "Null unless the request used an API key." })
  apiKey!: UsageApiKeyType | null;
  @Field(() => RateLimitUsageType, { nullable: true, description: "Null when rate limiting is turned off." })
  rateLimit!: RateLimitUsageType | null;
}
