import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/** scrypt parameters (N=2^15, r=8, p=1: OWASP's minimum for scrypt), stored with each hash so they can grow. */
const PARAMS = { N: 32768, r: 8, p: 1 } as const;
const KEY_LENGTH = 64;
const MAX_MEMORY = 128 * PARAMS.N * PARAMS.r * 2;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$key`, both base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64"), key.toString("base64")].join("$");
}

/** A well-formed hash of a password nobody knows: checking against it costs as much as a real check. */
const DECOY = hashPassword(randomBytes(32).toString("base64"));

/**
 * Checks a password in constant time. With no stored hash (unknown user, no local password) it
 * checks against a decoy, so the answer takes as long as for a real user.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const encoded = stored ?? (await DECOY);
  const [scheme, n, r, p, salt, key] = encoded.split("$");
  if (scheme !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64");
  const actual = await derive(password, Buffer.from(salt, "base64"), { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected) && stored !== null;
}

export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}
