import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

const CLIENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed client X-Request-Id for correlation, otherwise mints one; echoes it back. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const offered = req.headers["x-request-id"];
  const id = typeof offered === "string" && CLIENT_ID_PATTERN.test(offered) ? offered : randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}
