// lint-as: src/finance/tags/planted.ts
// expect: architecture/feature-entry
// A feature importing another feature's file rather than its entry (index.ts).
export type { AccountRepository } from "../accounts/account.repository";
