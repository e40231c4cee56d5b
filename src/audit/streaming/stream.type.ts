import { Field, ID, InputType, Int, ObjectType } from "type-graphql";

@ObjectType("StreamSetting", { description: "One non-secret platform setting of a destination." })
export class StreamSettingType {
  @Field() name!: string;
  @Field() value!: string;
}

@InputType("StreamSettingInput", { description: "A platform setting or credential by name (see docs/audit-streaming.md)." })
export class StreamSettingInput {
  @Field() name!: string;
  @Field() value!: string;
}

@ObjectType("StreamDestinationHealth", { description: "Where a destination stands in the audit stream." })
export class StreamDestinationHealthType {
  @Field({ description: "Chain sequence number of the last event handled (delivered, or skipped by the filter)." }) position!: string;
  @Field({ description: "Chain sequence number of the newest recorded event." }) head!: string;
  @Field({ description: "Events recorded but not yet handled: head − position." }) lag!: string;
  @Field() paused!: boolean;
  @Field({ description: "Retries exhausted: nothing is sent until resumed or replayed; undelivered events wait." }) failing!: boolean;
  @Field(() => Int, { description: "Failed attempts in a row of the batch after the position." }) failures!: number;
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => Date, { nullable: true }) lastSuccessAt!: Date | null;
  @Field(() => Date, { nullable: true }) lastFailureAt!: Date | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
}

@ObjectType("StreamDestination", {
  description: "A webhook or SIEM that receives the audit stream. Credentials and the webhook secret are write-only.",
})
export class StreamDestinationType {
  @Field(() => ID) id!: string;
  @Field({ description: "webhook, splunk, elastic, datadog, sentinel, qradar or arcsight." }) kind!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field({ description: "http(s) URL, or syslog://host:port / syslog+tls://host:port for qradar and arcsight." }) url!: string;
  @Field(() => [String], { description: "Exact event types or prefixes ending in .*; empty sends every event." }) eventTypes!: string[];
  @Field() enabled!: boolean;
  @Field(() => String, { nullable: true, description: "Why the service disabled it (a 410 Gone from the receiver)." }) disabledReason!:
    string | null;
  @Field(() => [StreamSettingType]) settings!: StreamSettingType[];
  @Field(() => [String], { description: "Names of the stored credentials; their values are never returned." }) credentialNames!: string[];
  @Field(() => Date, { nullable: true, description: "Until then the previous webhook secret signs too (rotation overlap)." })
  rotationOverlapUntil!: Date | null;
  @Field(() => StreamDestinationHealthType) health!: StreamDestinationHealthType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("StreamDestinationWithSecret", { description: "The webhook secret (whsec_…) is shown here once and never again." })
export class StreamDestinationWithSecretType {
  @Field(() => StreamDestinationType) destination!: StreamDestinationType;
  @Field(() => String, { nullable: true }) secret!: string | null;
}

@InputType("StreamDestinationInput", {
  description: "On update, omitted fields keep their value; credentials given replace those of the same name.",
})
export class StreamDestinationInput {
  @Field(() => String, { nullable: true, description: "Required on create; cannot change." }) kind?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) url?: string | null;
  @Field(() => [String], { nullable: true }) eventTypes?: string[] | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
  @Field(() => [StreamSettingInput], { nullable: true, description: "An empty value removes a setting." }) settings?:
    StreamSettingInput[] | null;
  @Field(() => [StreamSettingInput], { nullable: true, description: "Write-only (token, apiKey, clientSecret), stored encrypted." })
  credentials?: StreamSettingInput[] | null;
}

@ObjectType("StreamDelivery", { description: "One attempt: a request (or a syslog write) with the events it carried." })
export class StreamDeliveryType {
  @Field(() => ID) id!: string;
  @Field() attemptedAt!: Date;
  @Field(() => String, { nullable: true }) firstSeq!: string | null;
  @Field(() => String, { nullable: true }) lastSeq!: string | null;
  @Field(() => Int) events!: number;
  @Field(() => Int, { nullable: true, description: "The HTTP status; null for syslog and for failures before an answer." }) status!:
    number | null;
  @Field(() => Int) latencyMs!: number;
  @Field({ description: "delivered, failed, or refused (by the outbound guard)." }) outcome!: string;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field() test!: boolean;
}

@ObjectType("StreamTestResult")
export class StreamTestResultType {
  @Field() ok!: boolean;
  @Field(() => Int, { nullable: true }) status!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType("StreamKindSetting")
export class StreamKindSettingType {
  @Field() name!: string;
  @Field() required!: boolean;
}

@ObjectType("StreamDestinationKind", { description: "A kind of destination and what it takes (docs/audit-streaming.md)." })
export class StreamDestinationKindType {
  @Field({ description: "webhook, splunk, elastic, datadog, sentinel, qradar or arcsight." }) kind!: string;
  @Field(() => [StreamKindSettingType], { description: "Non-secret settings." }) settings!: StreamKindSettingType[];
  @Field(() => [String], { description: "Write-only credentials, all required on create; a webhook has a generated secret instead." })
  credentials!: string[];
  @Field({ description: "Its url is syslog://host:port or syslog+tls://host:port instead of http(s)." }) syslog!: boolean;
}
