import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import express, { type NextFunction, type Request, type Response } from "express";
import { sendError } from "../../transports/http/respond";
import { DomainError } from "../../platform/common/errors";
import { authenticate } from "../../transports/http/authenticate";
import type { Services } from "../../app/services";

/**
 * GET /exports/:id/download?expires=…&signature=…: the file behind a signed URL, for the user it was
 * issued to (their bearer token, API key or console session) and before it expires.
 */
export function createExportRouter(services: Services, rateLimit: express.RequestHandler[]): express.Router {
  const router = express.Router();
  router.get(
    "/exports/:id/download",
    authenticate(services, { required: true, cookie: true }),
    ...rateLimit,
    async (req: Request, res: Response, next: NextFunction) => {
      res.setHeader("Cache-Control", "no-store");
      try {
        const query = (name: string) => (typeof req.query[name] === "string" ? (req.query[name] as string) : undefined);
        const download = await services.auditExports.openDownload(
          res.locals.actor!,
          String(req.params.id),
          query("expires"),
          query("signature"),
        );
        res.setHeader("Content-Type", download.mimeType);
        res.setHeader("Content-Length", String(download.bytes));
        res.setHeader("Content-Disposition", `attachment; filename="${download.fileName}"`);
        await pipeline(fs.createReadStream(download.path), res);
      } catch (error) {
        // The client went away mid-download (a closed tab, a cut connection): nothing failed here, nothing to answer.
        if (res.headersSent && (req.destroyed || res.destroyed) && isPrematureClose(error)) return;
        if (!(error instanceof DomainError)) return next(error);
        sendError(req, res, error);
      }
    },
  );
  return router;
}

function isPrematureClose(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "ERR_STREAM_PREMATURE_CLOSE" || code === "ECONNRESET" || code === "EPIPE";
}
