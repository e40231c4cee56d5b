import { createHash, randomBytes } from "node:crypto";
import { generateSecret, generateURI, verifySync } from "otplib";
import QRCode from "qrcode";
import type { Sequelize, Transaction } from "sequelize";
import { BadRequestError, ConflictError, NotFoundError } from "../../platform/common/errors";
import type { AuditService } from "../../audit/log";
import type { Actor } from "../../platform/security/actor";
import type { SecretBox } from "../../platform/security/secret-box";
import type { OtpRow, TwoFactorRepository } from "./two-factor.repository";

/** Codes a few seconds either side of the current 30-second step are accepted (clock drift of a phone). */
const EPOCH_TOLERANCE_SECONDS = 30;
const RECOVERY_CODES = 10;
const ISSUER = "Sure";

export type TwoFactorStatus = { enabled: boolean; enabledAt: Date | null; recoveryCodesLeft: number; pending: boolean };
export type TwoFactorEnrolment = { secret: string; otpauthUri: string; qrCodeSvg: string };
/** How a second factor was proven at sign-in. */
export type SecondFactor = "totp" | "recovery_code";

function hashRecoveryCode(code: string): Buffer {
  return createHash("sha256").update(normalizeRecoveryCode(code)).digest();
}

function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, "").toLowerCase();
}

