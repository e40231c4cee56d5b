import type { AccountRow } from "../accounts";
import type { CategoryRow } from "../categories";
import type { MerchantRow } from "../merchants";
import type { Repositories } from "../../app/services";
import type { TagRow } from "../tags";
import type { TransactionRow } from "./transaction.repository";
import type { RelationLookup } from "./transaction.type";

/** What a read-ahead fetches for transactions: the relations the query selects. */
export type RelationKinds = { accounts: boolean; categories: boolean; merchants: boolean; tags: boolean };

/**
 * One set per request and family. Whatever transactions a resolver returns, the relations the query
 * selects on them (accounts, transfer counterparts included, categories, merchants, tags) are read in
 * one statement for all kinds before the objects are built: a round trip per kind, or a lookup per
 * field and row, cost more than the rows themselves. What one read brought is kept for the rest of the
 * request, so a later read asks only for what is missing.
 */
export class TransactionRelationsReadAhead implements RelationLookup {
  private readonly accounts = new Map<string, AccountRow | null>();
  private readonly categories = new Map<string, CategoryRow | null>();
  private readonly merchants = new Map<string, MerchantRow | null>();
  private readonly tagsByTransaction = new Map<string, TagRow[]>();

  constructor(
    private readonly repositories: Repositories,
    private readonly familyId: string,
  ) {}

  account(id: string): AccountRow | null | undefined {
    return this.accounts.get(id);
  }

  category(id: string): CategoryRow | null | undefined {
    return this.categories.get(id);
  }

  merchant(id: string): MerchantRow | null | undefined {
    return this.merchants.get(id);
  }

  tagsOfTransaction(transactionId: string): TagRow[] | undefined {
    return this.tagsByTransaction.get(transactionId);
  }

  /** Reads the chosen relations of these transactions that this request has not read yet, in one statement. */
  async readRelationsOf(rows: readonly TransactionRow[], kinds: RelationKinds): Promise<void> {
    const missing = <Value>(known: Map<string, Value>, ids: Array<string | null>) => [
      ...new Set(ids.filter((id): id is string => id !== null && !known.has(id))),
    ];
    const accountIds = kinds.accounts
      ? missing(this.accounts, [...rows.map((row) => row.accountId), ...rows.map((row) => row.transferOtherAccountId)])
      : [];
    const categoryIds = kinds.categories
      ? missing(
          this.categories,
          rows.map((row) => row.categoryId),
        )
      : [];
    const merchantIds = kinds.merchants
      ? missing(
          this.merchants,
          rows.map((row) => row.merchantId),
        )
      : [];
    const tagsOfTransactionIds = kinds.tags
      ? missing(
          this.tagsByTransaction,
          rows.map((row) => row.id),
        )
      : [];
    if (accountIds.length + categoryIds.length + merchantIds.length + tagsOfTransactionIds.length === 0) return;
    const relations = await this.repositories.transactions.relations(this.familyId, {
      accountIds,
      categoryIds,
      merchantIds,
      tagsOfTransactionIds,
    });
    // An id the family does not own reads as null, as a relation that is gone would.
    for (const id of accountIds) this.accounts.set(id, relations.accounts.get(id) ?? null);
    for (const id of categoryIds) this.categories.set(id, relations.categories.get(id) ?? null);
    for (const id of merchantIds) this.merchants.set(id, relations.merchants.get(id) ?? null);
    for (const id of tagsOfTransactionIds) this.tagsByTransaction.set(id, relations.tagsOfTransaction.get(id)!);
  }
}
