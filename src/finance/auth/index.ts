/** What other features use of auth: the one entry into it (docs/architecture.md, feature entry files). */
export { announceAccessEnded } from "./access-ended";
export { hashPassword } from "./password";
export { setSessionCookie, tokenResponse } from "./session-answer";
export type { OpenedSession, SessionService } from "./session.service";
