import proxyAddr from "proxy-addr";
import { z } from "zod";
import { parseAllowlist } from "../outbound/outbound.addresses";

/** How the values of settings are read: the parsers settings.ts and audit-settings.ts share. */
export const booleanFlag = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((value) => value === "true" || value === "1" || value === "yes");

export const postgresUrl = z.string().refine((value) => /^postgres(ql)?:\/\//.test(value), "must be a postgres:// or postgresql:// URL");

export const redisUrl = z.string().refine((value) => /^rediss?:\/\//.test(value), "must be a redis:// or rediss:// URL");

/**
 * Which proxies' X-Forwarded-For to believe, as express reads it: true/false, a hop count, or
 * comma-separated addresses, CIDR ranges and the names loopback, linklocal, uniquelocal.
 */
export const trustProxy = z.string().transform((value, ctx): boolean | number | string[] => {
  if (value === "true" || value === "false") return value === "true";
  if (/^\d+$/.test(value)) return Number(value);
  const list = value.split(",").map((part) => part.trim());
  try {
    proxyAddr.compile(list);
  } catch (error) {
    ctx.addIssue({
      code: "custom",
      message: `must be true, false, a hop count, or addresses/CIDRs/loopback (${(error as Error).message})`,
    });
    return z.NEVER;
  }
  return list;
});

/** 32 random bytes, base64: the AES-256-GCM key for secrets at rest (see src/platform/security/secret-box.ts). */
export const encryptionKey = z.string().refine((value) => {
  const bytes = Buffer.from(value, "base64");
  return bytes.length === 32 && bytes.toString("base64").replace(/=+$/, "") === value.trim().replace(/=+$/, "");
}, "must be the base64 encoding of exactly 32 bytes (openssl rand -base64 32)");

/** Comma-separated hosts (`api.example.com`, `*.corp.example`) and addresses or CIDR ranges the outbound guard lets through. */
export const outboundAllowlist = z.string().transform((value, ctx): string[] => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    parseAllowlist(entries);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
  return entries;
});

/** Durations like `5s`, `2m`, `1h`, `500ms`, comma-separated: the waits before each retry of a failing delivery. */
export const durationList = z.string().transform((value, ctx): number[] => {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const parts = value.split(",").map((part) => part.trim());
  const durations = parts.map((part) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(part);
    return match ? Number(match[1]) * units[match[2]] : NaN;
  });
  if (parts.length === 0 || parts.length > 50 || durations.some((ms) => !Number.isFinite(ms) || ms > 7 * 86_400_000)) {
    ctx.addIssue({ code: "custom", message: "must be comma-separated durations such as 5s,1m,1h (each at most 7d, at most 50)" });
    return z.NEVER;
  }
  return durations;
});

export const DURATIONS = "durations (`ms`, `s`, `m`, `h`, `d`), comma-separated";

export type ChannelBudgets = Record<"email" | "chat" | "webhook" | "sms", number>;
const DEFAULT_BUDGETS: ChannelBudgets = { sms: 10, email: 60, chat: 120, webhook: 600 };

/** Alert channel send budgets: `sms=5,email=30` (kinds left out keep their default). */
export const channelBudgets = z.string().transform((value, ctx): ChannelBudgets => {
  const budgets = { ...DEFAULT_BUDGETS };
  for (const part of value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean)) {
    const match = /^(email|chat|webhook|sms)=(\d{1,6})$/.exec(part);
    const count = match ? Number(match[2]) : NaN;
    if (!match || count < 1 || count > 100_000) {
      ctx.addIssue({
        code: "custom",
        message: "must be kind=count pairs such as sms=5,email=30 (kinds email, chat, webhook, sms; count 1-100000)",
      });
      return z.NEVER;
    }
    budgets[match[1] as keyof ChannelBudgets] = count;
  }
  return budgets;
});