/** xxxxx-xxxxx, 50 random bits in an unambiguous alphabet. */
function newRecoveryCode(): string {
  const alphabet = "abcdefghjkmnpqrstuvwxyz23456789";
  const bytes = randomBytes(10);
  const chars = [...bytes].map((byte) => alphabet[byte % alphabet.length]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/**
 * TOTP two-factor sign-in (RFC 6238, 6 digits, 30-second steps, SHA-1 as authenticator apps expect)
 * for local accounts. The secret is sealed at rest (SecretBox); a code is accepted once (the step it
 * was used for is kept); recovery codes are stored as SHA-256 hashes (50 random bits each) and work
 * once. Enrolment starts with a pending secret the user confirms with a first code; only then is the
 * factor required at sign-in. Every change and every use is an audit event.
 */
export class TwoFactorService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly repository: TwoFactorRepository,
    private readonly audit: AuditService,
    private readonly secrets: SecretBox,
  ) {}

  async describe(userId: string): Promise<TwoFactorStatus> {
    const row = await this.row(userId);
    return {
      enabled: row.otpEnabledAt !== null,
      enabledAt: row.otpEnabledAt,
      recoveryCodesLeft: await this.repository.recoveryCodesLeft(userId),
      pending: row.otpEnabledAt === null && row.otpSecretSealed !== null,
    };
  }

  /** Starts (or restarts) an enrolment: a new pending secret, its otpauth:// URI and a QR code of it. */
  async begin(actor: Actor): Promise<TwoFactorEnrolment> {
    const row = await this.row(actor.userId);
    if (row.otpEnabledAt) throw new ConflictError("Two-factor sign-in is already on; an administrator can reset it");
    const secret = generateSecret();
    await this.repository.setPendingSecret(actor.userId, this.secrets.seal(secret));
    return this.enrolment(row.email, secret);
  }

  /** Confirms the pending secret with a code from the app: the factor is on; returns the recovery codes (shown once). */
  async confirm(actor: Actor, code: string): Promise<string[]> {
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(actor.userId, transaction, true);
      if (row.otpEnabledAt) throw new ConflictError("Two-factor sign-in is already on");
      if (!row.otpSecretSealed) throw new BadRequestError("Start the enrolment first");
      const codes = await this.confirmPending(row, code, transaction);
      if (!codes) throw new BadRequestError("The code is not valid; check the time on your phone and try the next one");
      return codes;
    });
  }

  /**
   * At a sign-in that requires a second factor the user has not set up (MFA_REQUIRED_FOR_ADMINS):
   * the pending enrolment, started now unless one is in progress (so a retried sign-in shows the same
   * QR code the user may have scanned already).
   */
  async pendingSetup(user: { id: string; email: string }, transaction: Transaction): Promise<TwoFactorEnrolment> {
    const row = await this.row(user.id, transaction, true);
    let secret = row.otpSecretSealed ? this.secrets.open(row.otpSecretSealed) : null;
    if (!secret) {
      secret = generateSecret();
      await this.repository.setPendingSecret(user.id, this.secrets.seal(secret), transaction);
    }
    return this.enrolment(row.email, secret);
  }

  /** A sign-in's first code for the pending secret: turns the factor on; the recovery codes, or null when the code is wrong. */
  async confirmAtSignIn(user: { id: string; email: string }, code: string, transaction: Transaction): Promise<string[] | null> {
    const row = await this.row(user.id, transaction, true);
    if (row.otpEnabledAt || !row.otpSecretSealed) return null;
    return this.confirmPending(row, code, transaction);
  }

  private async confirmPending(row: OtpRow, code: string, transaction: Transaction): Promise<string[] | null> {
    const step = /^\d{6}$/.test(code.trim()) ? this.check(row, code) : null;
    if (step === null) return null;
    await this.repository.enable(row.id, step, transaction);
    const codes = await this.replaceRecoveryCodes(row.id, transaction);
    await this.audit.record(transaction, {
      type: "auth.mfa.enrolled",
      user: { id: row.id, email: row.email },
      action: "enroll",
      resource: { type: "user", id: row.id, label: row.email },
      changes: { mfa: { old: false, new: true }, recovery_codes: { old: null, new: codes.length } },
    });
    return codes;
  }

  private async enrolment(email: string, secret: string): Promise<TwoFactorEnrolment> {
    const otpauthUri = generateURI({ issuer: ISSUER, label: email, secret });
    const qrCodeSvg = await QRCode.toString(otpauthUri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
    return { secret, otpauthUri, qrCodeSvg };
  }

  /** An administrator turns a user's second factor off (a lost phone): the user enrols again. */
  async reset(admin: Actor, userId: string): Promise<void> {
    await this.sequelize.transaction(async (transaction) => {
      const row = await this.row(userId, transaction, true);
      await this.repository.clear(userId, transaction);
      await this.audit.record(transaction, {
        type: "auth.mfa.reset",
        severity: "warning",
        user: { id: admin.userId, email: admin.email },
        action: "reset",
        resource: { type: "user", id: userId, label: row.email },
        changes: { mfa: { old: row.otpEnabledAt !== null, new: false } },
      });
    });
  }

  /** Whether the user must give a second factor at a password sign-in. */
  async enabledFor(userId: string, transaction: Transaction): Promise<boolean> {
    return (await this.row(userId, transaction)).otpEnabledAt !== null;
  }

  /**
   * Checks a sign-in's second factor inside the login's transaction (the user row is locked there):
   * a current TOTP code not used before, or an unused recovery code. Records the use; null when wrong.
   */
  async verifyAtSignIn(user: { id: string; email: string }, code: string, transaction: Transaction): Promise<SecondFactor | null> {
    const row = await this.row(user.id, transaction, true);
    if (!row.otpEnabledAt) return null;
    const step = /^\d{6}$/.test(code.trim()) ? this.check(row, code.trim()) : null;
    if (step !== null) {
      await this.repository.recordStep(user.id, step, transaction);
      await this.audit.record(transaction, {
        type: "auth.mfa.verified",
        user,
        action: "totp",
        resource: { type: "user", id: user.id, label: user.email },
      });
      return "totp";
    }
    if (!(await this.repository.useRecoveryCode(user.id, hashRecoveryCode(code), transaction))) return null;
    await this.audit.record(transaction, {
      type: "auth.mfa.recovery_code_used",
      severity: "warning",
      user,
      action: "recovery_code",
      resource: { type: "user", id: user.id, label: user.email },
    });
    return "recovery_code";
  }

  /** The time step a code is valid for, or null (wrong, or that step's code was already used). */
  private check(row: OtpRow, code: string): number | null {
    const secret = this.secrets.open(row.otpSecretSealed!);
    const lastStep = row.otpLastStep === null ? undefined : Number(row.otpLastStep);
    const result = verifySync({ secret, token: code.trim(), epochTolerance: EPOCH_TOLERANCE_SECONDS, afterTimeStep: lastStep });
    return result.valid && "timeStep" in result ? result.timeStep : null;
  }

  private async replaceRecoveryCodes(userId: string, transaction: Transaction): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    await this.repository.replaceRecoveryCodes(userId, codes.map(hashRecoveryCode), transaction);
    return codes;
  }

  private async row(userId: string, transaction?: Transaction, lock = false): Promise<OtpRow> {
    const row = await this.repository.row(userId, transaction, lock);
    if (!row) throw new NotFoundError("User not found");
    return row;
  }
}
