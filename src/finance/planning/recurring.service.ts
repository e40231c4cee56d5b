import Decimal from "decimal.js";
import type { Sequelize, Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import { NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import { isKnownCurrency } from "../money";
import { monthOf, today } from "./planning.money";
import { daysClusterTogether, expectedDay, nextExpectedDate, shiftDays, shiftMonths } from "./recurring.detect";
import { ownedBy, type DetectedPattern, type RecurringFields, type RecurringRepository, type RecurringRow } from "./recurring.repository";

export type RecurringInput = {
  name?: string | null;
  amount?: string | null;
  currency?: string | null;
  accountId?: string | null;
  merchantId?: string | null;
  expectedDayOfMonth?: number | null;
  lastOccurrenceDate?: string | null;
  nextExpectedDate?: string | null;
  status?: string | null;
  occurrenceCount?: number | null;
  manual?: boolean | null;
  expectedAmountMin?: string | null;
  expectedAmountMax?: string | null;
  expectedAmountAvg?: string | null;
};
export type RecurringUpdateInput = Pick<RecurringInput, "status" | "expectedDayOfMonth" | "nextExpectedDate">;

const STATUSES = ["active", "inactive"];
const NAME_MAX = 255;

/**
 * Recurring transactions (bills, subscriptions, salaries) as upstream models them: entered by hand,
 * or detected from the family's history with upstream's rules (docs/planning.md), each with its next
 * expected date and amount.
 */
export class RecurringService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly recurring: RecurringRepository,
    private readonly audit: AuditService,
  ) {}

  async list(
    actor: Actor,
    filter: { status?: string | null; accountId?: string | null },
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: RecurringRow[]; pagination: PageInfo }> {
    if (filter.accountId && !isUuid(filter.accountId)) throw new ValidationError(["account_id must be a valid UUID"]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.recurring.page(
      actor.familyId,
      { status: filter.status ?? undefined, accountId: filter.accountId ?? undefined },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async get(actor: Actor, id: string): Promise<RecurringRow> {
    const row = isUuid(id) ? await this.recurring.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Recurring transaction");
    return row;
  }

  /** Bills (active, money out) expected from today until `before` (default: the month's last day), soonest first. */
  async upcoming(actor: Actor, before?: string | null): Promise<RecurringRow[]> {
    const from = today();
    return this.recurring.upcoming(actor.familyId, from, before ?? monthOf(from).end);
  }

  async create(actor: Actor, input: RecurringInput): Promise<RecurringRow> {
    const problems = new ValidationErrors();
    const name = optionalText(problems, "Name", input.name, NAME_MAX) || null;
    if (input.amount === null || input.amount === undefined) problems.add("Amount can't be blank");
    if (!input.lastOccurrenceDate) problems.add("Last occurrence date can't be blank");
    if (!input.nextExpectedDate) problems.add("Next expected date can't be blank");
    this.checkDay(problems, input.expectedDayOfMonth, true);
    const status = input.status ?? "active";
    if (!STATUSES.includes(status)) problems.add("Status is not included in the list");
    if (input.occurrenceCount !== null && input.occurrenceCount !== undefined && input.occurrenceCount < 0)
      problems.add("Occurrence count must be greater than or equal to 0");
    if (!name && !input.merchantId) problems.add("Merchant or name must be present");
    const manual = input.manual ?? true;
    if (manual && input.expectedAmountMin && input.expectedAmountMax && new Decimal(input.expectedAmountMin).gt(input.expectedAmountMax))
      problems.add("Expected amount min cannot be greater than expected_amount_max");
    const currency = input.currency ? input.currency.toUpperCase() : await this.recurring.familyCurrency(actor.familyId);
    if (!isKnownCurrency(currency)) problems.add("Currency is not a valid ISO 4217 code");
    problems.throwIfAny();
    if (input.accountId && !(isUuid(input.accountId) && (await ownedBy(this.sequelize, actor.familyId, "accounts", input.accountId))))
      throw new NotFoundError("Account");
    if (input.merchantId && !(isUuid(input.merchantId) && (await ownedBy(this.sequelize, actor.familyId, "merchants", input.merchantId))))
      throw new NotFoundError("Merchant");
    const fields: RecurringFields = {
      accountId: input.accountId || null,
      merchantId: input.merchantId || null,
      name,
      amount: input.amount!,
      currency,
      expectedDayOfMonth: input.expectedDayOfMonth!,
      lastOccurrenceDate: input.lastOccurrenceDate!,
      nextExpectedDate: input.nextExpectedDate!,
      status,
      occurrenceCount: input.occurrenceCount ?? 0,
      manual,
      expectedAmountMin: input.expectedAmountMin ?? null,
      expectedAmountMax: input.expectedAmountMax ?? null,
      expectedAmountAvg: input.expectedAmountAvg ?? null,
    };
    const id = newId();
    await this.sequelize.transaction(async (transaction) => {
      await this.recurring.insert(actor.familyId, id, fields, transaction);
      await this.record(
        actor,
        "recurring_transaction.created",
        "create",
        (await this.recurring.byId(actor.familyId, id, transaction))!,
        null,
        transaction,
      );
    });
    return this.get(actor, id);
  }

  /** Changes what upstream lets a client change: status, expected day and next expected date. */
  async update(actor: Actor, id: string, input: RecurringUpdateInput): Promise<RecurringRow> {
    await this.get(actor, id);
    const problems = new ValidationErrors();
    if (input.status !== undefined && !STATUSES.includes(input.status ?? "")) problems.add("Status is not included in the list");
    this.checkDay(problems, input.expectedDayOfMonth, input.expectedDayOfMonth !== undefined);
    if (input.nextExpectedDate === null) problems.add("Next expected date can't be blank");
    problems.throwIfAny();
    await this.sequelize.transaction(async (transaction) => {
      const before = await this.recurring.byId(actor.familyId, id, transaction);
      if (!before) throw new NotFoundError("Recurring transaction");
      await this.recurring.update(
        actor.familyId,
        id,
        {
          status: input.status ?? undefined,
          expectedDayOfMonth: input.expectedDayOfMonth ?? undefined,
          nextExpectedDate: input.nextExpectedDate ?? undefined,
        },
        transaction,
      );
      await this.record(
        actor,
        "recurring_transaction.updated",
        "update",
        (await this.recurring.byId(actor.familyId, id, transaction))!,
        before,
        transaction,
      );
    });
    return this.get(actor, id);
  }

  async delete(actor: Actor, id: string): Promise<RecurringRow> {
    const current = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      if (!(await this.recurring.delete(actor.familyId, id, transaction))) throw new NotFoundError("Recurring transaction");
      await this.record(actor, "recurring_transaction.deleted", "delete", current, current, transaction, true);
    });
    return current;
  }

  /**
   * Detects recurring patterns in the last three months (upstream's rules: three or more transactions
   * of one account with the same merchant or name, amount and currency, the newest within 45 days,
   * their days of month clustered) and creates or refreshes one row each. Answers how many.
   */
  async detect(actor: Actor, asOf: string = today()): Promise<number> {
    const candidates = await this.recurring.candidates(actor.familyId, shiftMonths(asOf, -3), shiftDays(asOf, -45));
    const patterns: DetectedPattern[] = [];
    for (const { days, ...candidate } of candidates) {
      if (!daysClusterTogether(days)) continue;
      const day = expectedDay(days);
      patterns.push({ ...candidate, expectedDay: day, nextExpectedDate: nextExpectedDate(candidate.lastDate, day) });
    }
    return this.sequelize.transaction(async (transaction) => {
      const written = await this.recurring.upsertDetected(actor.familyId, patterns, transaction);
      await this.audit.record(transaction, {
        type: "recurring_transaction.detected",
        user: { id: actor.userId, email: actor.email },
        action: "detect",
        resource: { type: "family", id: actor.familyId, label: null },
        changes: { patterns: { old: null, new: written } },
      });
      return written;
    });
  }

  private checkDay(problems: ValidationErrors, day: number | null | undefined, required: boolean): void {
    if (day === null || day === undefined) {
      if (required) problems.add("Expected day of month can't be blank");
      return;
    }
    if (!Number.isInteger(day) || day < 1 || day > 31) problems.add("Expected day of month must be between 1 and 31");
  }

  private async record(
    actor: Actor,
    type: "recurring_transaction.created" | "recurring_transaction.updated" | "recurring_transaction.deleted",
    action: string,
    row: RecurringRow,
    before: RecurringRow | null,
    transaction: Transaction,
    deleted = false,
  ): Promise<void> {
    const fields = ["name", "amount", "currency", "status", "expectedDayOfMonth", "nextExpectedDate", "lastOccurrenceDate"] as const;
    const changes = Object.fromEntries(
      fields
        .map((field) => [field, { old: before ? String(before[field]) : null, new: deleted ? null : String(row[field]) }] as const)
        .filter(([, change]) => change.old !== change.new),
    );
    await this.audit.record(transaction, {
      type,
      user: { id: actor.userId, email: actor.email },
      action,
      resource: { type: "recurring_transaction", id: row.id, label: row.name ?? row.merchantName },
      changes,
    });
  }
}
