import type { AuditEvent } from "../../audit/log/audit.service";

/** A bank connection's state, as its sync events publish it (and banking.model stores it). */
export type ConnectionStatus = "good" | "requires_update" | "failed";
/** A chat reply's state, as chat events publish it (and chat.model stores it). */
export type ReplyStatus = "pending" | "complete" | "failed";

/**
 * Every event-bus topic and the payload it carries, in one place (like workers/queues.ts for jobs).
 * Publishers and subscribers name a topic from `Topic`; the bus's generic publish/subscribe then
 * type the payload, so consumers never cast.
 *
 * Payloads cross processes as JSON (dates arrive as strings) and must stay small: PostgreSQL refuses
 * NOTIFY payloads of 8000 bytes or more. Durable facts live in tables; an event says "look, this
 * changed" and carries ids, or, where it is small, the fact itself.
 */
export const Topic = {
  /** A chat's messages, reply statuses and streamed reply text; scoped by chat id. */
  ChatEvent: "chat.event",
  /** Status changes of a family's bank syncs; scoped by family id. */
  BankSyncEvent: "bank.sync.event",
  /** Credentials that no longer grant what they did: open WebSockets they cover are closed. */
  AccessEnded: "auth.access.ended",
  /** An audit event committed and linked into the chain (the live stream). */
  AuditEventRecorded: "audit.event.recorded",
  /** An alert rule fired (committed with its deliveries): the dispatcher sends, the console shows a toast. */
  AlertFired: "alert.fired",
} as const;

export type TopicName = (typeof Topic)[keyof typeof Topic];

/** The largest payload (as JSON, in bytes) a publisher may send; room is left for the envelope. */
export const MAX_EVENT_PAYLOAD_BYTES = 7000;

export type ChatEventPayload =
  | { kind: "message"; chatId: string; messageId: string }
  | { kind: "status"; chatId: string; messageId: string; status: ReplyStatus; statusMessage: string | null; chatError: string | null }
  | { kind: "partial"; chatId: string; messageId: string; delta: string };

export type BankSyncEvent = {
  connectionId: string;
  runId: string;
  runStatus: string;
  connectionStatus: ConnectionStatus;
  message: string | null;
};

export type AccessEnded =
  /** Suspended or deleted: nothing of the user's works any more. */
  | { kind: "user"; userId: string; reason: "suspended" | "deleted" }
  /** The user's role changed: the same credential now grants something else. */
  | { kind: "user"; userId: string; reason: "role_changed" }
  /** Logged out, revoked, expired, or ended because its refresh token was reused. */
  | { kind: "session"; sessionId: string; reason: string }
  | { kind: "access_token"; tokenId: string; reason: string }
  | { kind: "api_key"; apiKeyId: string; reason: string };

/** An audit event as JSON carries it. */
export type AuditEventJson = Omit<AuditEvent, "timestamp"> & { timestamp: string };

/**
 * A recorded audit event: whole when it fits the payload limit, otherwise only its key (`event` is
 * null) and each subscriber reads it from the database. A large `changes` must not cost the stream.
 */
export type AuditEventRecorded = { id: string; timestamp: string; event: AuditEventJson | null };

/** A firing's id and what a toast shows; the rest is read from alert_firings. */
export type AlertFired = { firingId: string; ruleName: string; summary: string };

/** Topic -> payload, and the scope (topic id) a subscriber narrows to, if the topic has one. */
export type EventCatalogue = {
  [Topic.ChatEvent]: { payload: ChatEventPayload; scoped: true };
  [Topic.BankSyncEvent]: { payload: BankSyncEvent; scoped: true };
  [Topic.AccessEnded]: { payload: AccessEnded; scoped: false };
  [Topic.AuditEventRecorded]: { payload: AuditEventRecorded; scoped: false };
  [Topic.AlertFired]: { payload: AlertFired; scoped: false };
};

export type EventPayload<T extends TopicName> = EventCatalogue[T]["payload"];

/** publish(topic, scopeId, payload) for scoped topics, publish(topic, payload) for the others. */
export type PublishArgs<T extends TopicName> = EventCatalogue[T]["scoped"] extends true
  ? [scopeId: string, payload: EventPayload<T>]
  : [payload: EventPayload<T>];

/** subscribe(topic, scopeId) for scoped topics, subscribe(topic) for the others. */
export type ScopeArgs<T extends TopicName> = EventCatalogue[T]["scoped"] extends true ? [scopeId: string] : [];
