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

/**
 * The two budgets: the API's (per API key or token, per client IP before authentication) and a signed-in
 * console session's own. A person reading the console spends many small reads (every page, the live
 * view's polling, a destination's health every few seconds): on the API's budget a morning's work ran
 * out of it, and an integration sharing the account would be refused because someone looked at a page.
 */
export type RateLimiters = { api: RateLimiterAbstract; console: RateLimiterAbstract };

/** A fixed window per credential for each budget; null when rate limiting is turned off. */
export function createRateLimiters(config: Config, store: RateLimitStore): RateLimiters | null {
  if (config.rateLimitRequests === 0) return null;
  const duration = config.rateLimitWindowSeconds;
  return {
    api: createLimiter(store, { points: config.rateLimitRequests, duration, keyPrefix: `${config.redisPrefix}:rl` }),
    console: createLimiter(store, { points: config.rateLimitConsoleRequests, duration, keyPrefix: `${config.redisPrefix}:rl-console` }),
  };
}

function createLimiter(store: RateLimitStore, options: { points: number; duration: number; keyPrefix: string }): RateLimiterAbstract {
  if ("redis" in store) return new RateLimiterRedis({ ...options, storeClient: store.redis });
  // Migration 0013 creates the table: a table made at run time would be missing from a restored schema.
  return new RateLimiterPostgres({
    ...options,
    storeClient: store.sequelize,
    storeType: "sequelize",
    tableName: "rate_limits",
    tableCreated: true,
  });
}

/** The budget a key (`rateLimitKey`) spends: a console session's own (its cookie), else the API's. */
export function limiterFor(limiters: RateLimiters, key: string): RateLimiterAbstract {
  return key.startsWith("session:") ? limiters.console : limiters.api;
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

/** Consumes one point of the request's budget for its identity and sets the X-RateLimit-* headers of docs/rest-compat.md. */
export function rateLimit(limiters: RateLimiters, logger: Logger) {
  return async (req: Request, res: Response, next: NextFunction) => {
    res.locals.rateLimitKey = rateLimitKey(res.locals.actor, clientAddress(req.ip) ?? req.ip ?? null);
    const limiter = limiterFor(limiters, res.locals.rateLimitKey);
    try {
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
