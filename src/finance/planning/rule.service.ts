import type { Sequelize, Transaction } from "sequelize";
import type { AuditService } from "../../audit/log";
import { NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { CreatedTransactions } from "../transactions";
import { actionProblems, actionSql, conditionProblems, ruleScopeSql, type ActionSpec, type ConditionSpec } from "./rule.engine";
import type { RuleRepository, RuleRow, RuleRunFilter, RuleRunRow } from "./rule.repository";

export type ConditionInput = {
  conditionType?: string | null;
  operator?: string | null;
  value?: string | null;
  subConditions?: ConditionInput[] | null;
};
export type ActionInput = { actionType?: string | null; value?: string | null };
export type RuleInput = {
  name?: string | null;
  resourceType?: string | null;
  active?: boolean | null;
  effectiveDate?: string | null;
  conditions?: ConditionInput[] | null;
  actions?: ActionInput[] | null;
};
export type RuleRunListFilter = {
  ruleId?: string | null;
  status?: string | null;
  executionType?: string | null;
  startExecutedAt?: string | null;
  endExecutedAt?: string | null;
};

/** Upstream's paging block of the rules and rule-runs lists. */
export type PageMeta = PageInfo & { nextPage: number | null; prevPage: number | null };

export function pageMeta(info: PageInfo): PageMeta {
  return { ...info, nextPage: info.page < info.totalPages ? info.page + 1 : null, prevPage: info.page > 1 ? info.page - 1 : null };
}

const RUN_STATUSES = ["pending", "success", "failed"];
const EXECUTION_TYPES = ["manual", "scheduled"];
const NAME_MAX = 255;
const MAX_CONDITIONS = 50;

/** What one application of a rule did. */
export type RuleOutcome = { processed: number; modified: number };

/**
 * Categorisation rules as upstream's rule engine defines them (docs/planning.md): conditions on a
 * transaction's name, notes, amount, merchant, category, account or type, and actions setting its
 * category, merchant, name or adding a tag. A rule applies to new transactions as they are created
 * (REST, GraphQL, bank sync) and on demand to existing ones, always as one set-based statement per
 * action over the rows its conditions select, and every application is recorded as a rule run.
 */
export class RuleService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly rules: RuleRepository,
    private readonly audit: AuditService,
  ) {}

  async list(
    actor: Actor,
    filter: { resourceType?: string | null; active?: boolean | null },
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: RuleRow[]; meta: PageMeta }> {
    if (filter.resourceType && filter.resourceType !== "transaction")
      throw new ValidationError(["resource_type must be one of: transaction"]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.rules.page(
      actor.familyId,
      { resourceType: filter.resourceType ?? undefined, active: filter.active ?? undefined },
      request.perPage,
      offsetOf(request),
    );
    return { items: rows, meta: pageMeta(pageInfo(request, total)) };
  }

  async get(actor: Actor, id: string): Promise<RuleRow> {
    const row = isUuid(id) ? await this.rules.byId(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Rule");
    return row;
  }

  async create(actor: Actor, input: RuleInput): Promise<RuleRow> {
    const { fields, conditions, actions } = await this.check(actor, input, null);
    const id = newId();
    await this.sequelize.transaction(async (transaction) => {
      await this.rules.insert(actor.familyId, id, fields, transaction);
      await this.rules.replaceParts(id, conditions!, actions!, transaction);
      const after = (await this.rules.byId(actor.familyId, id, transaction))!;
      await this.record(actor, "rule.created", "create", after, describe(null), transaction);
    });
    return this.get(actor, id);
  }

  async update(actor: Actor, id: string, input: RuleInput): Promise<RuleRow> {
    const current = await this.get(actor, id);
    const { fields, conditions, actions } = await this.check(actor, input, current);
    await this.sequelize.transaction(async (transaction) => {
      await this.rules.update(actor.familyId, id, fields, transaction);
      if (conditions || actions)
        await this.rules.replaceParts(id, conditions ?? current.conditions, actions ?? current.actions, transaction);
      const after = await this.rules.byId(actor.familyId, id, transaction);
      if (!after) throw new NotFoundError("Rule");
      await this.record(actor, "rule.updated", "update", after, describe(current), transaction);
    });
    return this.get(actor, id);
  }

  async delete(actor: Actor, id: string): Promise<RuleRow> {
    const current = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      if (!(await this.rules.delete(actor.familyId, id, transaction))) throw new NotFoundError("Rule");
      await this.record(actor, "rule.deleted", "delete", current, describe(current), transaction, true);
    });
    return current;
  }

  /** Applies one rule (active or not) to every transaction of the family it selects, now. */
  async apply(actor: Actor, id: string): Promise<RuleRunRow> {
    const rule = await this.get(actor, id);
    const runId = newId();
    await this.sequelize.transaction(async (transaction) => {
      const outcome = await this.applyRule(actor.familyId, rule, null, transaction);
      await this.rules.insertRun(actor.familyId, this.run(runId, rule, "manual", outcome, outcome.processed), transaction);
      await this.audit.record(transaction, {
        type: "rule.applied",
        user: { id: actor.userId, email: actor.email },
        action: "apply",
        resource: { type: "rule", id: rule.id, label: rule.name },
        changes: {
          transactions_processed: { old: null, new: outcome.processed },
          transactions_modified: { old: null, new: outcome.modified },
        },
      });
    });
    return this.getRun(actor, runId);
  }

  /**
   * Applies the family's active rules to transactions just created, inside the transaction that
   * created them; each rule that selected any of them is recorded as a (scheduled) run.
   */
  async applyToNew(familyId: string, created: CreatedTransactions, transaction: Transaction): Promise<void> {
    if (created.count === 0) return;
    for (const rule of await this.rules.active(familyId, transaction)) {
      const outcome = await this.applyRule(familyId, rule, created, transaction);
      if (outcome.processed > 0)
        await this.rules.insertRun(familyId, this.run(newId(), rule, "scheduled", outcome, created.count), transaction);
    }
  }

  private async applyRule(
    familyId: string,
    rule: RuleRow,
    only: CreatedTransactions | null,
    transaction: Transaction,
  ): Promise<RuleOutcome> {
    const scope = (bind: unknown[]) => ruleScopeSql(familyId, rule, only, bind);
    const bind: unknown[] = [];
    const processed = await this.rules.count(
      `SELECT count(*)::int AS modified FROM transactions t WHERE ${scope(bind)}`,
      bind,
      transaction,
    );
    let modified = 0;
    if (processed > 0)
      for (const action of rule.actions) {
        const statement = actionSql(action, scope);
        modified += await this.rules.count(statement.sql, statement.bind, transaction);
      }
    return { processed, modified };
  }

  private run(id: string, rule: RuleRow, executionType: string, outcome: RuleOutcome, queued: number) {
    return {
      id,
      ruleId: rule.id,
      ruleName: rule.name,
      executionType,
      status: "success",
      transactionsQueued: queued,
      transactionsProcessed: outcome.processed,
      transactionsModified: outcome.modified,
      pendingJobsCount: 0,
      executedAt: new Date(),
      errorMessage: null,
    };
  }

  async listRuns(
    actor: Actor,
    filter: RuleRunListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: RuleRunRow[]; meta: PageMeta }> {
    const problems = new ValidationErrors();
    if (filter.ruleId && !isUuid(filter.ruleId)) problems.add("rule_id must be a valid UUID");
    if (filter.status && !RUN_STATUSES.includes(filter.status)) problems.add(`status must be one of: ${RUN_STATUSES.join(", ")}`);
    if (filter.executionType && !EXECUTION_TYPES.includes(filter.executionType))
      problems.add(`execution_type must be one of: ${EXECUTION_TYPES.join(", ")}`);
    const time = (label: string, value: string | null | undefined) => {
      if (!value) return undefined;
      const parsed = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? new Date(value) : new Date(NaN);
      if (Number.isNaN(parsed.getTime())) problems.add(`${label} must be an ISO 8601 timestamp`);
      return parsed;
    };
    const query: RuleRunFilter = {
      ruleId: filter.ruleId ?? undefined,
      status: filter.status ?? undefined,
      executionType: filter.executionType ?? undefined,
      startExecutedAt: time("start_executed_at", filter.startExecutedAt),
      endExecutedAt: time("end_executed_at", filter.endExecutedAt),
    };
    problems.throwIfAny();
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.rules.runsPage(actor.familyId, query, request.perPage, offsetOf(request));
    return { items: rows, meta: pageMeta(pageInfo(request, total)) };
  }

  async getRun(actor: Actor, id: string): Promise<RuleRunRow> {
    const row = isUuid(id) ? await this.rules.runById(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Rule run");
    return row;
  }

  private async check(
    actor: Actor,
    input: RuleInput,
    current: RuleRow | null,
  ): Promise<{
    fields: { name: string | null; active: boolean; effectiveDate: string | null };
    conditions?: ConditionSpec[];
    actions?: ActionSpec[];
  }> {
    const problems = new ValidationErrors();
    const name = input.name === undefined ? (current?.name ?? null) : optionalText(problems, "Name", input.name, NAME_MAX) || null;
    if (input.resourceType && input.resourceType !== "transaction") problems.add("Resource type must be transaction");
    const conditions = input.conditions?.map(toCondition) ?? (current ? undefined : []);
    const actions = input.actions?.map((action) => ({ actionType: action.actionType ?? "", value: action.value ?? null }));
    if (!current && (!actions || actions.length === 0)) problems.add("Rule must have at least one action");
    if (current && actions && actions.length === 0) problems.add("Rule must have at least one action");
    if (conditions && conditions.length > MAX_CONDITIONS) problems.add(`Rule can have at most ${MAX_CONDITIONS} conditions`);
    for (const condition of conditions ?? []) for (const problem of conditionProblems(condition)) problems.add(problem);
    for (const action of actions ?? []) for (const problem of actionProblems(action)) problems.add(problem);
    problems.throwIfAny();
    await this.checkReferences(actor, problems, conditions ?? [], actions ?? []);
    problems.throwIfAny();
    return {
      fields: {
        name,
        active: input.active ?? current?.active ?? true,
        effectiveDate: input.effectiveDate === undefined ? (current?.effectiveDate ?? null) : input.effectiveDate,
      },
      conditions,
      actions,
    };
  }

  /** Every id a rule names must be one of the family's own rows; another family's reads as unknown. */
  private async checkReferences(
    actor: Actor,
    problems: ValidationErrors,
    conditions: ConditionSpec[],
    actions: ActionSpec[],
  ): Promise<void> {
    const wanted: Record<"categories" | "merchants" | "tags" | "accounts", Set<string>> = {
      categories: new Set(),
      merchants: new Set(),
      tags: new Set(),
      accounts: new Set(),
    };
    const tableOf: Record<string, keyof typeof wanted> = {
      transaction_category: "categories",
      transaction_merchant: "merchants",
      transaction_account: "accounts",
      set_transaction_category: "categories",
      set_transaction_merchant: "merchants",
      set_transaction_tags: "tags",
    };
    const visit = (condition: ConditionSpec) => {
      condition.subConditions.forEach(visit);
      const table = tableOf[condition.conditionType];
      if (table && condition.operator !== "is_null" && condition.value) wanted[table].add(condition.value.trim());
    };
    conditions.forEach(visit);
    for (const action of actions) {
      const table = tableOf[action.actionType];
      if (table && action.value) wanted[table].add(action.value.trim());
    }
    for (const [table, ids] of Object.entries(wanted) as Array<[keyof typeof wanted, Set<string>]>) {
      const found = await this.rules.existing(actor.familyId, table, [...ids]);
      const label = { categories: "Category", merchants: "Merchant", tags: "Tag", accounts: "Account" }[table];
      if ([...ids].some((id) => !found.has(id))) problems.add(`${label} not found`);
    }
  }

  private async record(
    actor: Actor,
    type: "rule.created" | "rule.updated" | "rule.deleted",
    action: string,
    rule: RuleRow,
    before: Record<string, unknown>,
    transaction: Transaction,
    deleted = false,
  ): Promise<void> {
    const after = deleted ? describe(null) : describe(rule);
    await this.audit.record(transaction, {
      type,
      user: { id: actor.userId, email: actor.email },
      action,
      resource: { type: "rule", id: rule.id, label: rule.name },
      changes: Object.fromEntries(
        Object.keys(after)
          .filter((key) => JSON.stringify(before[key] ?? null) !== JSON.stringify(after[key] ?? null))
          .map((key) => [key, { old: before[key] ?? null, new: after[key] ?? null }]),
      ),
    });
  }
}

function toCondition(input: ConditionInput): ConditionSpec {
  return {
    conditionType: input.conditionType ?? "",
    operator: input.operator ?? "",
    value: input.value ?? null,
    subConditions: (input.subConditions ?? []).map(toCondition),
  };
}

/** A rule's fields as an audit event's changes show them. */
function describe(rule: RuleRow | null): Record<string, unknown> {
  const condition = (c: ConditionSpec): unknown => ({
    type: c.conditionType,
    operator: c.operator,
    value: c.value,
    sub: c.subConditions.map(condition),
  });
  return {
    name: rule?.name ?? null,
    active: rule?.active ?? null,
    effective_date: rule?.effectiveDate ?? null,
    conditions: rule ? rule.conditions.map(condition) : null,
    actions: rule ? rule.actions.map((a) => ({ type: a.actionType, value: a.value })) : null,
  };
}
