import type { Sequelize, Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import type { AccountRepository, AccountRow } from "../accounts";
import type { CategoryRepository } from "../categories";
import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText, requiredText, saveUnique } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { LedgerService } from "../ledger";
import type { MerchantRepository } from "../merchants";
import { absolute, isKnownCurrency, negate } from "../money";
import { recordTransactionWrite, recordTransferCreated, withChanges } from "./transaction.audit";
import { applyNature } from "./transaction.rules";
import type { TagRepository } from "../tags";
import type { TransactionFilter } from "./transaction.filter";
import type { TransactionChanges, TransactionRepository, TransactionRow, TransferLink } from "./transaction.repository";

/** What a client may send; Decimal and Date values arrive already parsed by their GraphQL scalars. */
export type TransactionInput = {
  accountId?: string | null;
  date?: string | null;
  amount?: string | null;
  name?: string | null;
  description?: string | null;
  notes?: string | null;
  currency?: string | null;
  categoryId?: string | null;
  merchantId?: string | null;
  nature?: string | null;
  tagIds?: string[] | null;
  externalId?: string | null;
  source?: string | null;
  pending?: boolean | null;
};

export type TransferInput = {
  fromAccountId: string;
  toAccountId: string;
  date: string;
  amount: string;
  /** Amount arriving in the destination account when its currency differs. */
  toAmount?: string | null;
  name?: string | null;
  notes?: string | null;
};

export type TransferListFilter = { accountId?: string | null; startDate?: string | null; endDate?: string | null; status?: string | null };
export type TransferView = { id: string; createdAt: Date; outflow: TransactionRow; inflow: TransactionRow };
/** Upstream's transfer statuses; a transfer made here is confirmed from the start. */
const TRANSFER_STATUSES = ["pending", "confirmed", "rejected"];

/**
 * The list's filter as clients send it (REST and GraphQL): one id and/or a list per relation, the
 * amount bounds on the signed stored amount as upstream's, the type unchecked.
 */
export type TransactionListFilter = Pick<
  TransactionFilter,
  "accountId" | "categoryId" | "merchantId" | "startDate" | "endDate" | "search"
> & {
  accountIds?: string[];
  categoryIds?: string[];
  merchantIds?: string[];
  tagIds?: string[];
  minAmount?: string;
  maxAmount?: string;
  type?: string | null;
};

const NATURES: Record<string, "income" | "expense"> = { income: "income", inflow: "income", expense: "expense", outflow: "expense" };
const NAME_MAX = 500;
/** Bounds the work of one list request; no client lists more accounts or categories than this at once. */
const MAX_FILTER_IDS = 200;
const NOTES_MAX = 10_000;
const EXTERNAL_ID_MAX = 255;

/** Runs inside the transaction that created transactions (the family's rules apply to them there). */
/**
 * The transactions a write created, for the hook that follows it in the write's transaction: their ids,
 * or, from a set-based write of many (a file's publish), a relation of their ids in that transaction (a
 * temporary table the write filled), so 100,000 ids need not travel to Node and back.
 */
export type CreatedTransactions = { count: number } & ({ ids: readonly string[] } | { relation: string });
export type CreatedHook = (familyId: string, created: CreatedTransactions, transaction: Transaction) => Promise<void>;

