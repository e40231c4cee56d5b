import DataLoader from "dataloader";
import type { AccountRow } from "../accounts/account.repository";
import type { CategoryRow } from "../categories/category.repository";
import type { MerchantRow } from "../merchants/merchant.repository";
import type { Repositories } from "../services";
import type { TagRow } from "../tags/tag.repository";
import type { RelationIds } from "../transactions/transaction.repository";

type RelationKind = "account" | "category" | "merchant" | "tagsOfTransaction";
type RelationKey = { kind: RelationKind; id: string };
type RelationValue = AccountRow | CategoryRow | MerchantRow | TagRow[] | null;

/**
 * One set per request and family. Every lookup a resolver makes in the same tick (the account,
 * category, merchant and tags of each transaction of a page, and the transfers' other accounts) is
 * batched into one statement for all kinds: a round trip per kind cost more than the rows themselves.
 * The loader is created on first use so a request that needs none pays nothing.
 */
export class Loaders {
  private relationLoader?: DataLoader<RelationKey, RelationValue, string>;

  constructor(
    private readonly repositories: Repositories,
    private readonly familyId: string,
  ) {}

  account(id: string): Promise<AccountRow | null> {
    return this.relations.load({ kind: "account", id }) as Promise<AccountRow | null>;
  }

  category(id: string): Promise<CategoryRow | null> {
    return this.relations.load({ kind: "category", id }) as Promise<CategoryRow | null>;
  }

  merchant(id: string): Promise<MerchantRow | null> {
    return this.relations.load({ kind: "merchant", id }) as Promise<MerchantRow | null>;
  }

  tagsOfTransaction(transactionId: string): Promise<TagRow[]> {
    return this.relations.load({ kind: "tagsOfTransaction", id: transactionId }) as Promise<TagRow[]>;
  }

  private get relations(): DataLoader<RelationKey, RelationValue, string> {
    return (this.relationLoader ??= new DataLoader((keys) => this.loadRelations(keys), { cacheKeyFn: ({ kind, id }) => `${kind}:${id}` }));
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
