import type { Transaction } from "sequelize";
import { expandEventTypePatterns } from "../log";
import type { AuditService } from "../log";
import type { Logger } from "../../platform/common/logger";
import type { OutboundGuard } from "../../platform/outbound/outbound.guard";
import type { SecretBox } from "../../platform/security/secret-box";
import type { ChainConsumerHandler, TurnOutcome } from "../delivery";
import type { ConsumerRow, ConsumerSettlement } from "../delivery";
import type { DestinationRepository, DestinationRow } from "./stream.repository";
import { createSender } from "./senders/create-sender";
import type { Attempt, Sender, SenderTarget } from "./senders/sender";

export const DESTINATION_PREFIX = "destination:";

export function consumerIdOf(destinationId: string): string {
  return `${DESTINATION_PREFIX}${destinationId}`;
}

/** Links a turn may look through for matching events (a narrow filter skips the rest in the same turn). */
const SCAN_LINKS = 20_000;

type DestinationOutcome = TurnOutcome & { attempts: Attempt[]; destination: DestinationRow | null };

/**
 * Webhooks and SIEMs as consumers of the audit stream: a turn reads the events after the position that
 * match the destination's filter and hands them to the platform's sender; the delivery log, 410's
 * disabling and exhaustion's "failing" event are written with the position.
 */
export class DestinationHandler implements ChainConsumerHandler<DestinationOutcome> {
  readonly prefix = DESTINATION_PREFIX;
  /** Senders keep connections and tokens between turns; rebuilt when the destination changes. */
  private readonly senders = new Map<string, { version: string; sender: Sender }>();
  /** Destinations read for the consumers just claimed, each taken by its turn (see prepare). */
  private readonly prepared = new Map<string, DestinationRow | null>();

  constructor(
    private readonly destinations: DestinationRepository,
    private readonly audit: AuditService,
    private readonly secrets: SecretBox,
    private readonly guard: OutboundGuard,
    private readonly logger: Logger,
  ) {}

  /** The destinations of the consumers just claimed, in one query instead of one per turn. */
  async prepare(consumers: ConsumerRow[]): Promise<void> {
    const ids = consumers.map((consumer) => consumer.id.slice(DESTINATION_PREFIX.length));
    const rows = new Map((await this.destinations.getMany(ids)).map((row) => [row.id, row]));
    for (const id of ids) this.prepared.set(id, rows.get(id) ?? null);
  }

  async turn(consumer: ConsumerRow, deadline: number): Promise<DestinationOutcome> {
    const id = consumer.id.slice(DESTINATION_PREFIX.length);
    const destination = this.prepared.has(id) ? this.prepared.get(id)! : await this.destinations.get(id);
    this.prepared.delete(id);
    if (!destination || !destination.enabled) return { position: consumer.position, attempts: [], destination };
    const sender = this.senderFor(destination);
    const read = await this.audit.readChain(consumer.position, {
      scanLinks: SCAN_LINKS,
      limit: sender.turnSize,
      eventTypes: expandEventTypePatterns(destination.eventTypes),
    });
    // Only skipped events (or none): the position moves, the last success does not.
    if (read.events.length === 0) return { position: read.through, delivered: false, attempts: [], destination };
    const result = await sender.send(read.events, deadline);
    const complete = result.delivered === read.events.length;
    // Stopped early (failure or deadline): the position moves to just before the first event not delivered.
    const position = complete ? read.through : (BigInt(read.events[result.delivered].seq!) - 1n).toString();
    return { position, delivered: result.delivered > 0, failure: result.failure, attempts: result.attempts, destination };
  }

  async record(
    consumer: ConsumerRow,
    outcome: DestinationOutcome,
    settlement: ConsumerSettlement,
    transaction: Transaction,
  ): Promise<void> {
    const destination = outcome.destination;
    if (!destination) return;
    await this.destinations.logDeliveries(
      outcome.attempts.map((attempt) => ({ destinationId: destination.id, ...attempt })),
      transaction,
    );
    const resource = { type: "stream_destination", id: destination.id, label: destination.name };
    if (outcome.failure?.gone) {
      // 410 Gone: the receiver says this endpoint no longer exists. Undelivered events stay for a replay.
      const current = await this.destinations.get(destination.id, transaction, true);
      if (current?.enabled) {
        await this.destinations.update({ ...current, enabled: false, disabledReason: "the receiver answered 410 Gone" }, transaction);
        await this.audit.record(transaction, {
          type: "stream.destination.disabled",
          action: "disable",
          resource,
          changes: { enabled: { old: true, new: false } },
          error: outcome.failure.error,
        });
      }
    } else if (settlement.failing && !consumer.failing) {
      await this.audit.record(transaction, {
        type: "stream.destination.failing",
        action: "exhausted",
        resource,
        error: `${settlement.failures - 1} retries failed; undelivered events wait after position ${settlement.position}: ${outcome.failure?.error ?? ""}`,
      });
    }
  }

  private senderFor(destination: DestinationRow): Sender {
    // A change of the destination, or the end of a rotation's overlap, makes a new sender.
    const overlapping = destination.previousSecretsExpireAt !== null && destination.previousSecretsExpireAt > new Date();
    const version = `${destination.updatedAt.getTime()}:${overlapping}`;
    const cached = this.senders.get(destination.id);
    if (cached && cached.version === version) return cached.sender;
    cached?.sender.close();
    const sender = createSender(this.targetOf(destination), this.guard);
    this.senders.set(destination.id, { version, sender });
    return sender;
  }

  /** What a sender needs, secrets decrypted; an expired rotation overlap drops the old secret. */
  targetOf(destination: DestinationRow, now = new Date()): SenderTarget {
    const overlapping =
      destination.previousSecretsEncrypted && destination.previousSecretsExpireAt && destination.previousSecretsExpireAt > now;
    return {
      id: destination.id,
      kind: destination.kind,
      url: destination.urlEncrypted ? this.secrets.open(destination.urlEncrypted) : destination.url,
      settings: destination.settings,
      secrets: JSON.parse(this.secrets.open(destination.secretsEncrypted)) as Record<string, string>,
      previousSecrets: overlapping
        ? (JSON.parse(this.secrets.open(destination.previousSecretsEncrypted!)) as Record<string, string>)
        : null,
    };
  }

  close(): void {
    for (const { sender } of this.senders.values()) sender.close();
    this.senders.clear();
    this.logger.debug("audit stream senders closed");
  }
}
