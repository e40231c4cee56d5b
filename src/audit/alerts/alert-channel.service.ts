import type { Sequelize, Transaction } from "sequelize";
import { diffChanges, type Changes } from "../log";
import type { AuditService } from "../log";
import { BadRequestError, NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { checkNoControlCharacters, requiredText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import type { SecretBox } from "../../platform/security/secret-box";
import { newWebhookSecret } from "../delivery";
import { recipients, sendAlert } from "./alert.channels";
import { targetOf } from "./alert.dispatcher";
import type { AlertChannelKind, AlertChannelRow, AlertRepository } from "./alert.repository";

export const CHANNEL_KINDS: AlertChannelKind[] = ["email", "chat", "webhook", "sms"];
/** Per kind: settings it takes (true = required) and credentials (true = required on create). */
const CHANNEL_FIELDS: Record<AlertChannelKind, { settings: Record<string, boolean>; credentials: Record<string, boolean> }> = {
  email: { settings: { host: true, port: true, security: false, from: true, to: true }, credentials: { username: false, password: false } },
  chat: { settings: {}, credentials: { url: true } },
  webhook: { settings: { url: true }, credentials: {} },
  sms: { settings: { baseUrl: false, accountSid: true, from: true, to: true }, credentials: { authToken: true } },
};
export const DEFAULT_SMS_BASE_URL = "https://api.twilio.com";
const EMAIL = /^[^\s@<>,]+@[^\s@<>,]+$/;
const PHONE = /^\+[1-9]\d{6,14}$/;
const MAX_RECIPIENTS = 20;
export type ChannelInput = {
  kind?: string | null;
  name?: string | null;
  enabled?: boolean | null;
  settings?: Record<string, string> | null;
  /** Write-only: stored encrypted, never returned. Omitted on update: the stored ones stay. */
  credentials?: Record<string, string> | null;
};

export type ChannelView = Omit<AlertChannelRow, "secretsEncrypted"> & { credentialNames: string[] };
/** A created webhook channel's signing secret is in this answer and nowhere else. */
export type ChannelWithSecret = { channel: ChannelView; secret: string | null };
export type ChannelTestResult = { ok: boolean; latencyMs: number; error: string | null };

/**
 * Administration of alert channels: configuration audited in the transaction of the change, secrets
 * sealed and redacted, and "send test", which goes the way a firing's alert goes.
 */
export class AlertChannelService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly alerts: AlertRepository,
    private readonly audit: AuditService,
    private readonly secrets: SecretBox,
    private readonly guard: OutboundGuard,
  ) {}

  async channels(): Promise<ChannelView[]> {
    return (await this.alerts.listChannels()).map((row) => this.view(row));
  }

  async createChannel(actor: Actor, input: ChannelInput): Promise<ChannelWithSecret> {
    const kind = input.kind as AlertChannelKind;
    if (!CHANNEL_KINDS.includes(kind)) throw new BadRequestError(`kind must be one of ${CHANNEL_KINDS.join(", ")}`);
    const checked = await this.validateChannel(kind, input, null);
    const secret = kind === "webhook" ? newWebhookSecret() : null;
    const credentials = secret ? { secret } : checked.credentials;
    const row = await this.sequelize.transaction(async (transaction) => {
      const saved = await this.alerts.saveChannel(
        {
          id: newId(),
          kind,
          name: checked.name,
          settings: checked.settings,
          secretsEncrypted: this.secrets.seal(JSON.stringify(credentials)),
          enabled: checked.enabled,
        },
        transaction,
      );
      await this.recordChannel(
        transaction,
        actor,
        saved,
        "alert.channel.created",
        "create",
        diffChanges({}, channelState(saved, credentials)),
      );
      return saved;
    });
    return { channel: this.view(row), secret };
  }

  async updateChannel(actor: Actor, id: string, input: ChannelInput): Promise<ChannelView> {
    const current = await this.findChannel(id);
    if (input.kind && input.kind !== current.kind) throw new BadRequestError("kind cannot change; create a new channel");
    const checked = await this.validateChannel(current.kind, input, current);
    const row = await this.sequelize.transaction(async (transaction) => {
      const locked = (await this.alerts.getChannel(id, transaction))!;
      const before = this.credentialsOf(locked);
      const next = { ...locked, name: checked.name, settings: checked.settings, enabled: checked.enabled };
      const changes = diffChanges(channelState(locked, before), channelState(next, checked.credentials));
      if (Object.keys(changes).length === 0) return locked;
      const saved = await this.alerts.saveChannel(
        { ...next, secretsEncrypted: this.secrets.seal(JSON.stringify(checked.credentials)) },
        transaction,
      );
      await this.recordChannel(transaction, actor, saved, "alert.channel.updated", "update", changes);
      return saved;
    });
    return this.view(row);
  }

  async deleteChannel(actor: Actor, id: string): Promise<ChannelView> {
    const current = await this.findChannel(id);
    await this.sequelize.transaction(async (transaction) => {
      const locked = (await this.alerts.getChannel(id, transaction))!;
      await this.alerts.deleteChannel(id, transaction);
      await this.recordChannel(
        transaction,
        actor,
        locked,
        "alert.channel.deleted",
        "delete",
        diffChanges(channelState(locked, this.credentialsOf(locked)), {}),
      );
    });
    return this.view(current);
  }

  /** Sends a test alert now, as a firing would go; the result is answered and audited (alert.channel.tested). */
  async testChannel(actor: Actor, id: string): Promise<ChannelTestResult> {
    const channel = await this.findChannel(id);
    const started = performance.now();
    let error: string | null = null;
    try {
      await sendAlert(
        targetOf(channel, this.secrets),
        {
          id: newId(),
          ruleName: "Test alert",
          groupKey: "test",
          summary: `a test from ${actor.email} for channel ${channel.name}`,
          firedAt: new Date(),
          count: 0,
          events: [],
          test: true,
        },
        this.guard,
      );
    } catch (caught) {
      error = ((caught as Error).message || String(caught)).slice(0, 500);
    }
    const result = { ok: error === null, latencyMs: Math.round(performance.now() - started), error };
    await this.sequelize.transaction((transaction) =>
      this.audit.record(transaction, {
        type: "alert.channel.tested",
        actor,
        action: "test",
        resource: { type: "alert_channel", id: channel.id, label: channel.name },
        error,
      }),
    );
    return result;
  }

  private async findChannel(id: string): Promise<AlertChannelRow> {
    const row = isUuid(id) ? await this.alerts.getChannel(id) : null;
    if (!row) throw new NotFoundError("Alert channel");
    return row;
  }

  private credentialsOf(row: AlertChannelRow): Record<string, string> {
    return JSON.parse(this.secrets.open(row.secretsEncrypted)) as Record<string, string>;
  }

  private view(row: AlertChannelRow): ChannelView {
    const { secretsEncrypted, ...rest } = row;
    return { ...rest, credentialNames: Object.keys(JSON.parse(this.secrets.open(secretsEncrypted)) as object).sort() };
  }

  private async validateChannel(kind: AlertChannelKind, input: ChannelInput, current: AlertChannelRow | null) {
    const problems = new ValidationErrors();
    const fields = CHANNEL_FIELDS[kind];
    const name = requiredText(problems, "Name", input.name ?? current?.name, 100);
    checkNoControlCharacters(problems, "Name", name);
    const settings: Record<string, string> = { ...(current?.settings ?? {}) };
    for (const [key, value] of Object.entries(input.settings ?? {})) {
      if (!(key in fields.settings))
        problems.add(`Setting ${key} is not one ${kind} takes (${Object.keys(fields.settings).join(", ") || "none"})`);
      else if (typeof value !== "string" || value.length > 2048) problems.add(`Setting ${key} must be text up to 2048 characters`);
      else if (!checkNoControlCharacters(problems, `Setting ${key}`, value.trim())) continue;
      else if (value.trim() === "") delete settings[key];
      else settings[key] = value.trim();
    }
    if (kind === "sms") settings.baseUrl ??= DEFAULT_SMS_BASE_URL;
    if (kind === "email") settings.security ??= "starttls";
    for (const [key, required] of Object.entries(fields.settings))
      if (required && !settings[key]) problems.add(`Setting ${key} is required for ${kind}`);
    const credentials: Record<string, string> = current ? this.credentialsOf(current) : {};
    for (const [key, value] of Object.entries(input.credentials ?? {})) {
      if (!(key in fields.credentials))
        problems.add(`Credential ${key} is not one ${kind} takes (${Object.keys(fields.credentials).join(", ") || "none"})`);
      else if (typeof value !== "string" || value.length > 4096) problems.add(`Credential ${key} must be text up to 4096 characters`);
      else if (!checkNoControlCharacters(problems, `Credential ${key}`, value)) continue;
      else if (value === "") delete credentials[key];
      else credentials[key] = value;
    }
    for (const [key, required] of Object.entries(fields.credentials))
      if (required && !credentials[key]) problems.add(`Credential ${key} is required for ${kind}`);
    if (problems.empty) await this.checkChannel(kind, settings, credentials, problems);
    problems.throwIfAny();
    return { name, settings, credentials, enabled: input.enabled ?? current?.enabled ?? true };
  }

  /** Kind-specific checks: addresses the outbound guard accepts, recipients that are addresses or numbers. */
  private async checkChannel(
    kind: AlertChannelKind,
    settings: Record<string, string>,
    credentials: Record<string, string>,
    problems: ValidationErrors,
  ): Promise<void> {
    const urlProblem = async (label: string, url: string) => {
      const problem = await this.guard.urlProblem(url);
      if (problem) problems.add(`${label} ${problem}`);
    };
    const list = (label: string, value: string, pattern: RegExp, what: string) => {
      const items = recipients(value);
      if (items.length === 0 || items.length > MAX_RECIPIENTS) problems.add(`Setting ${label} must name 1 to ${MAX_RECIPIENTS} ${what}`);
      for (const item of items.slice(0, MAX_RECIPIENTS))
        if (!pattern.test(item)) problems.add(`Setting ${label}: ${JSON.stringify(item.slice(0, 100))} is not ${what}`);
    };
    if (kind === "email") {
      const port = Number(settings.port);
      if (!Number.isInteger(port) || port < 1 || port > 65535) problems.add("Setting port must be a TCP port (1-65535)");
      else {
        try {
          await this.guard.checkHost(settings.host, port);
        } catch (error) {
          problems.add(`Setting host ${(error as Error).message}`);
        }
      }
      if (!["none", "starttls", "tls"].includes(settings.security)) problems.add("Setting security must be none, starttls or tls");
      if (!EMAIL.test(settings.from)) problems.add("Setting from must be an e-mail address");
      list("to", settings.to, EMAIL, "e-mail addresses");
    } else if (kind === "chat") await urlProblem("Credential url", credentials.url);
    else if (kind === "webhook") await urlProblem("Setting url", settings.url);
    else if (kind === "sms") {
      await urlProblem("Setting baseUrl", settings.baseUrl);
      if (!/^[A-Za-z0-9]{1,64}$/.test(settings.accountSid)) problems.add("Setting accountSid must be letters and digits");
      if (!PHONE.test(settings.from) && !/^[A-Za-z0-9]{1,11}$/.test(settings.from))
        problems.add("Setting from must be an E.164 number or an alphanumeric sender id");
      list("to", settings.to, PHONE, "E.164 phone numbers");
    }
  }

  private async recordChannel(
    transaction: Transaction,
    actor: Actor,
    channel: AlertChannelRow,
    type: "alert.channel.created" | "alert.channel.updated" | "alert.channel.deleted",
    action: string,
    changes: Changes,
  ): Promise<void> {
    await this.audit.record(transaction, {
      type,
      actor,
      action,
      resource: { type: "alert_channel", id: channel.id, label: channel.name },
      changes,
    });
  }
}

/** Credentials appear by name only: each field is named so diffChanges redacts its values. */
function channelState(row: Pick<AlertChannelRow, "kind" | "name" | "settings" | "enabled">, credentials: Record<string, string>) {
  return {
    kind: row.kind,
    name: row.name,
    enabled: row.enabled,
    settings: row.settings,
    ...Object.fromEntries(Object.entries(credentials).map(([key, value]) => [/secret|token/i.test(key) ? key : `${key}Secret`, value])),
  };
}
