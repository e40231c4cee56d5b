import { randomUUID } from "node:crypto";
import type { Sequelize, Transaction } from "sequelize";
import { expandEventTypePattern } from "../log";
import { diffChanges, REDACTED, type Changes } from "../log";
import type { AuditService } from "../log";
import { BadRequestError, NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { optionalText, requiredText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import type { SecretBox } from "../../platform/security/secret-box";
import { consumerIdOf, type DestinationHandler } from "./destination.handler";
import { newWebhookSecret, webhookBody, webhookHeaders } from "./stream.formats";
import { createSender } from "./stream.senders";
import type {
  ConsumerRepository,
  ConsumerRow,
  DeliveryRow,
  DestinationKind,
  DestinationRepository,
  DestinationRow,
} from "./stream.repository";

export type { DestinationKind };

export const DESTINATION_KINDS: DestinationKind[] = ["webhook", "splunk", "elastic", "datadog", "sentinel", "qradar", "arcsight"];

/**
 * Per platform: the non-secret settings it takes (required ones marked) and the credentials it needs.
 * Webhooks get a generated `whsec_` secret instead of a credential.
 */
const PLATFORM: Record<DestinationKind, { settings: Record<string, boolean>; credentials: string[]; syslog?: boolean }> = {
  webhook: { settings: {}, credentials: [] },
  splunk: { settings: { index: false, sourcetype: false, source: false, host: false }, credentials: ["token"] },
  elastic: { settings: { index: false }, credentials: ["apiKey"] },
  datadog: { settings: { service: false, tags: false, hostname: false }, credentials: ["apiKey"] },
  sentinel: {
    settings: { tenantId: true, clientId: true, dcrImmutableId: true, streamName: true, authorityUrl: false },
    credentials: ["clientSecret"],
  },
  qradar: { settings: { caCertificate: false }, credentials: [], syslog: true },
  arcsight: { settings: { caCertificate: false }, credentials: [], syslog: true },
};

/** What each kind takes, for the API's forms: the PLATFORM table as data. */
export function destinationKinds() {
  return DESTINATION_KINDS.map((kind) => ({
    kind,
    settings: Object.entries(PLATFORM[kind].settings).map(([name, required]) => ({ name, required })),
    credentials: PLATFORM[kind].credentials,
    syslog: PLATFORM[kind].syslog ?? false,
  }));
}

export type DestinationInput = {
  kind?: DestinationKind | null;
  name?: string | null;
  description?: string | null;
  url?: string | null;
  eventTypes?: string[] | null;
  enabled?: boolean | null;
  settings?: Record<string, unknown> | null;
  /** Write-only: stored encrypted, never returned. Omitted on update: the stored ones stay. */
  credentials?: Record<string, unknown> | null;
};

export type DestinationHealth = {
  position: string;
  head: string;
  /** Events recorded and linked but not yet handled by this destination (head − position). */
  lag: string;
  paused: boolean;
  failing: boolean;
  failures: number;
  nextAttemptAt: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastError: string | null;
};

export type DestinationView = Omit<DestinationRow, "secretsEncrypted" | "previousSecretsEncrypted"> & {
  /** Names of the credentials stored (their values are never returned). */
  credentialNames: string[];
  rotationOverlapUntil: Date | null;
  health: DestinationHealth;
};

/** A created webhook or a rotated secret: the secret is in this answer and nowhere else, ever. */
export type DestinationWithSecret = { destination: DestinationView; secret: string | null };

export type TestResult = { ok: boolean; status: number | null; latencyMs: number; error: string | null };

const MAX_EVENT_TYPES = 100;
const MAX_URL = 2048;
const MAX_SETTING = 16_384;
const DEFAULT_OVERLAP_SECONDS = 24 * 60 * 60;
const MAX_OVERLAP_SECONDS = 7 * 24 * 60 * 60;

/**
 * Administration of audit stream destinations: configuration (audited, secrets redacted), pause and
 * resume, replay from a sequence or a time, test events, health and the delivery log.
 */
export class StreamDestinationService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly destinations: DestinationRepository,
    private readonly consumers: ConsumerRepository,
    private readonly handler: DestinationHandler,
    private readonly audit: AuditService,
    private readonly secrets: SecretBox,
    private readonly guard: OutboundGuard,
    private readonly deliveryLogDays: number,
  ) {}

  async list(): Promise<DestinationView[]> {
    const rows = await this.destinations.list();
    const [consumers, head] = await Promise.all([
      this.consumers.getMany(rows.map((row) => consumerIdOf(row.id))),
      this.audit.chainHeadSeq(),
    ]);
    const byId = new Map(consumers.map((consumer) => [consumer.id, consumer]));
    return rows.map((row) => this.view(row, byId.get(consumerIdOf(row.id)) ?? null, head));
  }

  async get(id: string): Promise<DestinationView> {
    const row = await this.find(id);
    const [consumer, head] = await Promise.all([this.consumers.get(consumerIdOf(id)), this.audit.chainHeadSeq()]);
    return this.view(row, consumer, head);
  }

  async create(actor: Actor, input: DestinationInput): Promise<DestinationWithSecret> {
    const kind = input.kind;
    if (!kind || !DESTINATION_KINDS.includes(kind)) throw new BadRequestError(`kind must be one of ${DESTINATION_KINDS.join(", ")}`);
    const checked = await this.validate(kind, input, null);
    const secret = kind === "webhook" ? newWebhookSecret() : null;
    const credentials = secret ? { secret } : (checked.credentials ?? {});
    const id = newId();
    await this.sequelize.transaction(async (transaction) => {
      const row = await this.destinations.insert(
        {
          id,
          kind,
          name: checked.name,
          description: checked.description,
          url: checked.url,
          settings: checked.settings,
          secretsEncrypted: this.secrets.seal(JSON.stringify(credentials)),
          previousSecretsEncrypted: null,
          previousSecretsExpireAt: null,
          eventTypes: checked.eventTypes,
          enabled: checked.enabled,
          disabledReason: null,
        },
        transaction,
      );
      // A new destination receives what is recorded from now on; older events are a replay away. Events
      // committed before now are linked first: linked later, they would land after its starting position.
      await this.audit.chainCommitted();
      await this.consumers.create(consumerIdOf(id), await this.audit.chainHeadSeq(), transaction);
      if (!row.enabled) await this.consumers.setPaused(consumerIdOf(id), true, transaction);
      await this.record(transaction, actor, row, "stream.destination.created", "create", diffChanges({}, auditedState(row, credentials)));
    });
    return { destination: await this.get(id), secret };
  }

  async update(actor: Actor, id: string, input: DestinationInput): Promise<DestinationView> {
    const current = await this.find(id);
    if (input.kind && input.kind !== current.kind) throw new BadRequestError("kind cannot change; create a new destination");
    const checked = await this.validate(current.kind, input, current);
    await this.sequelize.transaction(async (transaction) => {
      await this.consumers.lock(consumerIdOf(id), transaction);
      const locked = (await this.destinations.get(id, transaction, true))!;
      const credentialsBefore = this.credentialsOf(locked);
      const credentials = checked.credentials ?? credentialsBefore;
      const next: DestinationRow = {
        ...locked,
        name: checked.name,
        description: checked.description,
        url: checked.url,
        settings: checked.settings,
        eventTypes: checked.eventTypes,
        enabled: checked.enabled,
        disabledReason: checked.enabled ? null : locked.disabledReason,
        secretsEncrypted: checked.credentials ? this.secrets.seal(JSON.stringify(credentials)) : locked.secretsEncrypted,
      };
      const changes = diffChanges(auditedState(locked, credentialsBefore), auditedState(next, credentials));
      if (Object.keys(changes).length === 0) return;
      const saved = await this.destinations.update(next, transaction);
      if (locked.enabled !== saved.enabled) await this.consumers.setPaused(consumerIdOf(id), !saved.enabled, transaction);
      await this.record(transaction, actor, saved, "stream.destination.updated", "update", changes);
    });
    return this.get(id);
  }

  async delete(actor: Actor, id: string): Promise<DestinationView> {
    const view = await this.get(id);
    await this.sequelize.transaction(async (transaction) => {
      await this.consumers.lock(consumerIdOf(id), transaction);
      const locked = await this.destinations.get(id, transaction, true);
      if (!locked) throw new NotFoundError("Stream destination");
      await this.consumers.delete(consumerIdOf(id), transaction);
      await this.destinations.delete(id, transaction);
      await this.record(
        transaction,
        actor,
        locked,
        "stream.destination.deleted",
        "delete",
        diffChanges(auditedState(locked, this.credentialsOf(locked)), {}),
      );
    });
    return view;
  }

  async setPaused(actor: Actor, id: string, paused: boolean): Promise<DestinationView> {
    await this.find(id);
    await this.sequelize.transaction(async (transaction) => {
      const consumer = await this.consumers.lock(consumerIdOf(id), transaction);
      const row = (await this.destinations.get(id, transaction, true))!;
      if (!consumer || (consumer.paused === paused && !(!paused && consumer.failing))) return;
      await this.consumers.setPaused(consumer.id, paused, transaction);
      await this.record(
        transaction,
        actor,
        row,
        paused ? "stream.destination.paused" : "stream.destination.resumed",
        paused ? "pause" : "resume",
        {
          paused: { old: consumer.paused, new: paused },
          ...(consumer.failing && !paused ? { failing: { old: true, new: false } } : {}),
        },
      );
    });
    return this.get(id);
  }

  /**
   * Moves the destination's position back (or forward) so delivery continues from a sequence number
   * or from the first event recorded at or after a time; retries and the failing state start afresh.
   */
  async replay(actor: Actor, id: string, from: { sequence?: string | null; time?: string | null }): Promise<DestinationView> {
    await this.find(id);
    if ((from.sequence ? 1 : 0) + (from.time ? 1 : 0) !== 1)
      throw new BadRequestError("replay needs exactly one of fromSequence or fromTime");
    let position: string;
    if (from.sequence) {
      if (!/^\d{1,18}$/.test(from.sequence) || BigInt(from.sequence) < 1n)
        throw new BadRequestError("fromSequence must be a positive chain sequence number");
      position = (BigInt(from.sequence) - 1n).toString();
    } else {
      const moment = new Date(from.time!);
      if (Number.isNaN(moment.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(from.time!))
        throw new BadRequestError("fromTime must be an ISO 8601 date-time");
      position = await this.audit.chainPositionAt(moment);
    }
    const head = await this.audit.chainHeadSeq();
    if (BigInt(position) > BigInt(head)) position = head;
    await this.sequelize.transaction(async (transaction) => {
      const consumer = await this.consumers.lock(consumerIdOf(id), transaction);
      const row = (await this.destinations.get(id, transaction, true))!;
      if (!consumer) throw new NotFoundError("Stream destination");
      await this.consumers.moveTo(consumer.id, position, transaction);
      await this.record(transaction, actor, row, "stream.destination.replayed", "replay", {
        position: { old: consumer.position, new: position },
      });
    });
    return this.get(id);
  }

  /** A new webhook secret; the old one keeps signing (both signatures are sent) for `overlapSeconds`. */
  async rotateSecret(actor: Actor, id: string, overlapSeconds: number | null | undefined): Promise<DestinationWithSecret> {
    const current = await this.find(id);
    if (current.kind !== "webhook") throw new BadRequestError("only webhooks have a signing secret; update a SIEM's credentials instead");
    const overlap = overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS)
      throw new BadRequestError(`overlapSeconds must be between 0 and ${MAX_OVERLAP_SECONDS}`);
    const secret = newWebhookSecret();
    await this.sequelize.transaction(async (transaction) => {
      const locked = (await this.destinations.get(id, transaction, true))!;
      const expires = new Date(Date.now() + overlap * 1000);
      const saved = await this.destinations.update(
        {
          ...locked,
          secretsEncrypted: this.secrets.seal(JSON.stringify({ secret })),
          previousSecretsEncrypted: overlap > 0 ? locked.secretsEncrypted : null,
          previousSecretsExpireAt: overlap > 0 ? expires : null,
        },
        transaction,
      );
      await this.record(transaction, actor, saved, "stream.destination.secret_rotated", "rotate", {
        secret: { old: REDACTED, new: REDACTED },
        rotationOverlapUntil: { old: null, new: overlap > 0 ? expires.toISOString() : null },
      });
    });
    return { destination: await this.get(id), secret };
  }

  /**
   * Sends one test event now, outside the stream, the way real events go: a webhook gets a signed
   * `webhook.test` message; a SIEM gets a `stream.destination.tested` event in its format.
   */
  async test(actor: Actor, id: string): Promise<TestResult> {
    const row = await this.find(id);
    const target = this.handler.targetOf(row);
    const now = new Date();
    const testEvent = {
      id: `test_${randomUUID()}`,
      seq: null,
      timestamp: now,
      eventType: "stream.destination.tested" as const,
      severity: "info" as const,
      user: { id: actor.userId, email: actor.email },
      provider: null,
      action: "test",
      resource: { type: "stream_destination", id: row.id, label: row.name },
      ipAddress: null,
      userAgent: null,
      sessionId: null,
      requestId: null,
      changes: null,
      error: null,
      prevHash: null,
      hash: null,
    };
    let result: TestResult;
    const attemptedAt = new Date();
    if (row.kind === "webhook") {
      const secrets = [target.secrets.secret, ...(target.previousSecrets ? [target.previousSecrets.secret] : [])];
      const body = webhookBody("webhook.test", now, {
        message: "test event from finance-gateway",
        destinationId: row.id,
        sentBy: actor.email,
      });
      const started = performance.now();
      try {
        const answer = await this.guard.request({
          method: "POST",
          url: row.url,
          body,
          headers: webhookHeaders(secrets, testEvent.id, body),
        });
        const ok = answer.status >= 200 && answer.status < 300;
        result = {
          ok,
          status: answer.status,
          latencyMs: Math.round(performance.now() - started),
          error: ok ? null : `the receiver answered ${answer.status}`,
        };
      } catch (error) {
        result = { ok: false, status: null, latencyMs: Math.round(performance.now() - started), error: (error as Error).message };
      }
    } else {
      const sender = createSender(target, this.guard);
      try {
        const sent = await sender.send([testEvent], Date.now() + 60_000);
        const attempt = sent.attempts[sent.attempts.length - 1];
        result = {
          ok: sent.failure === null,
          status: attempt?.status ?? null,
          latencyMs: attempt?.latencyMs ?? 0,
          error: sent.failure?.error ?? null,
        };
      } finally {
        sender.close();
      }
    }
    await this.sequelize.transaction(async (transaction) => {
      await this.destinations.logDeliveries(
        [
          {
            destinationId: row.id,
            attemptedAt,
            firstSeq: null,
            lastSeq: null,
            events: 1,
            status: result.status,
            latencyMs: result.latencyMs,
            outcome: result.ok ? "delivered" : "failed",
            error: result.error,
            test: true,
          },
        ],
        transaction,
      );
      await this.record(transaction, actor, row, "stream.destination.tested", "test", null, result.error);
    });
    return result;
  }

  async deliveries(id: string, first: number | null | undefined, before: string | null | undefined): Promise<DeliveryRow[]> {
    await this.find(id);
    if (before !== null && before !== undefined && !/^\d{1,18}$/.test(before)) throw new BadRequestError("before must be a delivery id");
    const limit = Math.min(Math.max(first ?? 50, 1), 200);
    return this.destinations.deliveries(id, limit, before ?? null);
  }

  /** Removes delivery-log rows older than STREAM_DELIVERY_LOG_DAYS (the maintenance job). */
  pruneDeliveries(): Promise<number> {
    return this.destinations.pruneDeliveries(new Date(Date.now() - this.deliveryLogDays * 86_400_000));
  }

  private async find(id: string): Promise<DestinationRow> {
    const row = isUuid(id) ? await this.destinations.get(id) : null;
    if (!row) throw new NotFoundError("Stream destination");
    return row;
  }

  private credentialsOf(row: DestinationRow): Record<string, string> {
    return JSON.parse(this.secrets.open(row.secretsEncrypted)) as Record<string, string>;
  }

  private view(row: DestinationRow, consumer: ConsumerRow | null, head: string): DestinationView {
    const { secretsEncrypted, previousSecretsEncrypted, ...rest } = row;
    const overlap =
      previousSecretsEncrypted && row.previousSecretsExpireAt && row.previousSecretsExpireAt > new Date()
        ? row.previousSecretsExpireAt
        : null;
    const position = consumer?.position ?? head;
    const lag = BigInt(head) - BigInt(position);
    return {
      ...rest,
      credentialNames: Object.keys(JSON.parse(this.secrets.open(secretsEncrypted)) as object).sort(),
      rotationOverlapUntil: overlap,
      health: {
        position,
        head,
        lag: (lag > 0n ? lag : 0n).toString(),
        paused: consumer?.paused ?? false,
        failing: consumer?.failing ?? false,
        failures: consumer?.failures ?? 0,
        nextAttemptAt: consumer && consumer.failures > 0 ? consumer.nextAttemptAt : null,
        lastSuccessAt: consumer?.lastSuccessAt ?? null,
        lastFailureAt: consumer?.lastFailureAt ?? null,
        lastError: consumer?.lastError ?? null,
      },
    };
  }

  private async validate(kind: DestinationKind, input: DestinationInput, current: DestinationRow | null) {
    const problems = new ValidationErrors();
    const platform = PLATFORM[kind];
    const name = requiredText(problems, "Name", input.name ?? current?.name, 100);
    const description =
      input.description === undefined ? (current?.description ?? null) : optionalText(problems, "Description", input.description, 500);
    const url = (input.url ?? current?.url ?? "").trim();
    if (!url) problems.add("Url can't be blank");
    else if (url.length > MAX_URL) problems.add(`Url is too long (maximum is ${MAX_URL} characters)`);
    else {
      const problem = platform.syslog ? await this.syslogUrlProblem(url) : await this.guard.urlProblem(url);
      if (problem) problems.add(`Url ${problem}`);
    }
    const eventTypes = (input.eventTypes ?? current?.eventTypes ?? []).map((pattern) => pattern.trim());
    if (eventTypes.length > MAX_EVENT_TYPES) problems.add(`Event types has too many entries (maximum is ${MAX_EVENT_TYPES})`);
    for (const pattern of eventTypes)
      if (!expandEventTypePattern(pattern)) problems.add(`Event type ${JSON.stringify(pattern)} is not a known event type or prefix`);
    const settings = { ...(current?.settings ?? {}), ...(input.settings ?? {}) };
    for (const [key, value] of Object.entries(settings)) {
      if (!(key in platform.settings))
        problems.add(`Setting ${key} is not one ${kind} takes (${Object.keys(platform.settings).join(", ") || "none"})`);
      else if (value !== null && (typeof value !== "string" || value.length > MAX_SETTING))
        problems.add(`Setting ${key} must be text up to ${MAX_SETTING} characters`);
    }
    for (const [key, required] of Object.entries(platform.settings))
      if (required && !settings[key]) problems.add(`Setting ${key} is required for ${kind}`);
    if (typeof settings.authorityUrl === "string" && settings.authorityUrl) {
      const problem = await this.guard.urlProblem(settings.authorityUrl);
      if (problem) problems.add(`Setting authorityUrl ${problem}`);
    }
    let credentials: Record<string, string> | null = null;
    if (input.credentials) {
      if (kind === "webhook") problems.add("A webhook's secret is generated; rotate it with rotateStreamWebhookSecret");
      credentials = {};
      for (const [key, value] of Object.entries(input.credentials)) {
        if (!platform.credentials.includes(key))
          problems.add(`Credential ${key} is not one ${kind} takes (${platform.credentials.join(", ") || "none"})`);
        else if (typeof value !== "string" || value.trim() === "" || value.length > 4096)
          problems.add(`Credential ${key} must be non-empty text`);
        else credentials[key] = value;
      }
    }
    if (!current && kind !== "webhook") {
      for (const key of platform.credentials) if (!credentials?.[key]) problems.add(`Credential ${key} is required for ${kind}`);
    } else if (current && credentials) {
      credentials = { ...this.credentialsOf(current), ...credentials };
    }
    problems.throwIfAny();
    const cleaned = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== null && value !== ""));
    return { name, description, url, eventTypes, enabled: input.enabled ?? current?.enabled ?? true, settings: cleaned, credentials };
  }

  private async syslogUrlProblem(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return "is not a valid URL";
    }
    if (url.protocol !== "syslog:" && url.protocol !== "syslog+tls:") return "must be syslog://host:port or syslog+tls://host:port";
    try {
      await this.guard.checkHost(url.hostname, Number(url.port || 514));
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }

  private async record(
    transaction: Transaction,
    actor: Actor,
    row: DestinationRow,
    type:
      | "stream.destination.created"
      | "stream.destination.updated"
      | "stream.destination.deleted"
      | "stream.destination.paused"
      | "stream.destination.resumed"
      | "stream.destination.secret_rotated"
      | "stream.destination.replayed"
      | "stream.destination.tested",
    action: string,
    changes: Changes | null,
    error: string | null = null,
  ): Promise<void> {
    await this.audit.record(transaction, {
      type,
      user: { id: actor.userId, email: actor.email },
      action,
      resource: { type: "stream_destination", id: row.id, label: row.name },
      changes,
      error,
    });
  }
}

/** What a configuration event compares; credentials appear by name only (diffChanges redacts their values). */
function auditedState(row: DestinationRow, credentials: Record<string, string>): Record<string, unknown> {
  return {
    kind: row.kind,
    name: row.name,
    description: row.description,
    url: row.url,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    settings: row.settings,
    ...Object.fromEntries(Object.entries(credentials).map(([key, value]) => [credentialField(key), value])),
  };
}

/** `token`, `apiKey`, `clientSecret`, `secret`: named so the redaction of audit changes recognises them. */
function credentialField(key: string): string {
  return /secret|token|api[_-]?key/i.test(key) ? key : `${key}Secret`;
}
