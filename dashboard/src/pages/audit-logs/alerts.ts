import type { AuditEvent } from "./use-audit-log";

/** Security events that sound an alert (spec: failed logins, token revocations, suspensions, provider deletions). */
export const SOUNDING_TYPES = new Set(["auth.login.failed", "auth.token.revoked", "user.suspended", "provider.deleted"]);

const NOTIFY_KEY = "console.notifyCritical";
const SOUND_KEY = "console.soundSecurity";

export const alertSettings = {
  notify: () => localStorage.getItem(NOTIFY_KEY) === "on",
  sound: () => localStorage.getItem(SOUND_KEY) === "on",
  setNotify: (on: boolean) => localStorage.setItem(NOTIFY_KEY, on ? "on" : "off"),
  setSound: (on: boolean) => localStorage.setItem(SOUND_KEY, on ? "on" : "off"),
};

/** Asks for the permission once, from the click that turns notifications on (browsers refuse it otherwise). */
export async function enableNotifications(): Promise<boolean> {
  if (!("Notification" in window)) return false;
  const permission = Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
  return permission === "granted";
}

let audio: AudioContext | null = null;

/** A short two-tone beep, synthesised: no sound file to fetch. */
function beep(): void {
  audio ??= new AudioContext();
  const now = audio.currentTime;
  for (const [offset, frequency] of [
    [0, 880],
    [0.15, 660],
  ]) {
    const oscillator = audio.createOscillator();
    const gain = audio.createGain();
    oscillator.frequency.value = frequency;
    gain.gain.setValueAtTime(0.15, now + offset);
    gain.gain.exponentialRampToValueAtTime(0.001, now + offset + 0.12);
    oscillator.connect(gain).connect(audio.destination);
    oscillator.start(now + offset);
    oscillator.stop(now + offset + 0.13);
  }
}

/** Alerts for events that just arrived live. */
export function alertFor(events: AuditEvent[]): void {
  if (alertSettings.notify() && "Notification" in window && Notification.permission === "granted") {
    for (const event of events.filter((candidate) => candidate.severity === "critical")) {
      new Notification(`Critical audit event: ${event.eventType}`, {
        body: [event.user?.email, event.ipAddress, event.error].filter(Boolean).join(" · "),
        tag: event.id,
      });
    }
  }
  if (alertSettings.sound() && events.some((event) => SOUNDING_TYPES.has(event.eventType))) beep();
}
