import type { NextFunction, Request, Response } from "express";
import { CredentialsInQueryError } from "../../platform/common/errors";
import { sendError } from "./respond";

/** Query parameters that would carry a credential: URLs end up in logs, proxies and browser history. */
const CREDENTIAL_PARAMETERS = new Set([
  "api_key",
  "apikey",
  "api-key",
  "x-api-key",
  "access_token",
  "refresh_token",
  "token",
  "authorization",
]);

/**
 * Refuses a request with a credential in its query string, with a 400 that says where it belongs,
 * and blanks the value out of the URL first so nothing downstream (request logs included) sees it.
 */
export function refuseCredentialsInQuery(req: Request, res: Response, next: NextFunction): void {
  const question = req.url.indexOf("?");
  if (question === -1) return next();
  const params = new URLSearchParams(req.url.slice(question + 1));
  const found = [...params.keys()].filter((name) => CREDENTIAL_PARAMETERS.has(name.toLowerCase()));
  if (found.length === 0) return next();
  for (const name of found) params.set(name, "[redacted]");
  req.url = `${req.url.slice(0, question)}?${params.toString()}`;
  req.originalUrl = req.url;
  sendError(
    req,
    res,
    new CredentialsInQueryError(
      `Credentials are not accepted in the query string (${found.join(", ")}): send the X-Api-Key or Authorization header`,
    ),
  );
}
