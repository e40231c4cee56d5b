import type { Sequelize } from "sequelize";
import { type DomainError, UnauthenticatedError } from "../../platform/common/errors";
import type { AuditService } from "../../audit/log";
import type { AuthRepository } from "./auth.repository";
import { MfaRequiredError, MfaSetupRequiredError } from "./auth-answers";
import { verifyPassword } from "./password";
import { deviceChanges, type DeviceInfo, type OpenedSession, type SessionService } from "./session.service";
import type { TwoFactorService } from "./two-factor.service";

export type LoginSettings = { maxFailures: number; lockoutSeconds: number; mfaRequiredForAdmins: boolean };

export type LoginOptions = {
  /** The second factor: a TOTP code or a recovery code (upstream's `otp_code`). */
  otpCode?: string | null;
  /** The mobile or CLI client's `device` object, kept on the session and in the audit events. */
  device?: DeviceInfo | null;
  /** The console asks: an administrator who must set up a second factor gets its QR code in the refusal. */
  offerSetup?: boolean;
  /** Linking an SSO identity from the app (sso_link): accounts with two-factor sign-in are refused, as upstream. */
  refuseMfa?: boolean;
};

/** A signed-in session, and the recovery codes when this sign-in turned two-factor on (shown once). */
export type LoginResult = OpenedSession & { recoveryCodes: string[] | null };

/** One answer for every failed attempt, so the response never tells which e-mails have accounts. */
export const INVALID_LOGIN = "Invalid email or password";

/**
 * Local sign-in with an e-mail and password, and a TOTP code when the account has two-factor sign-in
 * (or must have it: MFA_REQUIRED_FOR_ADMINS). Each attempt is recorded, failures included; wrong
 * passwords and wrong codes alike count toward the account's lockout.
 */
export class LoginService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: AuthRepository,
    private readonly audit: AuditService,
    private readonly sessions: SessionService,
    private readonly twoFactor: TwoFactorService,
    private readonly settings: LoginSettings,
  ) {}

  async login(email: string, password: string, options: LoginOptions = {}): Promise<LoginResult> {
    // A failed attempt commits its audit event (and failure count) and then answers 401.
    const outcome = await this.sequelize.transaction(async (transaction): Promise<LoginResult | DomainError> => {
      const user = await this.repository.loginUser(email, transaction);
      const passwordMatches = await verifyPassword(password, user?.passwordHash ?? null);
      const fail = async (reason: string, error: DomainError = new UnauthenticatedError(INVALID_LOGIN)) => {
        await this.audit.record(transaction, {
          type: "auth.login.failed",
          user: { id: user?.id ?? null, email: user?.email ?? email.trim().toLowerCase().slice(0, 320) },
          action: "login",
          error: reason,
        });
        return error;
      };
      const countFailure = (id: string) =>
        this.repository.recordFailedLogin(id, this.settings.maxFailures, this.settings.lockoutSeconds, transaction);
      if (!user) return fail("unknown_user");
      if (user.lockedUntil && user.lockedUntil > new Date()) return fail("account_locked");
      if (!passwordMatches) {
        const locked = await countFailure(user.id);
        return fail(locked ? "invalid_password; account locked" : "invalid_password");
      }
      if (user.status !== "active") return fail("account_inactive", new UnauthenticatedError("Your account has been deactivated"));
      const identity = { id: user.id, email: user.email };
      const otpCode = options.otpCode?.trim() || null;
      let recoveryCodes: string[] | null = null;
      if (await this.twoFactor.enabledFor(user.id, transaction)) {
        if (options.refuseMfa) return fail("mfa_required", new MfaRequiredError("MFA users should sign in with email and password"));
        if (!otpCode) return fail("mfa_required", new MfaRequiredError());
        if (!(await this.twoFactor.verifyAtSignIn(identity, otpCode, transaction))) {
          const locked = await countFailure(user.id);
          return fail(locked ? "invalid_otp_code; account locked" : "invalid_otp_code", new MfaRequiredError());
        }
      } else if (user.role === "admin" && this.settings.mfaRequiredForAdmins) {
        const setup = await this.twoFactor.pendingSetup(identity, transaction);
        const offered = options.offerSetup ? { secret: setup.secret, otpauth_uri: setup.otpauthUri, qr_code_svg: setup.qrCodeSvg } : null;
        if (!otpCode) return fail("mfa_setup_required", new MfaSetupRequiredError(offered));
        recoveryCodes = await this.twoFactor.confirmAtSignIn(identity, otpCode, transaction);
        if (!recoveryCodes) {
          const locked = await countFailure(user.id);
          return fail(locked ? "invalid_otp_code; account locked" : "invalid_otp_code", new MfaSetupRequiredError(offered));
        }
      }
      await this.repository.clearFailedLogins(user.id, transaction);
      const session = await this.sessions.open(transaction, identity, { method: "password", device: options.device ?? null });
      await this.audit.record(transaction, {
        type: "auth.login.success",
        user: identity,
        action: "login",
        sessionId: session.sessionId,
        resource: { type: "session", id: session.sessionId, label: "password" },
        changes: deviceChanges(options.device ?? null),
      });
      return { ...session, recoveryCodes };
    });
    if (!("sessionId" in outcome)) throw outcome;
    return outcome;
  }

  /** The `user` of upstream's mobile token responses (the app's User model needs id, email, ui_layout, ai_enabled). */
  async mobileUser(userId: string): Promise<MobileUser> {
    const row = await this.repository.profile(userId);
    if (!row) throw new UnauthenticatedError();
    const [first, ...rest] = (row.name ?? "").trim().split(/\s+/);
    return {
      id: row.id,
      email: row.email,
      first_name: first || null,
      last_name: rest.join(" ") || null,
      ui_layout: "dashboard",
      ai_enabled: row.aiEnabled,
    };
  }
}

export type MobileUser = {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  ui_layout: "dashboard";
  ai_enabled: boolean;
};
