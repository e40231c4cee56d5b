import type { Transaction } from "sequelize";
import type { EventBus } from "../events/event-bus";

/**
 * The event bus topic that says "these credentials no longer grant what they did". HTTP requests
 * need no such signal (every request checks its credential in the database); long-lived WebSocket
 * connections, authenticated once when they opened, do: the WebSocket server of every API process
 * closes the sockets the message matches.
 */
export const ACCESS_ENDED_TOPIC = "auth.access.ended";

export type AccessEnded =
  /** Suspended or deleted: nothing of the user's works any more. */
  | { kind: "user"; userId: string; reason: "suspended" | "deleted" }
  /** The user's role changed: the same credential now grants something else. */
  | { kind: "user"; userId: string; reason: "role_changed" }
  /** Logged out, revoked, expired, or ended because its refresh token was reused. */
  | { kind: "session"; sessionId: string; reason: string }
  | { kind: "access_token"; tokenId: string; reason: string }
  | { kind: "api_key"; apiKeyId: string; reason: string };

/** Publishes once the transaction that ended the access commits (never for a change that rolled back). */
export function announceAccessEnded(events: EventBus, transaction: Transaction, message: AccessEnded): void {
  transaction.afterCommit(() => events.publish(ACCESS_ENDED_TOPIC, message));
}
