import { BadRequestError } from "../../platform/common/errors";
import { expandEventTypePattern, type AuditEventName as AuditEventType } from "../log";

/**
 * Retention tiers (spec §8) and the months they act on. The database window applies to whole monthly
 * partitions; a tier says how long an event is kept in all, database and archive together, so the
 * archive of a month holds one file per tier and each file is deleted when its tier's time is up. Pure.
 */
export const TIERS = {
  standard: { retentionDays: 90, meaning: "90 days, in the database" },
  extended: { retentionDays: 365, meaning: "1 year: the database, then the archive" },
  compliance: { retentionDays: 7 * 365, meaning: "7 years, in the archive after the database window" },
} as const;

export type Tier = keyof typeof TIERS;
export const TIER_NAMES = Object.keys(TIERS) as Tier[];

export type CategoryTier = { pattern: string; tier: Tier };
export type RetentionSettings = { databaseDays: number; defaultTier: Tier; categoryTiers: CategoryTier[] };

export const MAX_CATEGORY_RULES = 50;

export function isTier(value: string): value is Tier {
  return (TIER_NAMES as string[]).includes(value);
}

/** Checks settings as a client sends them; a 400 names the unusable value. */
export function parseSettings(input: {
  databaseDays: number;
  defaultTier: string;
  categoryTiers: { pattern: string; tier: string }[];
}): RetentionSettings {
  if (!Number.isInteger(input.databaseDays) || input.databaseDays < 0 || input.databaseDays > 36500)
    throw new BadRequestError("databaseDays must be a whole number of days from 0 to 36500");
  if (!isTier(input.defaultTier)) throw new BadRequestError(`defaultTier must be one of ${TIER_NAMES.join(", ")}`);
  if (input.categoryTiers.length > MAX_CATEGORY_RULES) throw new BadRequestError(`at most ${MAX_CATEGORY_RULES} category rules`);
  const categoryTiers = input.categoryTiers.map(({ pattern, tier }) => {
    if (!expandEventTypePattern(pattern)) throw new BadRequestError(`category ${JSON.stringify(pattern.slice(0, 80))} names no event type`);
    if (!isTier(tier)) throw new BadRequestError(`tier ${JSON.stringify(tier.slice(0, 40))} is not one of ${TIER_NAMES.join(", ")}`);
    return { pattern: pattern.trim(), tier };
  });
  return { databaseDays: input.databaseDays, defaultTier: input.defaultTier, categoryTiers };
}

/** The tier of an event type: the first category rule naming it, else the default. */
export function tierResolver(settings: RetentionSettings): (eventType: string) => Tier {
  const byType = new Map<string, Tier>();
  for (const rule of [...settings.categoryTiers].reverse())
    for (const type of expandEventTypePattern(rule.pattern) ?? []) byType.set(type as AuditEventType, rule.tier);
  return (eventType) => byType.get(eventType) ?? settings.defaultTier;
}

const DAY_MS = 86_400_000;

/** `YYYY-MM` of a month's first day (a UTC date). */
export function monthLabel(month: Date): string {
  return month.toISOString().slice(0, 7);
}

export function parseMonth(label: string): Date {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(label)) throw new BadRequestError("month must be YYYY-MM");
  return new Date(`${label}-01T00:00:00Z`);
}

export function monthEnd(month: Date): Date {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
}

/** Whether every moment of `month` is older than the database window at `now`. */
export function pastDatabaseWindow(month: Date, databaseDays: number, now: Date): boolean {
  return monthEnd(month).getTime() <= now.getTime() - databaseDays * DAY_MS;
}

/** Until when a month's archive of `tier` is kept. */
export function keepUntil(month: Date, tier: Tier): Date {
  return new Date(monthEnd(month).getTime() + TIERS[tier].retentionDays * DAY_MS);
}

/** The partition name of a month, as audit_create_month_partition names it. */
export function partitionOf(month: Date): string {
  return `audit_events_y${month.getUTCFullYear()}m${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
}
