import type { Sequelize } from "sequelize";
import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid } from "../../platform/common/ids";
import { clampPage, pageInfo, type PageInfo } from "../../platform/common/pagination";
import type { Actor } from "../../platform/security/actor";
import { familyRow } from "./recurring.repository";

export type FamilySettings = {
  id: string;
  name: string;
  currency: string;
  locale: string;
  dateFormat: string;
  country: string;
  timezone: string | null;
  monthStartDay: number;
  moniker: string;
  defaultAccountSharing: string;
  customEnabledCurrencies: boolean;
  enabledCurrencies: string[];
  createdAt: Date;
  updatedAt: Date;
};

export type RejectedTransferFilter = { accountId?: string | null; startDate?: string | null; endDate?: string | null };

const ALL_CURRENCIES = Intl.supportedValuesOf("currency");

/**
 * The family's settings as upstream's clients read them, and its rejected transfer suggestions. This
 * service stores a family's name and currency only; every other setting is upstream's default, which
 * is also how the service behaves (calendar months, every currency enabled). Transfers are never
 * matched automatically here, so no suggestion can be rejected: the list is truthfully empty.
 */
export class HouseholdService {
  constructor(private readonly sequelize: Sequelize) {}

  async settings(actor: Actor): Promise<FamilySettings> {
    const family = await familyRow(this.sequelize, actor.familyId);
    if (!family) throw new NotFoundError("Family");
    return {
      ...family,
      locale: "en",
      dateFormat: "%m-%d-%Y",
      country: "US",
      timezone: null,
      monthStartDay: 1,
      moniker: "Family",
      defaultAccountSharing: "shared",
      customEnabledCurrencies: false,
      enabledCurrencies: [...ALL_CURRENCIES],
    };
  }

  async rejectedTransfers(
    filter: RejectedTransferFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: never[]; pagination: PageInfo }> {
    const problems = new ValidationErrors();
    if (filter.accountId && !isUuid(filter.accountId)) problems.add("account_id must be a valid UUID");
    problems.throwIfAny();
    return { items: [], pagination: pageInfo(clampPage(page, perPage, 25), 0) };
  }

  rejectedTransfer(): never {
    throw new NotFoundError("Rejected transfer");
  }
}
