/**
 * Every event-bus topic and the payload it carries, in one place (like workers/queues.ts for jobs).
 * Publishers and subscribers name a topic from `Topic`; the bus's generic publish/subscribe then
 * type the payload, so consumers never cast.
 *
 * Payloads cross processes as JSON (dates arrive as strings) and must stay small: PostgreSQL refuses
 * NOTIFY payloads of 8000 bytes or more. Durable facts live in tables; an event says "look, this
 * changed" and carries ids, or, where it is small, the fact itself.
 *
 * The catalogue is the bottom layer and imports no feature: the payloads' shapes are declared here,
 * and the features that publish them import those types from here.
 */
export const Topic = {
  /** A chat's messages, reply statuses and streamed reply text; scoped by chat id. */
  ChatEvent: "chat.event",
  /** Status changes of a family's bank syncs; scoped by family id. */
  BankSyncEvent: "bank.sync.event",
  /** Credentials that no longer grant what they did: open WebSockets they cover are closed. */
  AccessEnded: "auth.access.ended",
  /** A user's row changed (name, e-mail, AI access): processes forget what they remembered of it (the API key cache). */
  UserChanged: "identity.user.changed",
  /** An audit event committed and linked into the chain (the live stream). */
  AuditEventRecorded: "audit.event.recorded",
  /** An alert rule fired (committed with its deliveries): the dispatcher sends, the console shows a toast. */
  AlertFired: "alert.fired",
} as const;

export type TopicName = (typeof Topic)[keyof typeof Topic];

/** The largest payload (as JSON, in bytes) a publisher may send; room is left for the envelope. */
export const MAX_EVENT_PAYLOAD_BYTES = 7000;

/** A chat reply's status, as chat_messages stores it and the bus carries it. */
export type ReplyStatus = "pending" | "complete" | "failed";

export type ChatEventPayload =
  | { kind: "message"; chatId: string; messageId: string }
  | { kind: "status"; chatId: string; messageId: string; status: ReplyStatus; statusMessage: string | null; chatError: string | null }
  | { kind: "partial"; chatId: string; messageId: string; delta: string };

/** A bank connection's health, as bank_connections stores it and the bus carries it. */
export type ConnectionStatus = "good" | "requires_update" | "failed";

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

/**
 * An audit event as JSON carries it: the one list of an event's fields. The audit log's AuditEvent
 * (src/audit/log/audit.service.ts) is this with a Date and its catalogue's types for `eventType` and
 * `severity`, which it checks when it reads an event off the bus.
 */
export type AuditEventJson = {
  id: string;
  /** Null until the sequencer has linked the event into the chain (normally milliseconds after commit). */
  seq: string | null;
  /** ISO 8601. */
  timestamp: string;
  eventType: string;
  severity: string;
  /** The acting user; `id` is null for a failed login under an e-mail no account has. */
  user: { id: string | null; email: string } | null;
  provider: string | null;
  action: string | null;
  resource: { type: string; id: string; label: string | null } | null;
  ipAddress: string | null;
  userAgent: string | null;
  sessionId: string | null;
  requestId: string | null;
  /** What changed, secrets already redacted. */
  changes: Record<string, { old: unknown; new: unknown }> | null;
  error: string | null;
  prevHash: string | null;
  hash: string | null;
};

/**
 * A recorded audit event: whole when it fits the payload limit, otherwise only its key (`event` is
 * null) and each subscriber reads it from the database. A large `changes` must not cost the stream.
 */
export type AuditEventRecorded = { id: string; timestamp: string; event: AuditEventJson | null };

/** Which user changed; what changed is read from the database. */
export type UserChanged = { userId: string };

/** A firing's id and what a toast shows; the rest is read from alert_firings. */
export type AlertFired = { firingId: string; ruleName: string; summary: string };

/** Topic -> payload, and the scope (topic id) a subscriber narrows to, if the topic has one. */
export type EventCatalogue = {
  [Topic.ChatEvent]: { payload: ChatEventPayload; scoped: true };
  [Topic.BankSyncEvent]: { payload: BankSyncEvent; scoped: true };
  [Topic.AccessEnded]: { payload: AccessEnded; scoped: false };
  [Topic.UserChanged]: { payload: UserChanged; scoped: false };
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
