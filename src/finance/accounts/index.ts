/** What other features use of accounts: the one entry into it (docs/architecture.md, feature entry files). */
// The GraphQL classes below carry decorators that need the metadata API: a caller outside the schema
// (a worker, a test importing a service) loads them through this file.
import "reflect-metadata";
export { AccountModel, ACCOUNT_TYPES, classificationOf } from "./account.model";
export type { AccountService } from "./account.service";
/** `AccountKind` is the union of account kinds; `AccountType` is the GraphQL type of an account. */
export type { AccountType as AccountKind } from "./account.model";
export type { AccountRepository, AccountRow } from "./account.repository";
export { AccountType } from "./account.type";
