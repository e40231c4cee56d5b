import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks (standardwebhooks.com), the one way anything of the audit product posts a signed
 * message: stream destinations of kind webhook, alert channels of kind webhook, and their test sends.
 */
export const PRODUCT = "finance-gateway";
export const PRODUCT_VERSION = "0.1.0";

/** A new signing secret: `whsec_` + base64 of 32 random bytes (shown once). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` under the secret's decoded bytes. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The body of a webhook message: `{type, timestamp, data}`. */
export function webhookBody(type: string, timestamp: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: timestamp.toISOString(), data });
}

/** The headers of one attempt; during a rotation every live secret signs (space-separated). */
export function webhookHeaders(secrets: string[], id: string, body: string, now: Date = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    "content-type": "application/json",
    "user-agent": `${PRODUCT}/${PRODUCT_VERSION}`,
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((secret) => webhookSignature(secret, id, timestamp, body)).join(" "),
  };
}
