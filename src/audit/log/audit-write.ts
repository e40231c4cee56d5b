import type { Transaction } from "sequelize";
import type { Actor } from "../../platform/security/actor";
import { diffChanges } from "./audit-changes";
import type { AuditEventType } from "./audit.catalogue";
import type { AuditService } from "./audit.service";

/** The word each kind of write is recorded with, from its event type's last part. */
const ACTIONS: Record<string, string> = { created: "create", updated: "update", deleted: "delete" };

/**
 * Records the audit event of one write to a family's data (a transaction, an account, a category …) in
 * the write's own database transaction, naming the actor as the other finance writes do: `changes` holds
 * each of `fields` whose value differs between `before` (null: created) and `after` (null: deleted).
 */
export async function recordWrite<Row extends object>(
  audit: AuditService,
  transaction: Transaction,
  write: {
    type: AuditEventType;
    actor: Actor;
    resource: { type: string; id: string; label: string };
    before: Row | null;
    after: Row | null;
    fields: readonly (keyof Row & string)[];
  },
): Promise<void> {
  await audit.record(transaction, {
    type: write.type,
    user: { id: write.actor.userId, email: write.actor.email },
    action: ACTIONS[write.type.slice(write.type.lastIndexOf(".") + 1)] ?? null,
    resource: write.resource,
    changes: diffChanges({ ...write.before }, { ...write.after }, write.fields),
  });
}
