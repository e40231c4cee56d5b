import type { Sequelize, Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import { diffChanges } from "../../audit/log";
import { NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText } from "../../platform/common/validation";
import type { AccountRepository } from "../accounts";
import type { Actor } from "../../platform/security/actor";
import { toAmountString } from "../money";
import type { LedgerService } from "./ledger.service";
import type { ValuationRepository, ValuationRow } from "./valuation.repository";

export type ValuationInput = { accountId?: string | null; date?: string | null; amount?: string | null; notes?: string | null };
export type ValuationListFilter = { accountId?: string | null; startDate?: string | null; endDate?: string | null };

const NOTES_MAX = 10_000;
const ACTIONS = { "valuation.created": "create", "valuation.updated": "update", "valuation.deleted": "delete" } as const;

/**
 * Valuations as clients write them (upstream's valuations API): a create is a reconciliation, or
 * updates the valuation already on that day; an update moves amount and date together. Every write
 * recomputes the account's balances and records an audit event naming the actor, in one transaction.
 */
export class ValuationService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly valuations: ValuationRepository,
    private readonly accounts: AccountRepository,
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
  ) {}

  async get(actor: Actor, id: string): Promise<ValuationRow> {
    const row = isUuid(id) ? await this.valuations.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Valuation");
    return row;
  }

  async list(
    actor: Actor,
    filter: ValuationListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: ValuationRow[]; pagination: PageInfo }> {
    if (filter.accountId && !isUuid(filter.accountId)) throw new ValidationError(["account_id must be a valid UUID"]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.valuations.page(
      actor.familyId,
      { accountId: filter.accountId ?? undefined, startDate: filter.startDate ?? undefined, endDate: filter.endDate ?? undefined },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /** Records the account's value on a day; `created` is false when the day already had a valuation, now updated. */
  async create(actor: Actor, input: ValuationInput): Promise<{ valuation: ValuationRow; created: boolean }> {
    const problems = new ValidationErrors();
    if (!input.accountId) problems.add("Account ID is required");
    if (input.amount === null || input.amount === undefined) problems.add("Amount is required");
    if (!input.date) problems.add("Date is required");
    const notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    problems.throwIfAny();
    const [account] = isUuid(input.accountId!) ? await this.accounts.byIds(actor.familyId, [input.accountId!]) : [null];
    if (!account) throw new NotFoundError("Account");
    return this.sequelize.transaction(async (transaction) => {
      const lock = await this.ledger.lock([account.id], transaction);
      const before = await this.valuations.onDate(account.id, input.date!, transaction);
      const { id, created } = await this.ledger.reconcile(
        { ...account, familyId: actor.familyId },
        input.date!,
        input.amount!,
        null,
        transaction,
        lock,
      );
      if (input.notes !== undefined) await this.valuations.update(id, { notes }, transaction);
      const after = (await this.valuations.byId(actor.familyId, id, transaction))!;
      await this.record(actor, created ? "valuation.created" : "valuation.updated", after, before, transaction);
      return { valuation: after, created };
    });
  }

  /** Changes notes, or amount and date together (upstream refuses one without the other). */
  async update(actor: Actor, id: string, input: ValuationInput): Promise<ValuationRow> {
    const current = await this.get(actor, id);
    const problems = new ValidationErrors();
    const moving = Boolean(input.date) || (input.amount !== undefined && input.amount !== null);
    if (moving && !(input.date && input.amount !== undefined && input.amount !== null))
      problems.add("Amount and date must both be provided");
    const notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    problems.throwIfAny();
    const [account] = await this.accounts.byIds(actor.familyId, [current.accountId]);
    if (!account) throw new NotFoundError("Valuation");
    return this.sequelize.transaction(async (transaction) => {
      const lock = await this.ledger.lock([account.id], transaction);
      const before = await this.valuations.byId(actor.familyId, id, transaction);
      if (!before) throw new NotFoundError("Valuation");
      if (moving)
        await this.ledger.reconcile({ ...account, familyId: actor.familyId }, input.date!, input.amount!, before, transaction, lock);
      if (input.notes !== undefined) await this.valuations.update(id, { notes }, transaction);
      const after = (await this.valuations.byId(actor.familyId, id, transaction))!;
      await this.record(actor, "valuation.updated", after, before, transaction);
      return after;
    });
  }

  /** Removes a reconciliation; an account's anchors stay (its history starts or ends at them). */
  async delete(actor: Actor, id: string): Promise<ValuationRow> {
    const current = await this.get(actor, id);
    if (current.kind !== "reconciliation") throw new ValidationError([`An account's ${current.kind.replace("_", " ")} cannot be deleted`]);
    return this.sequelize.transaction(async (transaction) => {
      const lock = await this.ledger.lock([current.accountId], transaction);
      const before = await this.valuations.byId(actor.familyId, id, transaction);
      if (!before) throw new NotFoundError("Valuation");
      await this.valuations.delete(id, transaction);
      await this.ledger.recompute(lock, [{ accountId: before.accountId, date: before.date, valuation: true }], transaction);
      await this.record(actor, "valuation.deleted", null, before, transaction);
      return before;
    });
  }

  private async record(
    actor: Actor,
    type: "valuation.created" | "valuation.updated" | "valuation.deleted",
    after: ValuationRow | null,
    before: ValuationRow | null,
    transaction: Transaction,
  ): Promise<void> {
    const fields = ["date", "amount", "kind", "notes"];
    const shape = (row: ValuationRow | null) =>
      row ? { date: row.date, amount: toAmountString(row.amount), kind: row.kind, notes: row.notes } : {};
    const subject = (after ?? before)!;
    await this.audit.record(transaction, {
      type,
      user: { id: actor.userId, email: actor.email },
      action: ACTIONS[type],
      resource: { type: "valuation", id: subject.id, label: `${subject.accountName} ${subject.date}` },
      changes: diffChanges(shape(before), shape(after), fields),
    });
  }
}
