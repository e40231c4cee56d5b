import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../../platform/common/logger";

/**
 * One line per finished request at info: method, path (without the query string, which may carry
 * search terms), status, time and request id. No headers: they hold credentials and flood a terminal;
 * `LOG_LEVEL=debug` adds the client address and user agent.
 */
export function requestLog(logger: Logger) {
  const debug = logger.isLevelEnabled("debug");
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once("finish", () => {
      const ms = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
      const path = req.originalUrl.split("?")[0];
      const line = { method: req.method, path, status: res.statusCode, ms, requestId: res.locals.requestId as string };
      const level = res.statusCode >= 500 ? "error" : "info";
      logger[level](
        debug ? { ...line, ip: req.ip, userAgent: req.get("user-agent") } : line,
        `${req.method} ${path} ${res.statusCode} ${ms.toFixed(1)}ms [${line.requestId}]`,
      );
    });
    next();
  };
}
