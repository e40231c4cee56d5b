import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { AuditExportDownloadType, AuditExportInput, AuditExportKind, AuditExportType, AuditReportInput } from "./export.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

/** Audit exports and compliance reports: administrators and auditors, each seeing their own requests. */
@Resolver(() => AuditExportType)
export class AuditExportResolver {
  @Authorized()
  @Mutation(() => AuditExportType, { description: "Exports the events an audit search shows (no row cap), compressed with gzip." })
  createAuditExport(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => AuditExportInput) input: AuditExportInput,
  ) {
    return services.auditExports.requestExport(actor, { filter: input.filter, format: input.format, compression: input.compression });
  }

  @Authorized()
  @Mutation(() => AuditExportType, { description: "Writes a compliance report (a template, or a custom one) as PDF, CSV or JSON." })
  createAuditReport(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => AuditReportInput) input: AuditReportInput,
  ) {
    return services.auditExports.requestReport(actor, { ...input });
  }

  @Authorized()
  @Query(() => [AuditExportType], { description: "Your exports and reports, newest first (the last 100)." })
  auditExports(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("kind", () => AuditExportKind, { nullable: true }) kind?: AuditExportKind | null,
  ) {
    return services.auditExports.list(actor, kind ?? null);
  }

  @Authorized()
  @Query(() => AuditExportType, { description: "One of your exports or reports: poll it for progress." })
  auditExport(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.auditExports.get(actor, id);
  }

  @Authorized()
  @Mutation(() => AuditExportDownloadType, { description: "A short-lived download URL of a finished file, usable by you only." })
  createAuditExportDownloadUrl(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.auditExports.downloadUrl(actor, id);
  }
}
