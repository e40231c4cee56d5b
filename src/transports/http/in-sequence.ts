import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * Handlers run one after the other as a single express layer. Every request went through each layer
 * of the app's stack in turn, and the router's step from one layer to the next (matching the layer's
 * path, trimming and restoring the URL's prefix) cost more than most of the handlers mounted on every
 * path. Handlers keep express' contract: one calls `next` to go on or `next(error)` to fail, a thrown
 * error or a rejected promise goes to the error handlers, and the last one's `next` leaves the layer.
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  if (handlers.length === 1) return handlers[0];
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (error?: unknown): void => {
      // An error, or one of express' own signals ("route", "router"), leaves the sequence as it would leave a layer.
      if (error) return next(error);
      if (index === handlers.length) return next();
      const handler = handlers[index++];
      try {
        const returned: unknown = handler(req, res, step);
        if (returned instanceof Promise) returned.catch((rejection: unknown) => next(rejection ?? new Error("Rejected promise")));
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
