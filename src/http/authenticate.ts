import type { NextFunction, Request, Response } from "express";
import { DomainError } from "../common/errors";
import type { Actor } from "../identity/actor";
import type { Services } from "../services";
import { sendError } from "./respond";

declare module "express-serve-static-core" {
  interface Locals {
    actor: Actor | null;
    requestId: string;
  }
}

/**
 * Resolves the request's actor from `X-Api-Key` (bearer tokens join when token issuance exists).
 * `required` answers 401 when no credential is given; otherwise an anonymous request passes with a
 * null actor (GraphQL introspection) and the schema's @Authorized fields refuse it.
 * A credential that is present but wrong is always a 401, with one message for every cause.
 */
export function authenticate(services: Services, { required }: { required: boolean }) {
  return async (req: Request, res: Response, next: NextFunction) => {
    res.locals.actor = null;
    const apiKey = req.get("x-api-key");
    if (!apiKey) {
      if (required)
        return sendError(req, res, 401, { error: "unauthorized", message: "Access token or API key is invalid, expired, or missing" });
      return next();
    }
    try {
      res.locals.actor = await services.apiKeys.authenticate(apiKey);
      next();
    } catch (error) {
      if (error instanceof DomainError) return sendError(req, res, 401, { error: error.restError, message: error.message });
      next(error);
    }
  };
}
