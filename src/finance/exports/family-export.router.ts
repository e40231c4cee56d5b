import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { GraphQLSchema } from "graphql";
import { DomainError, ForbiddenError } from "../../platform/common/errors";
import { canAdminister, type Actor } from "../../platform/security/actor";
import type { RequestContext } from "../../transports/graphql/context";
import { authenticate, type CredentialChecks } from "../../transports/http/authenticate";
import { sendError } from "../../transports/http/respond";
import { prepareOperations } from "../../../rest-adapter/operations";
import { domainErrorOf } from "../../../rest-adapter/rest-errors";
import { API_PREFIX } from "../../../rest-adapter/routes";
import type { FamilyExportService } from "./family-export.service";

/**
 * The two downloads of a family export (docs/exports.md):
 * - GET /api/v1/family_exports/:id/download, as upstream: a 302 to a signed URL of the zip (upstream
 *   redirects to its blob's URL), or 409 export_not_ready. It runs createFamilyExportDownloadUrl, so
 *   who may ask is that field's rule (access-rules.ts), as for every REST route.
 * - GET /family_exports/:id/file?expires=…&signature=…: the zip, for a family administrator of the
 *   family the URL was signed for (their credentials too: a leaked URL is useless elsewhere), before it
 *   expires; each download is audited.
 */
export function createFamilyExportRouter(
  services: CredentialChecks & { familyExports: FamilyExportService },
  schema: GraphQLSchema,
  contextOf: (req: Request) => RequestContext,
  rateLimit: RequestHandler[],
): express.Router {
  const router = express.Router();
  const downloadUrl = prepareOperations(schema, ["createFamilyExportDownloadUrl"]).get("createFamilyExportDownloadUrl")!;

  router.get(
    `${API_PREFIX}/family_exports/:id/download`,
    authenticate(services, { required: true }),
    ...rateLimit,
    async (req: Request, res: Response, next: NextFunction) => {
      res.locals.route = `${API_PREFIX}/family_exports/{id}/download`;
      res.setHeader("Cache-Control", "no-store");
      try {
        const result = await downloadUrl.run(contextOf(req), { id: String(req.params.id) });
        if (result.errors?.length) throw domainErrorOf(result.errors) ?? new Error("no download URL");
        const { url } = (result.data as { createFamilyExportDownloadUrl: { url: string } }).createFamilyExportDownloadUrl;
        res.redirect(302, url);
      } catch (error) {
        if (!(error instanceof DomainError)) return next(error);
        sendError(req, res, error);
      }
    },
  );

  router.get(
    "/family_exports/:id/file",
    authenticate(services, { required: true, cookie: true }),
    ...rateLimit,
    async (req: Request, res: Response, next: NextFunction) => {
      res.setHeader("Cache-Control", "no-store");
      try {
        const actor = res.locals.actor as Actor;
        if (!canAdminister(actor)) throw new ForbiddenError("Family exports require a family admin");
        const query = (name: string) => (typeof req.query[name] === "string" ? (req.query[name] as string) : undefined);
        const download = await services.familyExports.openDownload(actor, String(req.params.id), query("expires"), query("signature"));
        res.setHeader("Content-Type", "application/zip");
        res.setHeader("Content-Length", String(download.bytes));
        res.setHeader("Content-Disposition", `attachment; filename="${download.fileName}"`);
        await pipeline(fs.createReadStream(download.path), res);
      } catch (error) {
        // The client went away mid-download: nothing failed here, nothing to answer.
        if (res.headersSent) return;
        if (!(error instanceof DomainError)) return next(error);
        sendError(req, res, error);
      }
    },
  );
  return router;
}
