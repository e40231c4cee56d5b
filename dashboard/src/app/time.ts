/**
 * Times in the viewer's zone, or the zone they picked (remembered). Date ranges are inclusive days in
 * that zone: "from 2026-11-01 to 2026-11-02" is from the first instant of the 1st to the last of the 2nd.
 */
const ZONE_KEY = "console.timeZone";

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export function savedZone(): string {
  const zone = localStorage.getItem(ZONE_KEY);
  return zone && isZone(zone) ? zone : browserZone();
}

export function saveZone(zone: string): void {
  if (zone === browserZone()) localStorage.removeItem(ZONE_KEY);
  else localStorage.setItem(ZONE_KEY, zone);
}

export function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function zoneChoices(): string[] {
  const all = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
  return Array.from(new Set(["UTC", browserZone(), ...all]));
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(zone, format);
  }
  return format;
}

function parts(date: Date, zone: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(date)) if (part.type !== "literal") out[part.type] = Number(part.value);
  return out;
}

/** "2026-11-25 14:03:07" in the zone. */
export function formatInZone(value: string | Date, zone: string): string {
  const p = parts(new Date(value), zone);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** The zone's offset from UTC at that instant, in milliseconds. */
function offsetAt(instant: number, zone: string): number {
  const p = parts(new Date(instant), zone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant of a wall-clock time in the zone: "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM[:SS]" (a datetime-local value). */
export function zonedInstant(local: string, zone: string): Date {
  const [day, time = "00:00"] = local.split("T");
  const [y, m, d] = day.split("-").map(Number);
  const [hours, minutes, seconds = 0] = time.split(":").map(Number);
  const guess = Date.UTC(y, m - 1, d, hours, minutes, seconds);
  let instant = guess - offsetAt(guess, zone);
  // Across a DST change the offset at the result may differ from the guess's.
  instant = guess - offsetAt(instant, zone);
  return new Date(instant);
}

/** The first instant of a calendar day (YYYY-MM-DD) in the zone. */
export function dayStart(day: string, zone: string): Date {
  return zonedInstant(day, zone);
}

/** The last millisecond of a calendar day in the zone. */
export function dayEnd(day: string, zone: string): Date {
  const [y, m, d] = day.split("-").map(Number);
  const next = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
  return new Date(dayStart(next, zone).getTime() - 1);
}

/** Today's date (YYYY-MM-DD) in the zone. */
export function todayIn(zone: string, now = new Date()): string {
  return formatInZone(now, zone).slice(0, 10);
}
