import type { Transaction } from "sequelize";
import { Topic, type AccessEnded } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";

/**
 * Says "these credentials no longer grant what they did" (Topic.AccessEnded). HTTP requests need no such
 * signal (every request checks its credential in the database); long-lived WebSocket connections,
 * authenticated once when they opened, do: every API process closes the sockets the message matches.
 * Publishes once the transaction that ended the access commits (never for a change that rolled back).
 */
export function announceAccessEnded(events: EventBus, transaction: Transaction, message: AccessEnded): void {
  transaction.afterCommit(() => events.publish(Topic.AccessEnded, message));
}
