import type { Sequelize, Transaction } from "sequelize";
import { newId } from "../../platform/common/ids";
import { bindParam, selectRows } from "../../platform/common/sql";
import type { ActionSpec, ConditionSpec } from "./rule.engine";

export type ConditionRow = ConditionSpec & {
  id: string;
  parentId: string | null;
  createdAt: Date;
  updatedAt: Date;
  subConditions: ConditionRow[];
};
export type ActionRow = ActionSpec & { id: string; createdAt: Date; updatedAt: Date };

export type RuleRow = {
  id: string;
  name: string | null;
  resourceType: string;
  active: boolean;
  effectiveDate: string | null;
  createdAt: Date;
  updatedAt: Date;
  conditions: ConditionRow[];
  actions: ActionRow[];
};

export type RuleFields = { name: string | null; active: boolean; effectiveDate: string | null };

export type RuleRunRow = {
  id: string;
  ruleId: string | null;
  ruleName: string | null;
  executionType: string;
  status: string;
  transactionsQueued: number;
  transactionsProcessed: number;
  transactionsModified: number;
  pendingJobsCount: number;
  executedAt: Date;
  errorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
  ruleResourceType: string | null;
  ruleActive: boolean | null;
  ruleCurrentName: string | null;
};

export type RuleRunFilter = { ruleId?: string; status?: string; executionType?: string; startExecutedAt?: Date; endExecutedAt?: Date };

const RULE_COLUMNS = `r.id, r.name, r.resource_type AS "resourceType", r.active, r.effective_date::text AS "effectiveDate",
  r.created_at AS "createdAt", r.updated_at AS "updatedAt"`;

const RUN_COLUMNS = `u.id, u.rule_id AS "ruleId", u.rule_name AS "ruleName", u.execution_type AS "executionType", u.status,
  u.transactions_queued AS "transactionsQueued", u.transactions_processed AS "transactionsProcessed",
  u.transactions_modified AS "transactionsModified", u.pending_jobs_count AS "pendingJobsCount", u.executed_at AS "executedAt",
  u.error_message AS "errorMessage", u.created_at AS "createdAt", u.updated_at AS "updatedAt",
  r.resource_type AS "ruleResourceType", r.active AS "ruleActive", r.name AS "ruleCurrentName"`;

