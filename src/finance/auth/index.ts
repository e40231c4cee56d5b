/** What other features use of auth: the one entry into it (docs/architecture.md, feature entry files). */
export { announceAccessEnded } from "./access-ended";
export { setSessionCookie, tokenResponse } from "./auth.router";
export { hashPassword } from "./password";
export type { OpenedSession, SessionService } from "./session.service";
