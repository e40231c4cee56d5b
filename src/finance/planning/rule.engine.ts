import Decimal from "decimal.js";
import { isUuid } from "../../platform/common/ids";
import { bindParam, likePattern } from "../../platform/common/sql";
import { moneySql, type CreatedTransactions } from "../transactions";

/**
 * Upstream's rule registry for transactions: what a condition may test and what an action may set,
 * and the SQL each becomes. A rule's conditions become one WHERE over `transactions t`; each action one
 * set-based statement over the rows it selects (never a loop over transactions).
 */
export type ConditionSpec = { conditionType: string; operator: string; value: string | null; subConditions: ConditionSpec[] };
export type ActionSpec = { actionType: string; value: string | null };

const OPERATORS = {
  text: ["like", "=", "is_null"],
  number: [">", ">=", "<", "<=", "=", "!="],
  select: ["=", "is_null"],
} as const;

type Kind = keyof typeof OPERATORS;

/** Condition type → its kind and the column it reads. */
export const CONDITION_TYPES: Record<string, { kind: Kind; column: string }> = {
  transaction_name: { kind: "text", column: "t.name" },
  transaction_notes: { kind: "text", column: "t.notes" },
  transaction_amount: { kind: "number", column: "abs(t.amount)" },
  transaction_merchant: { kind: "select", column: "t.merchant_id" },
  transaction_category: { kind: "select", column: "t.category_id" },
  transaction_account: { kind: "select", column: "t.account_id" },
  transaction_type: { kind: "select", column: "" },
};

export const TRANSACTION_TYPES = ["income", "expense", "transfer"];

export const ACTION_TYPES = ["set_transaction_category", "set_transaction_merchant", "set_transaction_tags", "set_transaction_name"];

/** Problems of one condition tree, as sentences (empty: valid). */
export function conditionProblems(condition: ConditionSpec, depth = 0): string[] {
  if (condition.conditionType === "compound") {
    const problems: string[] = [];
    if (depth > 0) problems.push("Compound conditions cannot be nested");
    if (!["and", "or"].includes(condition.operator)) problems.push("Compound condition operator must be and or or");
    if (condition.subConditions.length === 0) problems.push("Compound condition needs at least one sub-condition");
    return [...problems, ...condition.subConditions.flatMap((sub) => conditionProblems(sub, depth + 1))];
  }
  const type = CONDITION_TYPES[condition.conditionType];
  if (!type) return [`Condition type must be one of ${[...Object.keys(CONDITION_TYPES), "compound"].join(", ")}`];
  const operators: readonly string[] = condition.conditionType === "transaction_type" ? ["="] : OPERATORS[type.kind];
  if (!operators.includes(condition.operator)) return [`Operator of ${condition.conditionType} must be one of ${operators.join(", ")}`];
  if (condition.operator === "is_null") return [];
  const value = condition.value?.trim() ?? "";
  if (!value) return [`Value of ${condition.conditionType} can't be blank`];
  if (type.kind === "number" && !/^\d+(\.\d+)?$/.test(value)) return [`Value of ${condition.conditionType} must be a number`];
  if (condition.conditionType === "transaction_type" && !TRANSACTION_TYPES.includes(value))
    return [`Value of transaction_type must be one of ${TRANSACTION_TYPES.join(", ")}`];
  if (type.kind === "select" && condition.conditionType !== "transaction_type" && !isUuid(value))
    return [`Value of ${condition.conditionType} must be a valid id`];
  return [];
}

export function actionProblems(action: ActionSpec): string[] {
  if (!ACTION_TYPES.includes(action.actionType)) return [`Action type must be one of ${ACTION_TYPES.join(", ")}`];
  const value = action.value?.trim() ?? "";
  if (!value) return [`Value of ${action.actionType} can't be blank`];
  if (action.actionType !== "set_transaction_name" && !isUuid(value)) return [`Value of ${action.actionType} must be a valid id`];
  return [];
}

const normalizedText = (column: string) => `btrim(regexp_replace(${column}, '[[:space:]]+', ' ', 'g'))`;

/** One condition as SQL over `transactions t`; values only through bind parameters. */
export function conditionSql(condition: ConditionSpec, bind: unknown[]): string {
  if (condition.conditionType === "compound") {
    const parts = condition.subConditions.map((sub) => conditionSql(sub, bind));
    return parts.length ? `(${parts.join(condition.operator === "or" ? " OR " : " AND ")})` : "TRUE";
  }
  const { kind, column } = CONDITION_TYPES[condition.conditionType];
  const value = (condition.value ?? "").replace(/\s+/g, " ").trim();
  if (condition.conditionType === "transaction_type") {
    if (value === "transfer") return moneySql.isTransfer("t");
    return value === "income" ? moneySql.isIncome("t") : moneySql.isExpense("t");
  }
  if (condition.operator === "is_null") return `${column} IS NULL`;
  if (kind === "text") {
    if (condition.operator === "like") return `${normalizedText(column)} ILIKE ${bindParam(bind, likePattern(value))}`;
    return `${normalizedText(column)} = ${bindParam(bind, value)}`;
  }
  if (kind === "number") return `${column} ${condition.operator} ${bindParam(bind, new Decimal(value).toFixed())}::numeric`;
  return `${column} = ${bindParam(bind, value)}::uuid`;
}

/** The WHERE of a rule: the family, its effective date, its conditions all true, and optionally only some transactions. */
export function ruleScopeSql(
  familyId: string,
  rule: { effectiveDate: string | null; conditions: ConditionSpec[] },
  only: CreatedTransactions | null,
  bind: unknown[],
): string {
  const where = [`t.family_id = ${bindParam(bind, familyId)}`];
  if (rule.effectiveDate) where.push(`t.date >= ${bindParam(bind, rule.effectiveDate)}`);
  if (only) where.push("ids" in only ? `t.id = ANY(${bindParam(bind, only.ids)}::uuid[])` : `t.id IN (SELECT id FROM ${only.relation})`);
  for (const condition of rule.conditions) where.push(conditionSql(condition, bind));
  return where.join(" AND ");
}

/** One action as one statement over the rule's transactions, answering how many rows it changed. */
export function actionSql(action: ActionSpec, scope: (bind: unknown[]) => string): { sql: string; bind: unknown[] } {
  const bind: unknown[] = [];
  const where = scope(bind);
  const value = action.value!.trim();
  if (action.actionType === "set_transaction_tags") {
    const tag = bindParam(bind, value);
    return {
      sql: `WITH changed AS (INSERT INTO transaction_tags (transaction_id, tag_id) SELECT t.id, g.id FROM transactions t JOIN tags g ON g.id = ${tag}::uuid AND g.family_id = t.family_id WHERE ${where}
              ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*)::int AS modified FROM changed`,
      bind,
    };
  }
  const column = { set_transaction_category: "category_id", set_transaction_merchant: "merchant_id", set_transaction_name: "name" }[
    action.actionType
  ]!;
  const cast = column === "name" ? "::text" : "::uuid";
  const param = bindParam(bind, value);
  // A category or merchant deleted since the rule was saved sets nothing.
  const target = { category_id: "categories", merchant_id: "merchants", name: "" }[column];
  const exists = target ? ` AND EXISTS (SELECT 1 FROM ${target} x WHERE x.id = ${param}${cast} AND x.family_id = t.family_id)` : "";
  return {
    sql: `WITH changed AS (UPDATE transactions t SET ${column} = ${param}${cast}, updated_at = now()
            WHERE ${where} AND t.${column} IS DISTINCT FROM ${param}${cast}${exists} RETURNING 1) SELECT count(*)::int AS modified FROM changed`,
    bind,
  };
}