export class RuleRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async page(
    familyId: string,
    filter: { resourceType?: string; active?: boolean },
    limit: number,
    offset: number,
  ): Promise<{ rows: RuleRow[]; total: number }> {
    const bind: unknown[] = [];
    const where = [`r.family_id = ${bindParam(bind, familyId)}`];
    if (filter.resourceType) where.push(`r.resource_type = ${bindParam(bind, filter.resourceType)}`);
    if (filter.active !== undefined) where.push(`r.active = ${bindParam(bind, filter.active)}`);
    const [{ total }] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM rules r WHERE ${where.join(" AND ")}`,
      bind,
    );
    const rows = await selectRows<RuleRow>(
      this.sequelize,
      `SELECT ${RULE_COLUMNS} FROM rules r WHERE ${where.join(" AND ")} ORDER BY r.created_at, r.id
       LIMIT ${bindParam(bind, limit)} OFFSET ${bindParam(bind, offset)}`,
      bind,
    );
    return { rows: await this.withParts(rows), total: Number(total) };
  }

  async byId(familyId: string, id: string, transaction?: Transaction): Promise<RuleRow | null> {
    const rows = await selectRows<RuleRow>(
      this.sequelize,
      `SELECT ${RULE_COLUMNS} FROM rules r WHERE r.family_id = $1 AND r.id = $2`,
      [familyId, id],
      transaction,
    );
    return (await this.withParts(rows, transaction))[0] ?? null;
  }

  /** The family's active rules, oldest first (the order they apply in). */
  async active(familyId: string, transaction?: Transaction): Promise<RuleRow[]> {
    const rows = await selectRows<RuleRow>(
      this.sequelize,
      `SELECT ${RULE_COLUMNS} FROM rules r WHERE r.family_id = $1 AND r.active ORDER BY r.created_at, r.id`,
      [familyId],
      transaction,
    );
    return this.withParts(rows, transaction);
  }

  private async withParts(rules: RuleRow[], transaction?: Transaction): Promise<RuleRow[]> {
    if (rules.length === 0) return rules;
    const ids = rules.map((rule) => rule.id);
    const conditions = await selectRows<ConditionRow & { ruleId: string }>(
      this.sequelize,
      `SELECT id, rule_id AS "ruleId", parent_id AS "parentId", condition_type AS "conditionType", operator, value,
              created_at AS "createdAt", updated_at AS "updatedAt" FROM rule_conditions WHERE rule_id = ANY($1::uuid[]) ORDER BY position, id`,
      [ids],
      transaction,
    );
    const actions = await selectRows<ActionRow & { ruleId: string }>(
      this.sequelize,
      `SELECT id, rule_id AS "ruleId", action_type AS "actionType", value, created_at AS "createdAt", updated_at AS "updatedAt"
       FROM rule_actions WHERE rule_id = ANY($1::uuid[]) ORDER BY position, id`,
      [ids],
      transaction,
    );
    const byId = new Map(conditions.map((condition) => [condition.id, { ...condition, subConditions: [] as ConditionRow[] }]));
    for (const condition of byId.values()) if (condition.parentId) byId.get(condition.parentId)?.subConditions.push(condition);
    return rules.map((rule) => ({
      ...rule,
      conditions: [...byId.values()].filter((condition) => condition.ruleId === rule.id && !condition.parentId),
      actions: actions.filter((action) => action.ruleId === rule.id),
    }));
  }

  async insert(familyId: string, id: string, fields: RuleFields, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`INSERT INTO rules (id, family_id, name, active, effective_date) VALUES ($1, $2, $3, $4, $5)`, {
      bind: [id, familyId, fields.name, fields.active, fields.effectiveDate],
      transaction,
    });
  }

  async update(familyId: string, id: string, fields: RuleFields, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE rules SET name = $3, active = $4, effective_date = $5, updated_at = now() WHERE family_id = $1 AND id = $2`,
      { bind: [familyId, id, fields.name, fields.active, fields.effectiveDate], transaction },
    );
  }

  async delete(familyId: string, id: string, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      "DELETE FROM rules WHERE family_id = $1 AND id = $2 RETURNING id",
      [familyId, id],
      transaction,
    );
    return rows.length > 0;
  }

  /** Replaces a rule's conditions (with their sub-conditions) and actions. */
  async replaceParts(ruleId: string, conditions: ConditionSpec[], actions: ActionSpec[], transaction: Transaction): Promise<void> {
    await this.sequelize.query("DELETE FROM rule_conditions WHERE rule_id = $1", { bind: [ruleId], transaction });
    await this.sequelize.query("DELETE FROM rule_actions WHERE rule_id = $1", { bind: [ruleId], transaction });
    const rows: Array<[string, string | null, number, string, string, string | null]> = [];
    conditions.forEach((condition, position) => {
      const id = newId();
      rows.push([id, null, position, condition.conditionType, condition.operator, condition.value]);
      condition.subConditions.forEach((sub, subPosition) =>
        rows.push([newId(), id, subPosition, sub.conditionType, sub.operator, sub.value]),
      );
    });
    if (rows.length > 0)
      await this.sequelize.query(
        `INSERT INTO rule_conditions (id, rule_id, parent_id, position, condition_type, operator, value)
         SELECT v.id, $1, v.parent_id, v.position, v.condition_type, v.operator, v.value
         FROM unnest($2::uuid[], $3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[]) AS v(id, parent_id, position, condition_type, operator, value)`,
        { bind: [ruleId, ...[0, 1, 2, 3, 4, 5].map((column) => rows.map((row) => row[column]))], transaction },
      );
    if (actions.length > 0)
      await this.sequelize.query(
        `INSERT INTO rule_actions (id, rule_id, position, action_type, value)
         SELECT gen_random_uuid(), $1, v.position, v.action_type, v.value
         FROM unnest($2::int[], $3::text[], $4::text[]) AS v(position, action_type, value)`,
        {
          bind: [
            ruleId,
            actions.map((_, position) => position),
            actions.map((action) => action.actionType),
            actions.map((action) => action.value),
          ],
          transaction,
        },
      );
  }

  /** Counts, per kind, which of the values exist in the family (to refuse rules naming another family's rows). */
  async existing(familyId: string, table: "categories" | "merchants" | "tags" | "accounts", ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await selectRows<{ id: string }>(this.sequelize, `SELECT id FROM ${table} WHERE family_id = $1 AND id = ANY($2::uuid[])`, [
      familyId,
      ids,
    ]);
    return new Set(rows.map((row) => row.id));
  }

  /** Runs a statement inside the caller's transaction and answers its one count. */
  async count(sql: string, bind: unknown[], transaction?: Transaction): Promise<number> {
    const [row] = await selectRows<{ modified: number }>(this.sequelize, sql, bind, transaction);
    return Number(row.modified);
  }

  async insertRun(
    familyId: string,
    run: Omit<RuleRunRow, "createdAt" | "updatedAt" | "ruleResourceType" | "ruleActive" | "ruleCurrentName">,
    transaction: Transaction,
  ): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO rule_runs (id, family_id, rule_id, rule_name, execution_type, status, transactions_queued, transactions_processed,
         transactions_modified, pending_jobs_count, executed_at, error_message) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      {
        bind: [
          run.id,
          familyId,
          run.ruleId,
          run.ruleName,
          run.executionType,
          run.status,
          run.transactionsQueued,
          run.transactionsProcessed,
          run.transactionsModified,
          run.pendingJobsCount,
          run.executedAt,
          run.errorMessage,
        ],
        transaction,
      },
    );
  }

  async runsPage(familyId: string, filter: RuleRunFilter, limit: number, offset: number): Promise<{ rows: RuleRunRow[]; total: number }> {
    const bind: unknown[] = [];
    const where = [`u.family_id = ${bindParam(bind, familyId)}`];
    if (filter.ruleId) where.push(`u.rule_id = ${bindParam(bind, filter.ruleId)}`);
    if (filter.status) where.push(`u.status = ${bindParam(bind, filter.status)}`);
    if (filter.executionType) where.push(`u.execution_type = ${bindParam(bind, filter.executionType)}`);
    if (filter.startExecutedAt) where.push(`u.executed_at >= ${bindParam(bind, filter.startExecutedAt)}`);
    if (filter.endExecutedAt) where.push(`u.executed_at <= ${bindParam(bind, filter.endExecutedAt)}`);
    const [{ total }] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM rule_runs u WHERE ${where.join(" AND ")}`,
      bind,
    );
    const rows = await selectRows<RuleRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM rule_runs u LEFT JOIN rules r ON r.id = u.rule_id WHERE ${where.join(" AND ")}
       ORDER BY u.executed_at DESC, u.id LIMIT ${bindParam(bind, limit)} OFFSET ${bindParam(bind, offset)}`,
      bind,
    );
    return { rows, total: Number(total) };
  }

  async runById(familyId: string, id: string): Promise<RuleRunRow | null> {
    const [row] = await selectRows<RuleRunRow>(
      this.sequelize,
      `SELECT ${RUN_COLUMNS} FROM rule_runs u LEFT JOIN rules r ON r.id = u.rule_id WHERE u.family_id = $1 AND u.id = $2`,
      [familyId, id],
    );
    return row ?? null;
  }
}
