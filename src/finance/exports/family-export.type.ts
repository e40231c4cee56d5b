import { GraphQLJSONObject } from "graphql-scalars";
import { Field, Float, ID, ObjectType } from "type-graphql";
import { PageMetaType } from "../planning";
import type { FamilyExportRecord } from "./family-export.repository";

@ObjectType("FamilyExportFile", { simpleResolvers: true })
export class FamilyExportFileType {
  @Field() attached!: boolean;
  @Field(() => Float, { nullable: true }) byteSize!: number | null;
  @Field(() => String, { nullable: true }) contentType!: string | null;
}

@ObjectType("FamilyExport", {
  simpleResolvers: true,
  description: "A zip of the family's data (docs/exports.md): upstream's CSV files, all.ndjson and a manifest of SHA-256s.",
})
export class FamilyExportType {
  @Field(() => ID) id!: string;
  @Field({ description: "pending, processing, completed or failed." }) status!: string;
  @Field(() => String, { nullable: true }) filename!: string | null;
  @Field() downloadable!: boolean;
  @Field(() => String, { nullable: true, description: "GET it (with your credentials) to be redirected to a signed URL of the zip." })
  downloadPath!: string | null;
  @Field(() => FamilyExportFileType) file!: FamilyExportFileType;
  @Field(() => GraphQLJSONObject, { nullable: true, description: "Each file's name, SHA-256, bytes and rows; the zip's own SHA-256." })
  manifest!: Record<string, unknown> | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("FamilyExportPage", { simpleResolvers: true })
export class FamilyExportPageType {
  @Field(() => [FamilyExportType]) items!: FamilyExportType[];
  @Field(() => PageMetaType) meta!: PageMetaType;
}

@ObjectType("FamilyExportDownload", { simpleResolvers: true })
export class FamilyExportDownloadType {
  @Field({ description: "Path and query to GET with your credentials, before expiresAt; valid for your family only." }) url!: string;
  @Field() expiresAt!: Date;
}

/** Upstream's view of an export (app/views/api/v1/family_exports/_family_export.json.jbuilder). */
export function familyExportView(record: FamilyExportRecord): FamilyExportType {
  const downloadable = record.status === "completed" && record.fileName !== null;
  return {
    id: record.id,
    status: record.status,
    filename: record.fileName,
    downloadable,
    downloadPath: downloadable ? `/api/v1/family_exports/${record.id}/download` : null,
    file: {
      attached: downloadable,
      byteSize: downloadable ? record.fileBytes : null,
      contentType: downloadable ? "application/zip" : null,
    },
    manifest: record.manifest,
    error: record.error,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
