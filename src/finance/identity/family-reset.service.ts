import type { Sequelize } from "sequelize";
import type { AuditService } from "../../audit/log";
import { ValidationError } from "../../platform/common/errors";
import type { Actor } from "../../platform/security/actor";
import type { FamilyDataRepository, FamilyDataTable } from "./family-data.repository";
import type { RemovedRows } from "./user.repository";

/**
 * The keys of upstream's reset status counts (sure's Family::FinancialDataReset), each with the tables
 * of ours that hold those rows. Upstream's clients read this key set, so every key is answered, and the
 * kinds of data this service does not keep (statements, shares, uploaded files, Plaid items) are
 * truthfully zero.
 */
const UPSTREAM_COUNT_KEYS: ReadonlyArray<[string, FamilyDataTable[]]> = [
  ["account_statements", []],
  ["family_exports", ["family_exports"]],
  ["imports", ["imports"]],
  ["import_sessions", []],
  ["import_source_mappings", []],
  ["import_rows", ["import_rows"]],
  ["import_mappings", []],
  ["accounts", ["accounts"]],
  ["account_shares", []],
  ["account_providers", ["bank_provider_accounts"]],
  ["entries", ["transactions", "valuations", "trades"]],
  ["transactions", ["transactions"]],
  ["transfers", ["transfers"]],
  ["rejected_transfers", []],
  ["valuations", ["valuations"]],
  ["trades", ["trades"]],
  ["holdings", ["holdings", "positions"]],
  ["balances", ["ledger_days", "account_balances", "portfolio_days"]],
  ["recurring_transactions", ["recurring_transactions"]],
  ["rules", ["rules"]],
  ["rule_actions", ["rule_actions"]],
  ["rule_conditions", ["rule_conditions"]],
  ["rule_runs", ["rule_runs"]],
  ["budgets", ["budgets"]],
  ["budget_categories", ["budget_categories"]],
  ["categories", ["categories"]],
  ["tags", ["tags"]],
  ["taggings", ["transaction_tags"]],
  ["merchants", ["merchants"]],
  ["family_merchant_associations", []],
  ["provider_items", ["bank_connections"]],
  ["active_storage_attachments", []],
  ["plaid_items", []],
];

export type FamilyResetStatus = {
  status: "complete" | "data_remaining";
  familyId: string;
  resetComplete: boolean;
  /** Upstream's keys, as its clients read them. */
  counts: Record<string, number>;
  /** Our own tables, as the reset removes them. */
  tables: RemovedRows[];
};

export type FamilyReset = { familyId: string; removed: RemovedRows[] };

/**
 * A family's own reset (upstream's `DELETE /users/reset`): every row of its financial data deleted in
 * one transaction with the `family.reset` event naming the member who asked, while the users, their
 * credentials and sessions, the family itself and the audit log stay. Upstream queues a job; the
 * deletion here is a handful of set-based statements, so it runs in the request and its answer is final.
 */
export class FamilyResetService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly familyData: FamilyDataRepository,
    private readonly audit: AuditService,
  ) {}

  async currentStatus(actor: Actor): Promise<FamilyResetStatus> {
    const tables = await this.familyData.counts(actor.familyId);
    const byTable = new Map(tables.map(({ table, count }) => [table, count]));
    const counts = Object.fromEntries(
      UPSTREAM_COUNT_KEYS.map(([key, ours]) => [key, ours.reduce((sum, table) => sum + (byTable.get(table) ?? 0), 0)]),
    );
    const resetComplete = tables.every(({ count }) => count === 0);
    return { status: resetComplete ? "complete" : "data_remaining", familyId: actor.familyId, resetComplete, counts, tables };
  }

  /** `confirm` must be true: the GraphQL caller says so explicitly; the REST route's DELETE is its confirmation. */
  async reset(actor: Actor, confirm: boolean): Promise<FamilyReset> {
    if (!confirm) throw new ValidationError(["Confirm must be true to delete the family's financial data"]);
    return this.sequelize.transaction(async (transaction) => {
      await this.familyData.lockFamily(actor.familyId, transaction);
      const removed = await this.familyData.remove(actor.familyId, transaction);
      await this.audit.record(transaction, {
        type: "family.reset",
        user: { id: actor.userId, email: actor.email },
        action: "reset",
        resource: { type: "family", id: actor.familyId },
        changes: Object.fromEntries(removed.filter(({ count }) => count > 0).map(({ table, count }) => [table, { old: count, new: 0 }])),
      });
      return { familyId: actor.familyId, removed };
    });
  }
}
