import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config/config";

/**
 * Secrets at rest (provider API keys, SimpleFIN access URLs, …): AES-256-GCM with a random 96-bit IV
 * per value and its 128-bit auth tag, so a tampered or mis-keyed value fails loudly instead of
 * decrypting to garbage. Format: `v1:<iv b64>:<tag b64>:<ciphertext b64>`; the version prefix lets a
 * later key rotation or algorithm change read old values.
 */
const VERSION = "v1";
const IV_BYTES = 12;
const KEY_FILE = "encryption-key";

/** Where the generated key lives when ENCRYPTION_KEY is unset. */
export function encryptionKeyFile(dataDir: string): string {
  return path.join(dataDir, KEY_FILE);
}

/**
 * The key in use, without generating one (backups read it): ENCRYPTION_KEY, or DATA_DIR/encryption-key;
 * null when neither exists yet.
 */
export function currentEncryptionKey(config: Pick<Config, "encryptionKey" | "dataDir">): { key: Buffer; source: string } | null {
  if (config.encryptionKey) return { key: Buffer.from(config.encryptionKey, "base64"), source: "ENCRYPTION_KEY" };
  const file = encryptionKeyFile(config.dataDir);
  if (!fs.existsSync(file)) return null;
  return { key: Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64"), source: file };
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("SecretBox needs a 32-byte key");
    this.key = key;
  }

  /**
   * The key from ENCRYPTION_KEY, or else the one in DATA_DIR/encryption-key, generated there (mode
   * 0600) the first time. Every process sharing DATA_DIR reads the same file; the exclusive create
   * makes concurrent first boots agree on one key.
   */
  static fromConfig(config: Pick<Config, "encryptionKey" | "dataDir">): SecretBox {
    if (config.encryptionKey) return new SecretBox(Buffer.from(config.encryptionKey, "base64"));
    const file = path.join(config.dataDir, KEY_FILE);
    fs.mkdirSync(config.dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, randomBytes(32).toString("base64") + "\n", { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${file} does not hold a base64 32-byte key; fix it or set ENCRYPTION_KEY`);
    return new SecretBox(key);
  }

  /** A key for another purpose (signing download URLs, say), derived with HKDF so the master key itself never signs anything. */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync("sha256", this.key, Buffer.alloc(0), `finance-gateway:${purpose}`, 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [VERSION, iv.toString("base64"), cipher.getAuthTag().toString("base64"), ciphertext.toString("base64")].join(":");
  }

  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split(":");
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error("not a sealed secret of a known version");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64")), decipher.final()]).toString("utf8");
  }
}
