import { DomainError, ErrorCode } from "../../platform/common/errors";
import { tokenResponse } from "./session-answer";
import type { DeviceInfo, TokenPair } from "./session.service";

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

/** The token response of upstream's mobile endpoints: RFC 6749's fields and `created_at` (seconds). */
export function mobileTokens(pair: TokenPair) {
  return { ...tokenResponse(pair), created_at: Math.floor(Date.now() / 1000) };
}

export function checkDevice(device: unknown): DeviceInfo {
  const fields = ["device_id", "device_name", "device_type", "os_version", "app_version"] as const;
  const value = (typeof device === "object" && device !== null ? device : {}) as Record<string, unknown>;
  const missing = fields.some((name) => typeof value[name] !== "string" || value[name] === "" || (value[name] as string).length > 200);
  if (missing) throw new SureAuthError(ErrorCode.BadRequest, "Device information is required");
  return Object.fromEntries(fields.map((name) => [name, value[name]])) as DeviceInfo;
}
