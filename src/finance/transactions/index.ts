/** What other features use of transactions: the one entry into it (docs/architecture.md, feature entry files). */
export { transactionConditions } from "./transaction.filter";
export type { TransactionFilter } from "./transaction.filter";
export { magnitude, moneySql } from "./transaction.rules";
export type { CreatedTransactions, TransactionService } from "./transaction.service";
// Upstream's POST /trades makes a deposit or a withdrawal on an investment account a transaction or a transfer.
export { withSelectedRelations } from "./transaction.resolver";
export { TransactionType, TransferPayload } from "./transaction.type";
