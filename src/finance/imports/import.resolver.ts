import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import { pageMeta } from "../planning";
import { ImportInput, ImportPageType, ImportPreflightType, ImportRowPageType, ImportType } from "./import.type";
import type { ImportUpload } from "./import.service";
import { importRowView, importView, preflightView } from "./import.views";

/** A GraphQL file: the whole content in one argument (REST uploads stream instead: import.router.ts). */
function uploadOf({ rawFileContent, ...settings }: ImportInput): ImportUpload {
  return { content: [rawFileContent], fileName: null, contentType: null, settings };
}

/** File imports of transactions (docs/imports.md). */
@Resolver()
export class ImportResolver {
  @Authorized()
  @Query(() => ImportPageType, { description: "The family's imports, newest first." })
  async imports(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("status", () => String, { nullable: true }) status?: string | null,
    @Arg("type", () => String, { nullable: true }) type?: string | null,
    @Arg("page", () => Int, { nullable: true }) page?: number | null,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number | null,
  ): Promise<ImportPageType> {
    const found = await services.imports.list(actor, { status, type }, page, perPage);
    return { items: found.items.map(importView), meta: pageMeta(found.pagination) };
  }

  @Authorized()
  @Query(() => ImportType)
  async import(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string): Promise<ImportType> {
    return importView(await services.imports.get(actor, id));
  }

  @Authorized()
  @Query(() => ImportRowPageType, { description: "An import's rows in file order, each with its problems." })
  async importRows(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("page", () => Int, { nullable: true }) page?: number | null,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number | null,
  ): Promise<ImportRowPageType> {
    const found = await services.imports.rows(actor, id, page, perPage);
    return { items: found.items.map((row) => importRowView(id, row)), meta: pageMeta(found.pagination) };
  }

  @Authorized()
  @Query(() => ImportPreflightType, { description: "What importing the file would do, per row, writing nothing." })
  async importPreflight(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input") input: ImportInput) {
    return preflightView(await services.imports.preflight(actor, uploadOf(input)));
  }

  @Authorized()
  @Mutation(() => ImportType, {
    description: "Stores a file as a pending import (import.created); with publish, writes its transactions too.",
  })
  async createImport(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input") input: ImportInput,
    @Arg("publish", () => Boolean, { nullable: true }) publish?: boolean | null,
  ): Promise<ImportType> {
    return importView(await services.imports.create(actor, uploadOf(input), publish ?? false));
  }

  @Authorized()
  @Mutation(() => ImportType, { description: "Writes a pending import's transactions in one go (import.published)." })
  async publishImport(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
  ): Promise<ImportType> {
    return importView(await services.imports.publish(actor, id));
  }
}
