import { DomainError, ErrorCode } from "../../platform/common/errors";

/**
 * Refusals on upstream's `/api/v1/auth/*` routes, answered as upstream (we-promise/sure's
 * Api::V1::AuthController) does: the human message in `error` (the mobile app shows that field), with
 * the flags its clients read (`mfa_required`). Our REST body adds `message`, the same text.
 */
export class SureAuthError extends DomainError {
  readonly restFields?: Readonly<Record<string, string | boolean>>;
  constructor(
    readonly code: ErrorCode,
    readonly restError: string,
    options: { message?: string; fields?: Record<string, string | boolean>; details?: Record<string, unknown> } = {},
  ) {
    super(options.message ?? restError, { details: options.details });
    this.restFields = options.fields;
  }
}

/** Right password, but the account has two-factor sign-in: send `otp_code` (401 with `mfa_required: true`, as upstream). */
export class MfaRequiredError extends SureAuthError {
  constructor(message = "Two-factor authentication required") {
    super(ErrorCode.Unauthenticated, message, { fields: { mfa_required: true } });
  }
}

/**
 * Right password, but MFA_REQUIRED_FOR_ADMINS and this administrator has no second factor yet. A
 * pending enrolment was started: the console shows its QR code (in `details`) and signs in with the
 * first code, which turns the factor on.
 */
export class MfaSetupRequiredError extends SureAuthError {
  constructor(setup: Record<string, unknown> | null) {
    super(ErrorCode.Forbidden, "Two-factor authentication setup required", {
      message: setup
        ? "Two-factor authentication setup required: scan the QR code, then sign in with its code"
        : "Two-factor authentication setup required: sign in on the web console once to set it up",
      fields: { mfa_setup_required: true },
      details: setup ?? undefined,
    });
  }
}
