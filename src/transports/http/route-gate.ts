import type { RequestHandler, Router } from "express";

/**
 * `router`, entered only by requests whose path begins as one of its routes' paths does. The routers
 * mounted before /api/v1's route table (sign-in, SSO, uploads, downloads, health) serve a few paths
 * each, and without the gate every REST request passed through all of them, tested against each of
 * their routes. The prefixes come from the router's own routes, so a route added to it is served
 * with no change here; a router with anything but plain routes (a middleware, a pattern path) is
 * entered by every request, as before. Matching is case-insensitive, as express routers' is, and on
 * the raw path, as theirs is.
 */
export function enteredOnItsPaths(router: Router): RequestHandler {
  const prefixes: string[] = [];
  for (const layer of router.stack) {
    const path: unknown = layer.route?.path;
    if (typeof path !== "string") return router;
    prefixes.push(path.split(/[:*?(){}[\]]/)[0].toLowerCase());
  }
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    if (prefixes.some((prefix) => path.startsWith(prefix))) return router(req, res, next);
    next();
  };
}
