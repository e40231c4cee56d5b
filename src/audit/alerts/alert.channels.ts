import nodemailer from "nodemailer";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import { PRODUCT, PRODUCT_VERSION, webhookBody, webhookHeaders } from "../delivery";
import type { AlertChannelKind } from "./alert.repository";
import type { EventSummary } from "./alert.rules";

/**
 * How an alert leaves: one message, four ways (docs/alerts.md, "Channels"). Every connection goes through the
 * outbound guard, SMTP included (nodemailer's getSocket hands it the guard's checked socket). A send
 * resolves when the receiver accepted the message and throws with the reason otherwise; the
 * dispatcher records the reason and retries.
 */
export type AlertMessage = {
  /** Firing or delivery id: the webhook-id, and what a receiver dedupes on. */
  id: string;
  ruleName: string;
  groupKey: string;
  summary: string;
  firedAt: Date;
  count: number;
  events: EventSummary[];
  test: boolean;
};

/** A channel as the sender needs it, secrets decrypted. */
export type ChannelTarget = {
  id: string;
  kind: AlertChannelKind;
  name: string;
  settings: Record<string, string>;
  secrets: Record<string, string>;
};

const ERROR_TEXT = 300;

export function subjectOf(message: AlertMessage): string {
  return `${message.test ? "[test] " : ""}[finance-gateway alert] ${message.ruleName}: ${message.summary}`;
}

export function plainTextOf(message: AlertMessage): string {
  const lines = [
    `Alert: ${message.ruleName}`,
    message.summary,
    `Group: ${message.groupKey}`,
    `Fired at: ${message.firedAt.toISOString()}`,
    `Events: ${message.count}`,
    "",
    ...message.events.map(
      (event) =>
        `- ${event.timestamp} ${event.eventType} user=${event.user ?? "-"} ip=${event.ipAddress ?? "-"}${event.country ? ` country=${event.country}` : ""}`,
    ),
  ];
  return lines.join("\n");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export function htmlOf(message: AlertMessage): string {
  const rows = message.events
    .map(
      (event) =>
        `<tr><td>${escapeHtml(event.timestamp)}</td><td>${escapeHtml(event.eventType)}</td><td>${escapeHtml(event.user ?? "-")}</td>` +
        `<td>${escapeHtml(event.ipAddress ?? "-")}</td><td>${escapeHtml(event.country ?? "")}</td></tr>`,
    )
    .join("");
  return (
    `<h1>${escapeHtml(message.ruleName)}</h1><p>${escapeHtml(message.summary)}</p>` +
    `<p>Group: <strong>${escapeHtml(message.groupKey)}</strong> · fired at ${escapeHtml(message.firedAt.toISOString())} · ${message.count} event(s)</p>` +
    `<table><thead><tr><th>Time</th><th>Event</th><th>User</th><th>IP</th><th>Country</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

/** The JSON a webhook receives as `data`. */
export function payloadOf(message: AlertMessage): Record<string, unknown> {
  return {
    id: message.id,
    rule: message.ruleName,
    group: message.groupKey,
    summary: message.summary,
    firedAt: message.firedAt.toISOString(),
    count: message.count,
    events: message.events,
    test: message.test,
  };
}

export function recipients(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

async function expect2xx(answer: { status: number; text(): string }, what: string): Promise<void> {
  if (answer.status >= 200 && answer.status < 300) return;
  const detail = answer.text().trim().slice(0, ERROR_TEXT);
  throw new Error(`${what} answered ${answer.status}${detail ? `: ${detail}` : ""}`);
}

export async function sendAlert(target: ChannelTarget, message: AlertMessage, guard: OutboundGuard): Promise<void> {
  switch (target.kind) {
    case "email":
      return sendEmail(target, message, guard);
    case "chat":
      return sendChat(target, message, guard);
    case "webhook":
      return sendWebhook(target, message, guard);
    case "sms":
      return sendSms(target, message, guard);
  }
}

async function sendEmail(target: ChannelTarget, message: AlertMessage, guard: OutboundGuard): Promise<void> {
  const { host, port, security = "starttls", from, to } = target.settings;
  const secure = security === "tls";
  const transport = nodemailer.createTransport({
    host,
    port: Number(port),
    secure,
    ignoreTLS: security === "none",
    requireTLS: security === "starttls",
    auth: target.secrets.username ? { user: target.secrets.username, pass: target.secrets.password ?? "" } : undefined,
    connectionTimeout: guard.policy.connectTimeoutMs,
    socketTimeout: guard.policy.timeoutMs,
    // The guard checks the address and makes the connection; nodemailer speaks SMTP over it.
    getSocket(_options, callback) {
      guard.connect({ host, port: Number(port), tls: secure ? {} : false }).then(
        (socket) => callback(null, { connection: socket, secured: secure }),
        (error: Error) => callback(error, false),
      );
    },
  });
  try {
    await transport.sendMail({
      from,
      to: recipients(to),
      subject: subjectOf(message),
      text: plainTextOf(message),
      html: htmlOf(message),
      headers: { "X-Alert-Id": message.id },
    });
  } finally {
    transport.close();
  }
}

async function sendChat(target: ChannelTarget, message: AlertMessage, guard: OutboundGuard): Promise<void> {
  // Slack's incoming-webhook shape; Mattermost and Rocket.Chat take the same `text`.
  const body = JSON.stringify({ text: `*${subjectOf(message)}*\n${plainTextOf(message)}` });
  const answer = await guard.request({
    method: "POST",
    url: target.secrets.url,
    headers: { "content-type": "application/json", "user-agent": `${PRODUCT}/${PRODUCT_VERSION}` },
    body,
  });
  await expect2xx(answer, "the chat webhook");
}

async function sendWebhook(target: ChannelTarget, message: AlertMessage, guard: OutboundGuard): Promise<void> {
  const now = new Date();
  const body = webhookBody(message.test ? "alert.test" : "alert.fired", now, payloadOf(message));
  const answer = await guard.request({
    method: "POST",
    url: target.settings.url,
    headers: webhookHeaders([target.secrets.secret], message.id, body, now),
    body,
  });
  await expect2xx(answer, "the webhook");
}

/** SMS bodies stay within one to three segments. */
const SMS_TEXT = 320;

async function sendSms(target: ChannelTarget, message: AlertMessage, guard: OutboundGuard): Promise<void> {
  const { baseUrl, accountSid, from, to } = target.settings;
  const url = `${baseUrl.replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
  const text = `${subjectOf(message)} (${message.count} event(s), group ${message.groupKey})`.slice(0, SMS_TEXT);
  for (const number of recipients(to)) {
    const answer = await guard.request({
      method: "POST",
      url,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${accountSid}:${target.secrets.authToken}`).toString("base64")}`,
      },
      body: new URLSearchParams({ To: number, From: from, Body: text }).toString(),
    });
    await expect2xx(answer, `the SMS gateway (to ${number})`);
  }
}
