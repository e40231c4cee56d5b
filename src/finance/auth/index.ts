/** What other features use of auth: the one entry into it (docs/architecture.md, feature entry files). */
export { announceAccessEnded } from "./access-ended";
export { hashPassword } from "./password";
export { setSessionCookie, tokenResponse } from "./session-answer";
export { deviceChanges } from "./session.service";
export type { DeviceInfo, OpenedSession, SessionService } from "./session.service";
export { checkDevice, mobileTokens, SureAuthError, MfaRequiredError } from "./auth-answers";
