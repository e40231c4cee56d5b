/** What other features use of planning: the one entry into it (docs/architecture.md, feature entry files). */
// The GraphQL classes below carry decorators that need the metadata API: a caller outside the schema
// (a worker, a test importing a service) loads them through this file.
import "reflect-metadata";
export type { BudgetService } from "./budget.service";
export { RecurringRepository, type RecurringRow as PlannedRecurringRow } from "./recurring.repository";
export { PageMetaType } from "./rule.type";
export { pageMeta, type PageMeta } from "./rule.service";
export { FlagScalar } from "./planning.scalars";
