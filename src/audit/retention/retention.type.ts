import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";
import { AuditEventType } from "../log";

@ObjectType("RetentionTier", { description: "A retention tier: how long an event is kept in all, database and archive together." })
export class RetentionTierType {
  @Field({ description: "standard, extended or compliance." }) name!: string;
  @Field(() => Int) retentionDays!: number;
  @Field() meaning!: string;
}

@ObjectType("RetentionCategoryTier", { description: "Events of a category (an event type or a prefix like auth.*) kept under a tier." })
export class RetentionCategoryTierType {
  @Field() pattern!: string;
  @Field() tier!: string;
}

@InputType("RetentionCategoryTierInput")
export class RetentionCategoryTierInput {
  @Field({ description: "An event type or a prefix ending in .* (auth.*)." }) pattern!: string;
  @Field({ description: "standard, extended or compliance." }) tier!: string;
}

@InputType("RetentionSettingsInput")
export class RetentionSettingsInput {
  @Field(() => Int, { description: "Days a month stays in the database after it ends (0–36500)." }) databaseDays!: number;
  @Field({ description: "The tier of events no category rule names." }) defaultTier!: string;
  @Field(() => [RetentionCategoryTierInput], { description: "First matching rule wins; at most 50." })
  categoryTiers!: RetentionCategoryTierInput[];
}

@ObjectType("RetentionMove", { description: "A month a retention run moved from the database into archives." })
export class RetentionMoveType {
  @Field() month!: string;
  @Field(() => Int) rows!: number;
  @Field(() => [String], { description: "`tier rows sha256` of each archive written." }) archives!: string[];
}

@ObjectType("RetentionKept", { description: "A month a retention run left in the database, and why." })
export class RetentionKeptType {
  @Field() month!: string;
  @Field() reason!: string;
  @Field(() => String, { nullable: true, description: "When it leaves, if the window decides it." }) until!: string | null;
}

@ObjectType("RetentionDeleted", { description: "An archive a retention run deleted because its tier's time was up." })
export class RetentionDeletedType {
  @Field() month!: string;
  @Field() tier!: string;
  @Field(() => Int) rows!: number;
}

@ObjectType("RetentionRun")
export class RetentionRunType {
  @Field() startedAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
  @Field(() => [RetentionMoveType]) moved!: RetentionMoveType[];
  @Field(() => [RetentionKeptType]) kept!: RetentionKeptType[];
  @Field(() => [RetentionDeletedType]) deleted!: RetentionDeletedType[];
  @Field(() => String, { nullable: true }) error!: string | null;
}

@ObjectType("RetentionMonth", { description: "A month on its way out of the database, gone, or restored." })
export class RetentionMonthType {
  @Field() month!: string;
  @Field({ description: "detached, archived, dropped (only in archives) or restored (back in the database)." }) state!: string;
}

@ObjectType("AuditRetention")
export class AuditRetentionType {
  @Field(() => Int) databaseDays!: number;
  @Field() defaultTier!: string;
  @Field(() => [RetentionCategoryTierType]) categoryTiers!: RetentionCategoryTierType[];
  @Field(() => Date, {
    nullable: true,
    description: "When an administrator last changed the settings; null while the configured defaults apply.",
  })
  changedAt!: Date | null;
  @Field(() => [RetentionTierType]) tiers!: RetentionTierType[];
  @Field(() => RetentionRunType, { nullable: true, description: "The latest retention run: when, what it moved, kept and deleted." })
  lastRun!: RetentionRunType | null;
  @Field(() => [RetentionMonthType]) months!: RetentionMonthType[];
  @Field({ description: "Where archives are stored (dir:/path or s3://bucket/prefix)." }) storage!: string;
  @Field({ description: "The public key that verifies checkpoints (signed-note verifier key)." }) checkpointKey!: string;
}

@ObjectType("AuditArchive", { description: "The archive of one month and tier: compressed JSONL plus its manifest." })
export class AuditArchiveType {
  @Field(() => ID) id!: string;
  @Field() month!: string;
  @Field() tier!: string;
  @Field({ description: "stored or deleted (past its tier; the manifest stays)." }) state!: string;
  @Field() storageKey!: string;
  @Field() keepUntil!: Date;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) deletedAt!: Date | null;
  @Field(() => GraphQLJSONObject, {
    description: "rows, first/last timestamp, first/last chain sequence, SHA-256 of the data and the file.",
  })
  manifest!: unknown;
  @Field({ description: "True while the month is restored into the database." }) restored!: boolean;
}

@ObjectType("AuditArchiveSearchResult")
export class AuditArchiveSearchResultType {
  @Field(() => [AuditEventType], { description: "Matches, archives in the order chosen, chain order within each." })
  nodes!: AuditEventType[];
  @Field() hasNextPage!: boolean;
  @Field(() => String, { nullable: true, description: "Pass as `after` for the next page." }) endCursor!: string | null;
  @Field(() => Int, { description: "Archived events read for this page." }) scanned!: number;
}

@ObjectType("AuditCheckpoint", { description: "The signed checkpoint of the chain at the end of an archived month (C2SP signed note)." })
export class AuditCheckpointType {
  @Field() month!: string;
  @Field() treeSize!: string;
  @Field() note!: string;
}

@ObjectType("AuditArchiveMonthResult")
export class AuditArchiveMonthResultType {
  @Field() month!: string;
  @Field(() => Int, { nullable: true, description: "Events loaded back (restore) or removed again (release)." }) rows!: number | null;
}
