import DataLoader from "dataloader";
import type { AccountRow } from "../accounts/account.repository";
import type { CategoryRow } from "../categories/category.repository";
import type { MerchantRow } from "../merchants/merchant.repository";
import type { Repositories } from "../services";
import type { TagRow } from "../tags/tag.repository";

/**
 * One set per request and family. Each loader turns the N lookups of a page into one statement;
 * they are created on first use so a request that needs none pays nothing.
 */
export class Loaders {
  private accountLoader?: DataLoader<string, AccountRow | null>;
  private categoryLoader?: DataLoader<string, CategoryRow | null>;
  private merchantLoader?: DataLoader<string, MerchantRow | null>;
  private tagsLoader?: DataLoader<string, TagRow[]>;

  constructor(
    private readonly repositories: Repositories,
    private readonly familyId: string,
  ) {}

  get account(): DataLoader<string, AccountRow | null> {
    return (this.accountLoader ??= new DataLoader((ids) => this.repositories.accounts.byIds(this.familyId, ids)));
  }

  get category(): DataLoader<string, CategoryRow | null> {
    return (this.categoryLoader ??= new DataLoader((ids) => this.repositories.categories.byIds(this.familyId, ids)));
  }

  get merchant(): DataLoader<string, MerchantRow | null> {
    return (this.merchantLoader ??= new DataLoader((ids) => this.repositories.merchants.byIds(this.familyId, ids)));
  }

  get tagsOfTransaction(): DataLoader<string, TagRow[]> {
    return (this.tagsLoader ??= new DataLoader((ids) => this.repositories.transactions.tagsOf(this.familyId, ids)));
  }
}
