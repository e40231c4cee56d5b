/** What other features use of transactions: the one entry into it (docs/architecture.md, feature entry files). */
export { transactionConditions } from "./transaction.filter";
export type { TransactionFilter } from "./transaction.filter";
export { magnitude, moneySql } from "./transaction.rules";
export type { CreatedTransactions, TransactionService } from "./transaction.service";
