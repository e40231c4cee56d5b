import type { NextFunction, Request, Response } from "express";
import type IORedis from "ioredis";
import { RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Sequelize } from "sequelize";
import { clientAddress } from "../../platform/common/audit-context";
import { RateLimitedError } from "../../platform/common/errors";
import type { Logger } from "../../platform/common/logger";
import type { Config } from "../../platform/config/config";
import type { Actor } from "../../platform/security/actor";
import { sendError } from "./respond";

/** A credential's rate-limit window as the request that asks left it (that request counted). */
export type RateLimitState = {
  limit: number;
  windowSeconds: number;
  currentCount: number;
  remaining: number;
  resetInSeconds: number;
};

export type RateLimitStore = { redis: IORedis } | { sequelize: Sequelize };

/** A fixed window per API key or token (per client IP before authentication); null when turned off. */
export function createRateLimiter(config: Config, store: RateLimitStore): RateLimiterAbstract | null {
  if (config.rateLimitRequests === 0) return null;
  const common = { points: config.rateLimitRequests, duration: config.rateLimitWindowSeconds, keyPrefix: `${config.redisPrefix}:rl` };
  if ("redis" in store) return new RateLimiterRedis({ ...common, storeClient: store.redis });
  // Migration 0013 creates the table: a table made at run time would be missing from a restored schema.
  return new RateLimiterPostgres({
    ...common,
    storeClient: store.sequelize,
    storeType: "sequelize",
    tableName: "rate_limits",
    tableCreated: true,
  });
}

/** Whose points a request spends: its credential's, or its client address's before authentication. */
export function rateLimitKey(actor: Actor | null, clientIp: string | null): string {
  return actor ? `${actor.credential.kind}:${actor.credential.id}` : `ip:${clientIp}`;
}

declare module "express-serve-static-core" {
  interface Locals {
    /** The limit as this request left it; unset when rate limiting is off or its store is down. */
    rateLimit?: RateLimitState;
    /** Whose points this request spends (`rateLimitKey`), for the GraphQL cost charge; unset when limiting is off. */
    rateLimitKey?: string;
  }
}

/** Consumes one point for the request's identity and sets the X-RateLimit-* headers of docs/rest-compat.md. */
export function rateLimit(limiter: RateLimiterAbstract, logger: Logger) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.rateLimitKey = rateLimitKey(res.locals.actor, clientAddress(req.ip) ?? req.ip ?? null);
      const state = await limiter.consume(res.locals.rateLimitKey);
      setHeaders(res, limiter.points, state);
      res.locals.rateLimit = {
        limit: limiter.points,
        windowSeconds: limiter.duration,
        currentCount: state.consumedPoints,
        remaining: Math.max(0, state.remainingPoints),
        resetInSeconds: Math.ceil(state.msBeforeNext / 1000),
      };
      next();
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) {
        // The limiter's store is down: serving without a limit beats refusing every request.
        logger.warn({ err: rejection }, "rate limiter unavailable; request let through");
        return next();
      }
      setHeaders(res, limiter.points, rejection);
      const resetInSeconds = Math.ceil(rejection.msBeforeNext / 1000);
      res.setHeader("Retry-After", String(resetInSeconds));
      sendError(
        req,
        res,
        new RateLimitedError(`Rate limit exceeded. Try again in ${resetInSeconds} seconds.`, {
          details: { limit: limiter.points, current: rejection.consumedPoints, reset_in_seconds: resetInSeconds },
        }),
      );
    }
  };
}

function setHeaders(res: Response, limit: number, state: RateLimiterRes): void {
  res.setHeader("X-RateLimit-Limit", String(limit));
  res.setHeader("X-RateLimit-Remaining", String(Math.max(0, state.remainingPoints)));
  res.setHeader("X-RateLimit-Reset", String(Math.ceil(state.msBeforeNext / 1000)));
}
