/** What other features use of the ledger: the one entry into it (docs/architecture.md, feature entry files). */
export { cashPart } from "./balance.figures";
export type { LedgerService } from "./ledger.service";
export { LedgerAccountRefType } from "./ledger.type";
export { derivation } from "./derive.sql";
export { netWorthStatement, pointBalance, pointNeighbours, POINT_ROW_OF, POINT_ROWS } from "./series.sql";
export { INVESTED_ACCOUNT_TYPES, sqlList } from "./account-kinds";
