import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Short-lived download URLs for export and report files: an HMAC-SHA256 over the file's id, the user
 * it was issued to and its expiry. The download route also requires that user's credentials, so a URL
 * that leaks (a proxy log, a shared screen) is useless to anyone else, and useless to them after expiry.
 */
export type DownloadCheck = "ok" | "expired" | "invalid";

export class DownloadSigner {
  constructor(
    private readonly key: Buffer,
    private readonly ttlSeconds: number,
  ) {}

  sign(exportId: string, userId: string, now = Date.now()): { expires: number; signature: string; expiresAt: Date } {
    const expires = Math.floor(now / 1000) + this.ttlSeconds;
    return { expires, signature: this.mac(exportId, userId, expires), expiresAt: new Date(expires * 1000) };
  }

  check(exportId: string, userId: string, expires: string | undefined, signature: string | undefined, now = Date.now()): DownloadCheck {
    if (!expires || !/^\d{1,12}$/.test(expires) || !signature) return "invalid";
    const expected = Buffer.from(this.mac(exportId, userId, Number(expires)));
    const given = Buffer.from(signature);
    // A signature made for another user or file fails here, whatever its expiry says.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
    return Number(expires) * 1000 <= now ? "expired" : "ok";
  }

  private mac(exportId: string, userId: string, expires: number): string {
    return createHmac("sha256", this.key).update(`audit-export-download\n${exportId}\n${userId}\n${expires}`).digest("base64url");
  }
}
