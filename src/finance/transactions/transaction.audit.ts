import type { Transaction } from "sequelize";
import { recordWrite, type AuditEventName, type AuditService } from "../../audit/log";
import type { Actor } from "../../platform/security/actor";
import { absolute, toAmountString } from "../money";
import type { TransactionChanges, TransactionRow } from "./transaction.repository";

/** What a transaction's audit events compare: its stored fields and, when the write set them, its tags. */
const FIELDS = [
  "accountId",
  "date",
  "amount",
  "currency",
  "name",
  "notes",
  "categoryId",
  "merchantId",
  "pending",
  "externalId",
  "source",
  "tagIds",
] as const;

type Audited = Omit<TransactionRow, "createdAt" | "updatedAt" | "transferId" | "transferOtherAccountId">;

/** A row as it is after an update's changes: the changes a write leaves unset keep the row's values. */
export function withChanges(row: TransactionRow, changes: TransactionChanges): TransactionRow {
  const set = Object.entries(changes).filter(([, value]) => value !== undefined);
  return { ...row, ...Object.fromEntries(set) };
}

/**
 * Records a transaction's create, update or delete in the write's database transaction. `tagIds` holds
 * the tag sets before and after when the write touched them (null before a create); amounts compare as
 * numbers, so "12.5" and the stored "12.5000" are no change.
 */
export function recordTransactionWrite(
  audit: AuditService,
  transaction: Transaction,
  write: {
    type: AuditEventName & `transaction.${string}`;
    actor: Actor;
    before: Audited | null;
    after: Audited | null;
    tagIds?: { before: readonly string[] | null; after: readonly string[] | null };
  },
): Promise<void> {
  const shape = (row: Audited | null, tagIds: readonly string[] | null | undefined) =>
    row && {
      ...row,
      amount: toAmountString(row.amount),
      tagIds: tagIds ? [...new Set(tagIds)].sort() : undefined,
    };
  const subject = (write.after ?? write.before)!;
  return recordWrite(audit, transaction, {
    type: write.type,
    actor: write.actor,
    resource: { type: "transaction", id: subject.id, label: `${subject.name} (${subject.date})` },
    before: shape(write.before, write.tagIds?.before),
    after: shape(write.after, write.tagIds?.after),
    fields: FIELDS,
  });
}

type Leg = { id: string; accountId: string; date: string; amount: string; name: string; notes: string | null };

/** Records a transfer as one event: both legs are its, so neither records a transaction.created of its own. */
export function recordTransferCreated(
  audit: AuditService,
  transaction: Transaction,
  transfer: { actor: Actor; id: string; outflow: Leg; inflow: Leg },
): Promise<void> {
  const { outflow, inflow } = transfer;
  return recordWrite(audit, transaction, {
    type: "transfer.created",
    actor: transfer.actor,
    resource: { type: "transfer", id: transfer.id, label: outflow.name },
    before: null,
    after: {
      fromAccountId: outflow.accountId,
      toAccountId: inflow.accountId,
      date: outflow.date,
      amount: toAmountString(outflow.amount),
      toAmount: toAmountString(absolute(inflow.amount)),
      name: outflow.name,
      notes: outflow.notes,
      outflowTransactionId: outflow.id,
      inflowTransactionId: inflow.id,
    },
    fields: ["fromAccountId", "toAccountId", "date", "amount", "toAmount", "name", "notes", "outflowTransactionId", "inflowTransactionId"],
  });
}
