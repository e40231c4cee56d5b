import { DomainError, ErrorCode } from "../../platform/common/errors";
import type { CallbackFailureReason } from "./oidc-client";

/** Every way an SSO sign-in can fail, as recorded in `auth.login.failed` (or `provider.test`). */
export type SsoFailureReason =
  | CallbackFailureReason
  | "idp_error"
  | "provider_disabled"
  | "missing_email_claim"
  | "email_not_verified"
  | "domain_not_allowed"
  | "jit_disabled_no_account"
  | "user_suspended"
  | "user_deleted"
  | "identity_already_linked";

/** What kind of failure each is; the transport's edge gives it its status (400, 401, 502, 403, 409). */
const FAILURE_CODE: Record<SsoFailureReason, ErrorCode> = {
  state_mismatch: ErrorCode.BadRequest,
  idp_error: ErrorCode.Unauthenticated,
  nonce_mismatch: ErrorCode.Unauthenticated,
  invalid_id_token: ErrorCode.Unauthenticated,
  token_exchange_failed: ErrorCode.UpstreamFailed,
  provider_disabled: ErrorCode.Forbidden,
  missing_email_claim: ErrorCode.Forbidden,
  email_not_verified: ErrorCode.Forbidden,
  domain_not_allowed: ErrorCode.Forbidden,
  jit_disabled_no_account: ErrorCode.Forbidden,
  user_suspended: ErrorCode.Forbidden,
  user_deleted: ErrorCode.Forbidden,
  identity_already_linked: ErrorCode.Conflict,
};

/** What the user is told; the audit event also carries the technical detail. */
const FAILURE_MESSAGE: Record<SsoFailureReason, string> = {
  state_mismatch: "This sign-in link has expired or was opened in another browser. Start again.",
  idp_error: "The identity provider did not sign you in.",
  nonce_mismatch: "The identity provider's answer did not match this sign-in. Start again.",
  invalid_id_token: "The identity provider's answer could not be verified.",
  token_exchange_failed: "The identity provider could not complete the sign-in.",
  provider_disabled: "Sign-in with this provider is disabled.",
  missing_email_claim: "The identity provider did not share your e-mail address.",
  email_not_verified: "Your e-mail address is not verified at the identity provider.",
  domain_not_allowed: "Your e-mail domain is not allowed to sign in here.",
  jit_disabled_no_account: "There is no account for you here. Ask an administrator to create one.",
  user_suspended: "Your account has been suspended.",
  user_deleted: "Your account has been deleted.",
  identity_already_linked: "That identity is already connected to another account.",
};

/**
 * A failed SSO sign-in, link or test: recorded with its reason and detail, answered with the user's
 * message and the reason (`{"error":"sso_login_failed","reason","message"}`), never the detail.
 */
export class SsoLoginError extends DomainError {
  readonly code: ErrorCode;
  readonly restError = "sso_login_failed";
  readonly restFields: Readonly<Record<string, string>>;
  constructor(
    readonly reason: SsoFailureReason,
    readonly detail: string,
  ) {
    super(FAILURE_MESSAGE[reason]);
    this.code = FAILURE_CODE[reason];
    this.restFields = { reason };
  }
}
