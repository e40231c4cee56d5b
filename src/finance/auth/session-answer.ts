import type { Request, Response } from "express";
import { SESSION_COOKIE } from "../../transports/http/authenticate";
import type { OpenedSession, TokenPair } from "./session.service";

/** How a signed-in session is handed to the client, by the password login and by SSO alike. */
export function tokenResponse(pair: TokenPair) {
  return { access_token: pair.accessToken, refresh_token: pair.refreshToken, token_type: pair.tokenType, expires_in: pair.expiresIn };
}

export function setSessionCookie(req: Request, res: Response, session: OpenedSession): void {
  res.cookie(SESSION_COOKIE, session.sessionSecret, {
    httpOnly: true,
    sameSite: "lax",
    secure: req.secure,
    path: "/",
    expires: session.sessionExpiresAt,
  });
}
