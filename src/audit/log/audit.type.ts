import { GraphQLJSONObject } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";

@ObjectType("AuditUser", { description: "The acting user; id is null for a failed login under an unknown e-mail." })
export class AuditUserType {
  @Field(() => ID, { nullable: true }) id!: string | null;
  @Field() email!: string;
}

@ObjectType("AuditResource", { description: "What the event is about: a user, provider, session, account…" })
export class AuditResourceType {
  @Field() type!: string;
  @Field() id!: string;
  @Field(() => String, { nullable: true }) label!: string | null;
}

@ObjectType("AuditEvent")
export class AuditEventType {
  @Field(() => ID) id!: string;
  @Field(() => String, {
    nullable: true,
    description: "Position in the hash chain; null until the event is linked (milliseconds after commit).",
  })
  seq!: string | null;
  @Field() timestamp!: Date;
  @Field({ description: "A type of the event catalogue, e.g. auth.login.failed." }) eventType!: string;
  @Field({ description: "info, warning, error or critical." }) severity!: string;
  @Field(() => AuditUserType, { nullable: true }) user!: AuditUserType | null;
  @Field(() => String, { nullable: true }) provider!: string | null;
  @Field(() => String, { nullable: true }) action!: string | null;
  @Field(() => AuditResourceType, { nullable: true }) resource!: AuditResourceType | null;
  @Field(() => String, { nullable: true }) ipAddress!: string | null;
  @Field(() => String, { nullable: true }) userAgent!: string | null;
  @Field(() => String, { nullable: true }) sessionId!: string | null;
  @Field(() => String, { nullable: true }) requestId!: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: "{field: {old, new}} on update events; secrets redacted." })
  changes!: Record<string, unknown> | null;
  @Field(() => String, { nullable: true, description: "The failure reason of a failed event." }) error!: string | null;
  @Field(() => String, { nullable: true, description: "Hex SHA-256 of the previous event." }) prevHash!: string | null;
  @Field(() => String, { nullable: true, description: "Hex SHA-256 over this event's content, seq and prevHash; null until linked." })
  hash!: string | null;
}

@ObjectType("AuditEventEdge")
export class AuditEventEdgeType {
  @Field() cursor!: string;
  @Field(() => AuditEventType) node!: AuditEventType;
}

@ObjectType("AuditPageInfo")
export class AuditPageInfoType {
  @Field() hasNextPage!: boolean;
  @Field(() => String, { nullable: true, description: "Pass as `after` for the next page (stable keyset paging)." })
  endCursor!: string | null;
  @Field(() => Int) limit!: number;
  @Field(() => Int) offset!: number;
  @Field(() => Int, { description: "Matching events, counted up to 10000 (up to 1000 for a free-text `search`)." })
  total!: number;
  @Field({ description: "True when more events match than `total` counts." }) totalCapped!: boolean;
}

@ObjectType("AuditEventConnection", { description: "Newest first." })
export class AuditEventConnectionType {
  @Field(() => [AuditEventEdgeType]) edges!: AuditEventEdgeType[];
  @Field(() => [AuditEventType]) nodes!: AuditEventType[];
  @Field(() => AuditPageInfoType) pageInfo!: AuditPageInfoType;
}

@InputType("AuditEventFilter", { description: "Every given criterion must hold; a list matches any of its values." })
export class AuditEventFilterInput {
  @Field(() => String, {
    nullable: true,
    description: "Words that must all appear in the event's text fields (3+ characters use the index).",
  })
  search?: string | null;
  @Field(() => [ID], { nullable: true }) userIds?: string[] | null;
  @Field(() => [String], { nullable: true }) providers?: string[] | null;
  @Field(() => [String], { nullable: true, description: "Exact types, or prefixes like auth.*" }) eventTypes?: string[] | null;
  @Field(() => [String], { nullable: true }) severities?: string[] | null;
  @Field(() => String, { nullable: true, description: "ISO 8601 date or date-time." }) from?: string | null;
  @Field(() => String, { nullable: true, description: "ISO 8601 date or date-time, inclusive (a date includes its whole day)." })
  to?: string | null;
  @Field(() => String, { nullable: true, description: "An address, a CIDR, or a trailing wildcard like 10.1.*" })
  ipAddress?: string | null;
  @Field(() => String, { nullable: true, description: "Events of this request id (give a date range: no index serves it alone)." })
  requestId?: string | null;
  @Field(() => String, { nullable: true, description: "Events of this session id (give a date range: no index serves it alone)." })
  sessionId?: string | null;
}

