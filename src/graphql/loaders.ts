import DataLoader from "dataloader";
import type { AccountRow } from "../accounts/account.repository";
import type { CategoryRow } from "../categories/category.repository";
import type { MerchantRow } from "../merchants/merchant.repository";
import type { Repositories } from "../services";
import type { TagRow } from "../tags/tag.repository";
import type { RelationIds, TransactionRow } from "../transactions/transaction.repository";

type RelationKind = "account" | "category" | "merchant" | "tagsOfTransaction";
type RelationKey = { kind: RelationKind; id: string };
type RelationValue = AccountRow | CategoryRow | MerchantRow | TagRow[] | null;

/** What a read-ahead fetches for a page of transactions. */
export type RelationKinds = { accounts: boolean; categories: boolean; merchants: boolean; tags: boolean };

/**
 * One set per request and family. Every lookup a resolver makes in the same tick (the account,
 * category, merchant and tags of each transaction of a page, and the transfers' other accounts) is
 * batched into one statement for all kinds: a round trip per kind cost more than the rows themselves.
 * The loader is created on first use so a request that needs none pays nothing.
 *
 * A resolver that knows which relations its result will be asked for can read them ahead for a whole
 * page (`prefetchRelationsOf`, the same one statement); lookups then answer synchronously, without a
 * promise per field and row, which dominated a page's cost.
 */
export class Loaders {
  private relationLoader?: DataLoader<RelationKey, RelationValue, string>;
  private readonly prefetched = new Map<string, RelationValue>();

  constructor(
    private readonly repositories: Repositories,
    private readonly familyId: string,
  ) {}

  account(id: string): AccountRow | null | Promise<AccountRow | null> {
    return this.relation({ kind: "account", id }) as AccountRow | null | Promise<AccountRow | null>;
  }

  category(id: string): CategoryRow | null | Promise<CategoryRow | null> {
    return this.relation({ kind: "category", id }) as CategoryRow | null | Promise<CategoryRow | null>;
  }

  merchant(id: string): MerchantRow | null | Promise<MerchantRow | null> {
    return this.relation({ kind: "merchant", id }) as MerchantRow | null | Promise<MerchantRow | null>;
  }

  tagsOfTransaction(transactionId: string): TagRow[] | Promise<TagRow[]> {
    return this.relation({ kind: "tagsOfTransaction", id: transactionId }) as TagRow[] | Promise<TagRow[]>;
  }

  /** Reads the chosen relations of these transactions in one statement, for the lookups that follow. */
  async prefetchRelationsOf(rows: readonly TransactionRow[], kinds: RelationKinds): Promise<void> {
    const keys: RelationKey[] = [];
    const add = (kind: RelationKind, id: string | null) => {
      if (id !== null && !this.prefetched.has(cacheKey({ kind, id }))) keys.push({ kind, id });
    };
    for (const row of rows) {
      if (kinds.accounts) add("account", row.accountId);
      if (kinds.accounts) add("account", row.transferOtherAccountId);
      if (kinds.categories) add("category", row.categoryId);
      if (kinds.merchants) add("merchant", row.merchantId);
      if (kinds.tags) add("tagsOfTransaction", row.id);
    }
    if (keys.length === 0) return;
    const unique = [...new Map(keys.map((key) => [cacheKey(key), key])).values()];
    const values = await this.loadRelations(unique);
    unique.forEach((key, index) => this.prefetched.set(cacheKey(key), values[index]));
  }

  private relation(key: RelationKey): RelationValue | Promise<RelationValue> {
    const cached = this.prefetched.get(cacheKey(key));
    return cached !== undefined ? cached : this.relations.load(key);
  }

  private get relations(): DataLoader<RelationKey, RelationValue, string> {
    return (this.relationLoader ??= new DataLoader((keys) => this.loadRelations(keys), { cacheKeyFn: cacheKey }));
  }

  private async loadRelations(keys: readonly RelationKey[]): Promise<RelationValue[]> {
    const ids: Record<RelationKind, string[]> = { account: [], category: [], merchant: [], tagsOfTransaction: [] };
    for (const { kind, id } of keys) ids[kind].push(id);
    const relations = await this.repositories.transactions.relations(this.familyId, {
      accountIds: ids.account,
      categoryIds: ids.category,
      merchantIds: ids.merchant,
      tagsOfTransactionIds: ids.tagsOfTransaction,
    } satisfies RelationIds);
    return keys.map(({ kind, id }) => {
      if (kind === "account") return relations.accounts.get(id) ?? null;
      if (kind === "category") return relations.categories.get(id) ?? null;
      if (kind === "merchant") return relations.merchants.get(id) ?? null;
      return relations.tagsOfTransaction.get(id)!;
    });
  }
}

function cacheKey({ kind, id }: RelationKey): string {
  return `${kind}:${id}`;
}
