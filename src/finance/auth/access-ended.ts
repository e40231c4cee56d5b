import type { Transaction } from "sequelize";
import { Topic, type AccessEnded } from "../../platform/events/catalogue";
import type { EventBus } from "../../platform/events/event-bus";

/**
 * Says "these credentials no longer grant what they did" (Topic.AccessEnded). Every API process closes
 * the long-lived WebSocket connections the message matches (authenticated once, when they opened) and
 * forgets the API keys it remembers for them (ApiKeyService's short-lived cache). Publishes once the
 * transaction that ended the access commits (never for a change that rolled back), and the commit waits
 * for the event to leave this process: by the time the caller hears "done", every other process has
 * been told, so its next request there is refused.
 */
export function announceAccessEnded(events: EventBus, transaction: Transaction, message: AccessEnded): void {
  transaction.afterCommit(async () => {
    events.publish(Topic.AccessEnded, message);
    await events.flush();
  });
}