@ObjectType("AuditEventFilterValue", { description: "A saved filter, to pass back as AuditEventFilter." })
export class AuditEventFilterValueType {
  @Field(() => String, { nullable: true }) search?: string | null;
  @Field(() => [ID], { nullable: true }) userIds?: string[] | null;
  @Field(() => [String], { nullable: true }) providers?: string[] | null;
  @Field(() => [String], { nullable: true }) eventTypes?: string[] | null;
  @Field(() => [String], { nullable: true }) severities?: string[] | null;
  @Field(() => String, { nullable: true }) from?: string | null;
  @Field(() => String, { nullable: true }) to?: string | null;
  @Field(() => String, { nullable: true }) ipAddress?: string | null;
  @Field(() => String, { nullable: true }) requestId?: string | null;
  @Field(() => String, { nullable: true }) sessionId?: string | null;
}

@ObjectType("AuditEventTypeInfo", { description: "One type of the audit event catalogue." })
export class AuditEventTypeInfoType {
  @Field({ description: "e.g. auth.login.failed" }) type!: string;
  @Field({ description: "The first part of the type: auth, provider, user, account." }) category!: string;
  @Field({ description: "Severity unless the emitter raises it." }) defaultSeverity!: string;
  @Field() meaning!: string;
}

@ObjectType("AuditSavedSearch")
export class AuditSavedSearchType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => AuditEventFilterValueType) filter!: AuditEventFilterValueType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("AuditChainBreak")
export class AuditChainBreakType {
  @Field({ description: "altered, deleted, inserted or relinked." }) kind!: string;
  @Field(() => String, { nullable: true, description: "Sequence number where the chain breaks; null for an event no link names." })
  seq!: string | null;
  @Field(() => ID, { nullable: true }) eventId!: string | null;
  @Field(() => Date, { nullable: true }) timestamp!: Date | null;
  @Field() message!: string;
  @Field(() => String, { nullable: true, description: "Storage key of the archive the break lies in, when it lies in one." })
  archive?: string | null;
  @Field(() => String, {
    nullable: true,
    description: "Bytes (`from-to`) of that archive file that are wrong, when a fault of its bytes is all that can be named.",
  })
  byteRange?: string | null;
}

@ObjectType("AuditChainReport")
export class AuditChainReportType {
  @Field() ok!: boolean;
  @Field(() => Int, { description: "Events checked before the first break (or in all)." }) checked!: number;
  @Field(() => AuditChainBreakType, { nullable: true }) firstBroken!: AuditChainBreakType | null;
}

@ObjectType("AuditHistogramBucket", { description: "Events of one time bucket, by severity." })
export class AuditHistogramBucketType {
  @Field({ description: "Start of the bucket (inclusive)." }) start!: Date;
  @Field(() => Int) info!: number;
  @Field(() => Int) warning!: number;
  @Field(() => Int) error!: number;
  @Field(() => Int) critical!: number;
  @Field(() => Int) total!: number;
}

@ObjectType("AuditHistogram", { description: "Events per time bucket and severity for a filter." })
export class AuditHistogramType {
  @Field({ description: "Start of the range: the filter's start, or the oldest event." }) from!: Date;
  @Field({ description: "End of the range (exclusive): the filter's end, or now." }) to!: Date;
  @Field(() => Int, { description: "Width of each bucket; buckets start at multiples of it from the Unix epoch." })
  bucketSeconds!: number;
  @Field({ description: "True when the counts are estimated from a sample of the table (a very large range)." })
  sampled!: boolean;
  @Field(() => [AuditHistogramBucketType]) buckets!: AuditHistogramBucketType[];
}

@ObjectType("AuditEventsAfterSeq", { description: "Linked events after a chain position, in chain order (gap fill)." })
export class AuditEventsAfterSeqType {
  @Field(() => [AuditEventType], { description: "The events of the walked links that match the filter." })
  events!: AuditEventType[];
  @Field({ description: "The last chain position walked: pass it as afterSeq to continue." }) throughSeq!: string;
  @Field({ description: "True when more links follow throughSeq." }) hasMore!: boolean;
}
