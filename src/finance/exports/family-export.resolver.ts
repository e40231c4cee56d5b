import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import { pageMeta } from "../planning";
import { FamilyExportDownloadType, FamilyExportPageType, FamilyExportType, familyExportView } from "./family-export.type";

/** Family exports (docs/exports.md): family administrators, as upstream (read scope to look, read_write to ask). */
@Resolver()
export class FamilyExportResolver {
  @Authorized()
  @Query(() => FamilyExportPageType, { description: "The family's exports, newest first." })
  async familyExports(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("page", () => Int, { nullable: true }) page?: number | null,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number | null,
  ): Promise<FamilyExportPageType> {
    const found = await services.familyExports.list(actor, page, perPage);
    return { items: found.items.map(familyExportView), meta: pageMeta(found.pagination) };
  }

  @Authorized()
  @Query(() => FamilyExportType, { description: "One of the family's exports: poll it until it is completed." })
  async familyExport(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return familyExportView(await services.familyExports.get(actor, id));
  }

  @Authorized()
  @Mutation(() => FamilyExportType, { description: "Asks for a zip of the family's data, written by a worker (family_export.created)." })
  async createFamilyExport(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return familyExportView(await services.familyExports.request(actor));
  }

  @Authorized()
  @Mutation(() => FamilyExportDownloadType, { description: "A short-lived URL of a completed export's zip, valid for this family only." })
  createFamilyExportDownloadUrl(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.familyExports.downloadUrl(actor, id);
  }
}
