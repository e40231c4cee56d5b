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
/**
 * A query string that cannot carry any of those names: none appears in it as written, and nothing in it
 * is percent-encoded (a name spelled `%61pi_key` decodes to one). Most queries are such, and skip the parse.
 */
// The names hold only letters, digits, "_" and "-", none special in a pattern outside brackets.
const MENTIONS_CREDENTIAL = new RegExp(`%|${[...CREDENTIAL_PARAMETERS].join("|")}`, "i");

export function refuseCredentialsInQuery(req: Request, res: Response, next: NextFunction): void {
  const question = req.url.indexOf("?");
  if (question === -1) return next();
  const query = req.url.slice(question + 1);
  if (!MENTIONS_CREDENTIAL.test(query)) return next();
  const params = new URLSearchParams(query);
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
