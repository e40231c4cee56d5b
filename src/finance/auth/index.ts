/** What other features use of auth: the one entry into it (docs/architecture.md, feature entry files). */
export { announceAccessEnded } from "./access-ended";
export { setSessionCookie, tokenResponse } from "./session-answer";
export { hashPassword } from "./password";
export type { OpenedSession, SessionService } from "./session.service";
