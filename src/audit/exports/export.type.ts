import { GraphQLJSONObject } from "graphql-scalars";
import { Field, Float, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { AuditEventFilterInput } from "../log";

export enum AuditExportFormat {
  JSON = "json",
  JSONL = "jsonl",
  CSV = "csv",
}
registerEnumType(AuditExportFormat, {
  name: "AuditExportFormat",
  description: "JSON (one array), JSONL (one event a line) or CSV (RFC 4180).",
});

export enum AuditExportCompression {
  GZIP = "gzip",
  ZIP = "zip",
}
registerEnumType(AuditExportCompression, {
  name: "AuditExportCompression",
  description: "GZIP: the data file gzipped. ZIP: a zip holding the data file and its manifest.json.",
});

export enum AuditReportFormat {
  PDF = "pdf",
  CSV = "csv",
  JSON = "json",
}
registerEnumType(AuditReportFormat, { name: "AuditReportFormat" });

export enum AuditReportTemplate {
  AUTHENTICATION = "authentication",
  USER_ACTIVITY = "user_activity",
  ACCESS_AUDIT = "access_audit",
  CUSTOM = "custom",
}
registerEnumType(AuditReportTemplate, {
  name: "AuditReportTemplate",
  description:
    "AUTHENTICATION (SOC 2 CC6.1-CC6.3, CC7.2), USER_ACTIVITY (HIPAA §164.312(b), §164.308(a)(1)(ii)(D)), ACCESS_AUDIT (ISO/IEC 27001:2022 A.8.15), CUSTOM.",
});

export enum AuditReportGroupBy {
  eventType = "eventType",
  severity = "severity",
  user = "user",
  provider = "provider",
  ipAddress = "ipAddress",
  day = "day",
  reason = "reason",
}
registerEnumType(AuditReportGroupBy, { name: "AuditReportGroupBy", description: "What a custom report counts its events by." });

export enum AuditReportColumn {
  timestamp = "timestamp",
  eventType = "eventType",
  severity = "severity",
  user = "user",
  provider = "provider",
  action = "action",
  resource = "resource",
  ipAddress = "ipAddress",
  userAgent = "userAgent",
  sessionId = "sessionId",
  requestId = "requestId",
  changes = "changes",
  error = "error",
}
registerEnumType(AuditReportColumn, { name: "AuditReportColumn", description: "A column a custom report lists." });

export enum AuditExportKind {
  EVENTS = "events",
  REPORT = "report",
}
registerEnumType(AuditExportKind, { name: "AuditExportKind" });

export enum AuditExportStatus {
  QUEUED = "queued",
  RUNNING = "running",
  COMPLETED = "completed",
  FAILED = "failed",
  EXPIRED = "expired",
}
registerEnumType(AuditExportStatus, { name: "AuditExportStatus" });

@InputType("AuditExportInput")
export class AuditExportInput {
  @Field(() => AuditEventFilterInput, {
    nullable: true,
    description: "The audit search's filter: the export holds every event that search shows. Without `to`, up to now.",
  })
  filter?: AuditEventFilterInput | null;
  @Field(() => AuditExportFormat) format!: AuditExportFormat;
  @Field(() => AuditExportCompression, { nullable: true, description: "Default GZIP." }) compression?: AuditExportCompression | null;
}

@InputType("AuditReportInput")
export class AuditReportInput {
  @Field(() => AuditReportTemplate) template!: AuditReportTemplate;
  @Field(() => AuditReportFormat) format!: AuditReportFormat;
  @Field({ description: "ISO 8601 date or date-time." }) from!: string;
  @Field({ description: "ISO 8601 date or date-time, inclusive (a date includes its whole day)." }) to!: string;
  @Field(() => [ID], { nullable: true, description: "Only these users (default all)." }) userIds?: string[] | null;
  @Field(() => [String], { nullable: true, description: "Only these SSO providers (default all)." }) providers?: string[] | null;
  @Field(() => [String], { nullable: true, description: "CUSTOM only: exact types or prefixes like auth.* (default all)." })
  eventTypes?: string[] | null;
  @Field(() => AuditReportGroupBy, { nullable: true, description: "CUSTOM only (default eventType)." }) groupBy?: AuditReportGroupBy | null;
  @Field(() => [AuditReportColumn], { nullable: true, description: "CUSTOM only (default timestamp, eventType, user, ipAddress)." })
  columns?: AuditReportColumn[] | null;
}

@ObjectType("AuditExport", { description: "An export or report you asked for: its progress, then its file until it expires." })
export class AuditExportType {
  @Field(() => ID) id!: string;
  @Field(() => AuditExportKind) kind!: AuditExportKind;
  @Field({ description: "json, jsonl, csv or pdf." }) format!: string;
  @Field(() => AuditExportStatus) status!: AuditExportStatus;
  @Field(() => GraphQLJSONObject, { description: "The export's filter ({filter}) or the report's parameters ({report})." })
  params!: Record<string, unknown>;
  @Field(() => Float, { description: "Events written so far (a report: events it covers)." }) rowsWritten!: number;
  @Field(() => Float, { description: "0 to 1: how far through its period the export has got." }) progress!: number;
  @Field(() => String, { nullable: true }) fileName!: string | null;
  @Field(() => Float, { nullable: true }) fileBytes!: number | null;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "Rows, range, filters, SHA-256 of the data (dataSha256) and of the file (fileSha256), generated by/at.",
  })
  manifest!: Record<string, unknown> | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: "When the file is removed." }) expiresAt!: Date | null;
}

@ObjectType("AuditExportDownload")
export class AuditExportDownloadType {
  @Field({ description: "Path and query to GET with your own credentials (it works for you only), before expiresAt." }) url!: string;
  @Field() expiresAt!: Date;
}
