/** What other features use of accounts: the one entry into it (docs/architecture.md, feature entry files). */
export { AccountModel, classificationOf } from "./account.model";
/** `AccountKind` is the union of account kinds; `AccountType` is the GraphQL type of an account. */
export type { AccountType as AccountKind } from "./account.model";
export type { AccountRepository, AccountRow } from "./account.repository";
export { AccountType } from "./account.type";
