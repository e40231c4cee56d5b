import type { Sequelize, Transaction } from "sequelize";
import { diffChanges, REDACTED, type Changes } from "../log";
import type { AuditService } from "../log";
import { BadRequestError, NotFoundError } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import type { Actor } from "../../platform/security/actor";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import type { SecretBox } from "../../platform/security/secret-box";
import { newWebhookSecret } from "../delivery";
import type { ConsumerRepository, ConsumerRow } from "../delivery";
import { consumerIdOf, type DestinationHandler } from "./destination.handler";
import { maskUrl } from "./destination-url";
import { sendTestEvent, type TestResult } from "./destination.probe";
import { auditedState, DESTINATION_KINDS, validateDestination, type DestinationInput } from "./destination.settings";
import type { DeliveryRow, DestinationRepository, DestinationRow } from "./stream.repository";

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

export type DestinationView = Omit<DestinationRow, "secretsEncrypted" | "previousSecretsEncrypted" | "urlEncrypted"> & {
  /** Names of the credentials stored (their values are never returned). */
  credentialNames: string[];
  rotationOverlapUntil: Date | null;
  health: DestinationHealth;
};

/** A created webhook or a rotated secret: the secret is in this answer and nowhere else, ever. */
export type DestinationWithSecret = { destination: DestinationView; secret: string | null };

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
    const checked = await validateDestination(this.guard, kind, input, null);
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
          ...this.sealedUrl(checked.url),
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
      await this.record(
        transaction,
        actor,
        row,
        "stream.destination.created",
        "create",
        diffChanges({}, auditedState(row, credentials, checked.url)),
      );
    });
    return { destination: await this.get(id), secret };
  }

  async update(actor: Actor, id: string, input: DestinationInput): Promise<DestinationView> {
    const current = await this.find(id);
    if (input.kind && input.kind !== current.kind) throw new BadRequestError("kind cannot change; create a new destination");
    const currentUrl = this.urlOf(current);
    // The masked URL sent back unchanged (an edit form shows it) keeps the credentials it hides.
    const unchangedUrl = typeof input.url === "string" && input.url.trim() === current.url;
    const checked = await validateDestination(this.guard, current.kind, unchangedUrl ? { ...input, url: currentUrl } : input, {
      row: { ...current, url: currentUrl },
      credentials: this.credentialsOf(current),
    });
    await this.sequelize.transaction(async (transaction) => {
      await this.consumers.lock(consumerIdOf(id), transaction);
      const locked = (await this.destinations.get(id, transaction, true))!;
      const credentialsBefore = this.credentialsOf(locked);
      const credentials = checked.credentials ?? credentialsBefore;
      const next: DestinationRow = {
        ...locked,
        name: checked.name,
        description: checked.description,
        ...this.sealedUrl(checked.url),
        settings: checked.settings,
        eventTypes: checked.eventTypes,
        enabled: checked.enabled,
        disabledReason: checked.enabled ? null : locked.disabledReason,
        secretsEncrypted: checked.credentials ? this.secrets.seal(JSON.stringify(credentials)) : locked.secretsEncrypted,
      };
      const changes = diffChanges(
        auditedState(locked, credentialsBefore, this.urlOf(locked)),
        auditedState(next, credentials, checked.url),
      );
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
        diffChanges(auditedState(locked, this.credentialsOf(locked), this.urlOf(locked)), {}),
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

  /** Sends one test event now (destination.probe.ts); the attempt is logged and audited. */
  async test(actor: Actor, id: string): Promise<TestResult> {
    const row = await this.find(id);
    const attemptedAt = new Date();
    const result = await sendTestEvent(this.guard, row, this.handler.targetOf(row), actor);
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

  /**
   * Seals the URL of every destination stored before URLs with credentials were sealed (once, at boot;
   * a URL without credentials stays as it is). Answers how many were sealed.
   */
  async sealUrlCredentials(): Promise<number> {
    let sealed = 0;
    for (const { id, url } of await this.destinations.plaintextUrls()) {
      const stored = this.sealedUrl(url);
      if (stored.urlEncrypted && (await this.destinations.sealUrl(id, url, stored.url, stored.urlEncrypted))) sealed++;
    }
    return sealed;
  }

  /** What a URL is stored as: itself, or masked with the real one sealed beside it when it carries credentials. */
  private sealedUrl(url: string): { url: string; urlEncrypted: string | null } {
    const masked = maskUrl(url);
    return masked === url ? { url, urlEncrypted: null } : { url: masked, urlEncrypted: this.secrets.seal(url) };
  }

  private urlOf(row: DestinationRow): string {
    return row.urlEncrypted ? this.secrets.open(row.urlEncrypted) : row.url;
  }

  private credentialsOf(row: DestinationRow): Record<string, string> {
    return JSON.parse(this.secrets.open(row.secretsEncrypted)) as Record<string, string>;
  }

  private view(row: DestinationRow, consumer: ConsumerRow | null, head: string): DestinationView {
    // eslint-disable-next-line @typescript-eslint/no-unused-vars
    const { secretsEncrypted, previousSecretsEncrypted, urlEncrypted, ...rest } = row;
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
      actor,
      action,
      resource: { type: "stream_destination", id: row.id, label: row.name },
      changes,
      error,
    });
  }
}