export class TransactionService {
  /** Set by the wiring (src/app/services.ts): planning's rules, applied to each new transaction. */
  onCreated: CreatedHook | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly transactions: TransactionRepository,
    private readonly accounts: AccountRepository,
    private readonly categories: CategoryRepository,
    private readonly merchants: MerchantRepository,
    private readonly tags: TagRepository,
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
  ) {}

  async get(actor: Actor, id: string): Promise<TransactionRow> {
    const row = isUuid(id) ? await this.transactions.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Transaction");
    return row;
  }

  async list(
    actor: Actor,
    filter: TransactionListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: TransactionRow[]; pagination: PageInfo }> {
    const problems = new ValidationErrors();
    for (const [label, value] of [
      ["account_id", filter.accountId],
      ["category_id", filter.categoryId],
      ["merchant_id", filter.merchantId],
    ] as const) {
      if (value && !isUuid(value)) problems.add(`${label} is not a valid id`);
    }
    for (const [label, values] of [
      ["account_ids", filter.accountIds],
      ["category_ids", filter.categoryIds],
      ["merchant_ids", filter.merchantIds],
      ["tag_ids", filter.tagIds],
    ] as const) {
      if (values?.some((id) => !isUuid(id))) problems.add(`${label} contains an invalid id`);
      if (values && values.length > MAX_FILTER_IDS) problems.add(`${label} lists more than ${MAX_FILTER_IDS} ids`);
    }
    if (filter.type && filter.type !== "income" && filter.type !== "expense") problems.add("type must be income or expense");
    problems.throwIfAny();
    const request = clampPage(page, perPage, 25);
    const { minAmount, maxAmount, type, ...rest } = filter;
    const query: TransactionFilter = {
      ...rest,
      minSignedAmount: minAmount,
      maxSignedAmount: maxAmount,
      type: (type || undefined) as TransactionFilter["type"],
    };
    const { rows, total } = await this.transactions.page(actor.familyId, query, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /**
   * Creates a transaction, or returns the one already imported under the same external id (then
   * `created` is false and nothing is written).
   */
  async create(actor: Actor, input: TransactionInput): Promise<{ transaction: TransactionRow; created: boolean }> {
    const problems = new ValidationErrors();
    const account = await this.checkAccount(actor, problems, input.accountId);
    if (!input.date) problems.add("Date can't be blank");
    if (input.amount === null || input.amount === undefined) problems.add("Amount can't be blank");
    const name = requiredText(problems, "Name", input.name ?? input.description, NAME_MAX);
    const notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    const nature = this.checkNature(problems, input.nature);
    const currency = this.checkCurrency(problems, input.currency, account);
    // A blank external id is no idempotency key: stored as "" it would collide with the next blank one.
    const externalId = optionalText(problems, "External id", input.externalId, EXTERNAL_ID_MAX) || null;
    const source = optionalText(problems, "Source", input.source, EXTERNAL_ID_MAX);
    await this.checkReferences(actor, problems, input);
    problems.throwIfAny();

    if (externalId) {
      const existing = await this.transactions.byExternalId(account!.id, source, externalId);
      if (existing) return { transaction: existing, created: false };
    }
    const values = {
      id: newId(),
      familyId: actor.familyId,
      accountId: account!.id,
      date: input.date!,
      amount: applyNature(input.amount!, nature),
      currency: currency!,
      name,
      notes,
      categoryId: input.categoryId ?? null,
      merchantId: input.merchantId ?? null,
      pending: input.pending ?? false,
      externalId,
      source,
    };
    const id = values.id;
    try {
      await this.sequelize.transaction(async (transaction) => {
        await this.transactions.insert(values, transaction);
        await this.transactions.addTags(id, input.tagIds ?? [], transaction);
        // What the actor wrote; what the family's rules then change is recorded as their rule runs.
        await recordTransactionWrite(this.audit, transaction, {
          type: "transaction.created",
          actor,
          before: null,
          after: values,
          tagIds: { before: null, after: input.tagIds ?? [] },
        });
        await this.onCreated?.(actor.familyId, { count: 1, ids: [id] }, transaction);
        // Locked after the insert, in the refresh's round trip: a new row needs nothing read under the lock.
        await this.ledger.settle([{ accountId: account!.id, date: input.date! }], transaction);
      });
    } catch (error) {
      // A concurrent import of the same external id won the race: answer as the replay it is.
      if (externalId && (error as { name?: string }).name === "SequelizeUniqueConstraintError") {
        const existing = await this.transactions.byExternalId(account!.id, source, externalId);
        if (existing) return { transaction: existing, created: false };
      }
      throw error;
    }
    return { transaction: await this.get(actor, id), created: true };
  }

  /**
   * Many transactions written at once by set-based SQL of the caller (a file import), through the same
   * path as one: the accounts' ledger locks first, then `write`, then the family's rules on the new
   * rows and the balances from each day written, all in the caller's transaction.
   */
  async writeMany(
    familyId: string,
    accountIds: readonly string[],
    write: () => Promise<{ created: CreatedTransactions; days: Array<{ accountId: string; date: string }> }>,
    transaction: Transaction,
  ): Promise<number> {
    const lock = await this.ledger.lock(accountIds, transaction);
    const { created, days } = await write();
    if (created.count > 0) await this.onCreated?.(familyId, created, transaction);
    await this.ledger.recompute(lock, days, transaction);
    return created.count;
  }

  async update(actor: Actor, id: string, input: TransactionInput): Promise<TransactionRow> {
    const current = await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes: TransactionChanges = {};
    if (input.accountId !== undefined) {
      const account = await this.checkAccount(actor, problems, input.accountId);
      if (account) changes.accountId = account.id;
    }
    if (input.date !== undefined) {
      if (!input.date) problems.add("Date can't be blank");
      else changes.date = input.date;
    }
    if (input.name !== undefined || input.description !== undefined)
      changes.name = requiredText(problems, "Name", input.name ?? input.description, NAME_MAX);
    if (input.notes !== undefined) changes.notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    const nature = this.checkNature(problems, input.nature);
    if (input.amount === null) problems.add("Amount can't be blank");
    if (input.amount !== undefined || nature) changes.amount = applyNature(input.amount ?? current.amount, nature);
    if (input.currency !== undefined) changes.currency = this.checkCurrency(problems, input.currency, null) ?? undefined;
    if (input.pending !== undefined && input.pending !== null) changes.pending = input.pending;
    await this.checkReferences(actor, problems, input);
    if (input.categoryId !== undefined) changes.categoryId = input.categoryId;
    if (input.merchantId !== undefined) changes.merchantId = input.merchantId;
    problems.throwIfAny();

    // Moving an imported transaction into an account that already holds its external id breaks the unique index.
    await saveUnique("External id has already been imported into that account", () =>
      this.sequelize.transaction(async (transaction) => {
        const lock = await this.ledger.lock([current.accountId, changes.accountId ?? current.accountId], transaction);
        // Read again under the lock: a concurrent write may have moved it since.
        const before = await this.transactions.byId(actor.familyId, id, transaction);
        if (!before) throw new NotFoundError("Transaction");
        await this.transactions.update(actor.familyId, id, changes, transaction);
        const replacedTagIds = input.tagIds === undefined ? null : await this.transactions.replaceTags(id, input.tagIds ?? [], transaction);
        if (input.tagIds !== undefined && !replacedTagIds) throw new NotFoundError("Transaction");
        await recordTransactionWrite(this.audit, transaction, {
          type: "transaction.updated",
          actor,
          before,
          after: withChanges(before, changes),
          tagIds: replacedTagIds ? { before: replacedTagIds, after: input.tagIds ?? [] } : undefined,
        });
        await this.ledger.recompute(
          lock,
          [
            { accountId: before.accountId, date: before.date },
            { accountId: changes.accountId ?? before.accountId, date: changes.date ?? before.date },
          ],
          transaction,
        );
      }),
    );
    return this.get(actor, id);
  }

  /** Deletes one transaction. Deleting a transfer leg removes the transfer link, not the other leg. */
  async delete(actor: Actor, id: string): Promise<TransactionRow> {
    const current = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      const lock = await this.ledger.lock([current.accountId], transaction);
      // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
      if (!(await this.transactions.delete(actor.familyId, id, transaction))) throw new NotFoundError("Transaction");
      await recordTransactionWrite(this.audit, transaction, { type: "transaction.deleted", actor, before: current, after: null });
      await this.ledger.recompute(lock, [{ accountId: current.accountId, date: current.date }], transaction);
    });
    return current;
  }

  /** The family's transfers, newest first; `status` is upstream's, and every transfer here is confirmed. */
  async transfers(
    actor: Actor,
    filter: TransferListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: TransferView[]; pagination: PageInfo }> {
    const problems = new ValidationErrors();
    if (filter.accountId && !isUuid(filter.accountId)) problems.add("account_id is not a valid id");
    if (filter.status && !TRANSFER_STATUSES.includes(filter.status)) problems.add(`status must be one of ${TRANSFER_STATUSES.join(", ")}`);
    problems.throwIfAny();
    const request = clampPage(page, perPage, 25);
    if (filter.status && filter.status !== "confirmed") return { items: [], pagination: pageInfo(request, 0) };
    const { accountId, startDate, endDate } = filter;
    const { rows, total } = await this.transactions.transfersPage(
      actor.familyId,
      { accountId: accountId ?? undefined, startDate: startDate ?? undefined, endDate: endDate ?? undefined },
      request.perPage,
      offsetOf(request),
    );
    return { items: await this.withLegs(actor, rows), pagination: pageInfo(request, total) };
  }

  async transfer(actor: Actor, id: string): Promise<TransferView> {
    const { rows } = isUuid(id) ? await this.transactions.transfersPage(actor.familyId, { id }, 1, 0) : { rows: [] };
    if (rows.length === 0) throw new NotFoundError("Transfer");
    const [view] = await this.withLegs(actor, rows);
    return view;
  }

  private async withLegs(actor: Actor, links: TransferLink[]): Promise<TransferView[]> {
    const legs = new Map(
      (
        await this.transactions.byIds(
          actor.familyId,
          links.flatMap((link) => [link.outflowId, link.inflowId]),
        )
      ).map((row) => [row.id, row]),
    );
    return links.map((link) => ({
      id: link.id,
      createdAt: link.createdAt,
      outflow: legs.get(link.outflowId)!,
      inflow: legs.get(link.inflowId)!,
    }));
  }

  /** Moves money between two of the family's accounts as an outflow and an inflow leg. */
  async createTransfer(actor: Actor, input: TransferInput): Promise<{ id: string; outflow: TransactionRow; inflow: TransactionRow }> {
    const problems = new ValidationErrors();
    const from = await this.checkAccount(actor, problems, input.fromAccountId, "From account");
    const to = await this.checkAccount(actor, problems, input.toAccountId, "To account");
    if (from && to && from.id === to.id) problems.add("To account must differ from the from account");
    if (from && to && from.currency !== to.currency && !input.toAmount)
      problems.add("To amount is required when the accounts' currencies differ");
    const name = input.name?.trim() || (from && to ? `Transfer from ${from.name} to ${to.name}` : "Transfer");
    if (name.length > NAME_MAX) problems.add(`Name is too long (maximum is ${NAME_MAX} characters)`);
    const notes = optionalText(problems, "Notes", input.notes, NOTES_MAX);
    problems.throwIfAny();

    const transferId = newId();
    const outflowId = newId();
    const inflowId = newId();
    const leg = (id: string, account: AccountRow, amount: string) => ({
      id,
      familyId: actor.familyId,
      accountId: account.id,
      date: input.date,
      amount,
      currency: account.currency,
      name,
      notes,
    });
    await this.sequelize.transaction(async (transaction) => {
      const lock = await this.ledger.lock([from!.id, to!.id], transaction);
      const legs = [leg(outflowId, from!, absolute(input.amount)), leg(inflowId, to!, negate(absolute(input.toAmount ?? input.amount)))];
      await this.transactions.insertMany(legs, transaction);
      await this.transactions.insertTransfer(
        { id: transferId, familyId: actor.familyId, outflowTransactionId: outflowId, inflowTransactionId: inflowId },
        transaction,
      );
      await recordTransferCreated(this.audit, transaction, { actor, id: transferId, outflow: legs[0], inflow: legs[1] });
      await this.ledger.recompute(
        lock,
        [
          { accountId: from!.id, date: input.date },
          { accountId: to!.id, date: input.date },
        ],
        transaction,
      );
    });
    return { id: transferId, outflow: await this.get(actor, outflowId), inflow: await this.get(actor, inflowId) };
  }

  private async checkAccount(
    actor: Actor,
    problems: ValidationErrors,
    id: string | null | undefined,
    label = "Account",
  ): Promise<AccountRow | null> {
    if (!id) {
      problems.add(`${label} can't be blank`);
      return null;
    }
    const [account] = isUuid(id) ? await this.accounts.byIds(actor.familyId, [id]) : [null];
    if (!account) problems.add(`${label} not found`);
    return account;
  }

  private checkNature(problems: ValidationErrors, nature: string | null | undefined): "income" | "expense" | undefined {
    if (nature === null || nature === undefined || nature === "") return undefined;
    const normalized = NATURES[nature.toLowerCase()];
    if (!normalized) problems.add("Nature must be one of income, inflow, expense, outflow");
    return normalized;
  }

  private checkCurrency(problems: ValidationErrors, currency: string | null | undefined, account: AccountRow | null): string | null {
    if (currency === null || currency === undefined || currency === "") {
      if (!account) return null;
      return account.currency;
    }
    const code = currency.toUpperCase();
    if (!isKnownCurrency(code)) problems.add("Currency is not a valid ISO 4217 code");
    return code;
  }

  /** Category, merchant and tags must belong to the actor's family; another family's id reads as unknown. */
  private async checkReferences(actor: Actor, problems: ValidationErrors, input: TransactionInput): Promise<void> {
    const { categoryId, merchantId, tagIds } = input;
    if (categoryId) {
      const [category] = isUuid(categoryId) ? await this.categories.byIds(actor.familyId, [categoryId]) : [null];
      if (!category) problems.add("Category not found");
    }
    if (merchantId) {
      const [merchant] = isUuid(merchantId) ? await this.merchants.byIds(actor.familyId, [merchantId]) : [null];
      if (!merchant) problems.add("Merchant not found");
    }
    if (tagIds?.length) {
      const unique = [...new Set(tagIds)];
      const found = unique.every(isUuid) ? await this.tags.byIds(actor.familyId, unique) : [null];
      if (found.some((tag) => tag === null)) problems.add("Tag not found");
    }
  }
}
