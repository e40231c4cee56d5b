import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { requiredText } from "../../platform/common/validation";
import type { Sequelize, Transaction } from "sequelize";
import { recordWrite, type AuditEventName, type AuditService } from "../../audit/log";
import type { Actor } from "../../platform/security/actor";
import type { ExchangeRateService, RateInForce } from "../exchange-rates";
import type { LedgerService } from "../ledger";
import Decimal from "decimal.js";
import { isKnownCurrency, toAmountString } from "../money";
import { ACCOUNT_TYPES, classificationOf, type AccountType } from "./account.model";
import type { AccountChanges, AccountRepository, AccountRow } from "./account.repository";

export type BalanceSheet = { currency: string; assets: string; liabilities: string; netWorth: string };

/** The family's totals in its currency and, apart, what could not be converted into it. */
export type FamilyBalanceSheet = BalanceSheet & {
  /** Other currencies converted into the family's, with the rate used. */
  conversions: RateInForce[];
  /** Accounts in a currency without a rate: not in the totals above. */
  unconvertedAccounts: AccountRow[];
  /** Their totals, one per currency, never converted. */
  otherCurrencies: BalanceSheet[];
};

export type AccountInput = { name?: string | null; accountType?: string | null; currency?: string | null; balance?: string | null };

/** An account as its audit events show it: `balance` only when the write set one (the ledger derives the rest). */
type AuditedAccount = { name: string; accountType: string; classification: string; currency: string; balance?: string };
const AUDITED_FIELDS = ["name", "accountType", "classification", "currency", "balance"] as const;

export class AccountService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly accounts: AccountRepository,
    private readonly ledger: LedgerService,
    private readonly exchangeRates: ExchangeRateService,
    private readonly audit: AuditService,
  ) {}

  list(actor: Actor): Promise<AccountRow[]> {
    return this.accounts.list(actor.familyId);
  }

  async page(actor: Actor, page?: number | null, perPage?: number | null): Promise<{ items: AccountRow[]; pagination: PageInfo }> {
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.accounts.page(actor.familyId, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /**
   * Net worth, assets and liabilities in the family's currency from the accounts' ledger balances: an
   * account in another currency is converted with the newest rate the family entered on or before
   * today (docs/ledger.md#currencies); one without a rate is left out of them, listed, and totalled
   * apart in its own currency. Mixed currencies are never added as if they were one.
   */
  async balanceSheet(actor: Actor): Promise<FamilyBalanceSheet> {
    const accounts = await this.accounts.list(actor.familyId);
    const totals = await this.exchangeRates.totals(actor.familyId, accounts);
    const others = new Map<string, { assets: Decimal; liabilities: Decimal }>();
    for (const account of totals.unconverted) {
      const sums = others.get(account.currency) ?? { assets: new Decimal(0), liabilities: new Decimal(0) };
      if (account.classification === "liability") sums.liabilities = sums.liabilities.plus(account.balance);
      else sums.assets = sums.assets.plus(account.balance);
      others.set(account.currency, sums);
    }
    return {
      currency: totals.currency,
      assets: totals.assets,
      liabilities: totals.liabilities,
      netWorth: totals.netWorth,
      conversions: totals.conversions,
      unconvertedAccounts: totals.unconverted,
      otherCurrencies: [...others.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, sums]) => ({
          currency,
          assets: toAmountString(sums.assets),
          liabilities: toAmountString(sums.liabilities),
          netWorth: toAmountString(sums.assets.minus(sums.liabilities)),
        })),
    };
  }

  async get(actor: Actor, id: string): Promise<AccountRow> {
    const row = isUuid(id) ? await this.accounts.detail(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Account");
    return row;
  }

  async create(actor: Actor, input: AccountInput): Promise<AccountRow> {
    const id = await this.sequelize.transaction((transaction) => this.createIn(actor, input, transaction));
    return this.get(actor, id);
  }

  /**
   * Creates the account in the caller's transaction (an import creates several in one), opened at
   * its balance: on `openedOn` when given, else as the ledger dates an opening. Returns its id.
   */
  async createIn(actor: Actor, input: AccountInput, transaction: Transaction, openedOn: string | null = null): Promise<string> {
    const problems = new ValidationErrors();
    const name = requiredText(problems, "Name", input.name, 120);
    const accountType = checkAccountType(problems, input.accountType ?? null);
    const currency = input.currency
      ? checkCurrency(problems, input.currency)
      : await this.accounts.familyCurrency(actor.familyId, transaction);
    problems.throwIfAny();
    const id = newId();
    const fields = { name, accountType: accountType!, classification: classificationOf(accountType!), currency, balance: "0" };
    await this.accounts.create(actor.familyId, id, fields, transaction);
    // The balance it is opened with is its opening anchor's amount; the ledger derives the rest.
    await this.ledger.open(
      { id, familyId: actor.familyId, accountType: accountType!, currency },
      input.balance ?? "0",
      transaction,
      openedOn,
    );
    await this.record(
      actor,
      "finance_account.created",
      id,
      null,
      { ...fields, balance: toAmountString(input.balance ?? "0") },
      transaction,
    );
    return id;
  }

  /**
   * Changes the account's fields. A new balance is not stored: the ledger records it as upstream does
   * (LedgerService.setCurrentBalance), and a new type (or classification) re-derives the whole history.
   */
  async update(actor: Actor, id: string, input: AccountInput): Promise<AccountRow> {
    const current = await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes: AccountChanges = {};
    if (input.name !== undefined) changes.name = requiredText(problems, "Name", input.name, 120);
    if (input.accountType !== undefined) {
      const accountType = checkAccountType(problems, input.accountType);
      if (accountType) Object.assign(changes, { accountType, classification: classificationOf(accountType) });
    }
    if (input.currency !== undefined) changes.currency = checkCurrency(problems, input.currency ?? "");
    if (input.balance === null) problems.add("Balance can't be blank");
    problems.throwIfAny();
    await this.sequelize.transaction(async (transaction) => {
      await this.ledger.lock([id], transaction);
      await this.accounts.update(actor.familyId, id, changes, transaction);
      if (changes.accountType && changes.accountType !== current.accountType) await this.ledger.recomputeWhole([id], transaction);
      const balance = input.balance;
      if (balance !== undefined && balance !== null) {
        const [account] = await this.accounts.byIds(actor.familyId, [id], transaction);
        if (account) await this.ledger.setCurrentBalance({ ...account, familyId: actor.familyId }, balance, transaction);
      }
      const before = { ...current, balance: toAmountString(current.balance) };
      const after = { ...before, ...changes, ...(balance === undefined || balance === null ? {} : { balance: toAmountString(balance) }) };
      await this.record(actor, "finance_account.updated", id, before, after, transaction);
    });
    return this.get(actor, id);
  }

  /** Deletes the account and, with it, its transactions. */
  async delete(actor: Actor, id: string): Promise<AccountRow> {
    const account = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
      if (!(await this.accounts.delete(actor.familyId, id, transaction))) throw new NotFoundError("Account");
      await this.record(actor, "finance_account.deleted", id, { ...account, balance: toAmountString(account.balance) }, null, transaction);
    });
    return account;
  }

  private record(
    actor: Actor,
    type: AuditEventName & `finance_account.${string}`,
    id: string,
    before: AuditedAccount | null,
    after: AuditedAccount | null,
    transaction: Transaction,
  ): Promise<void> {
    return recordWrite(this.audit, transaction, {
      type,
      actor,
      resource: { type: "account", id, label: (after ?? before)!.name },
      before,
      after,
      fields: AUDITED_FIELDS,
    });
  }
}

function checkAccountType(problems: ValidationErrors, value: string | null): AccountType | null {
  if (!value) {
    problems.add("Account type can't be blank");
    return null;
  }
  if (!(ACCOUNT_TYPES as readonly string[]).includes(value)) {
    problems.add(`Account type must be one of ${ACCOUNT_TYPES.join(", ")}`);
    return null;
  }
  return value as AccountType;
}

function checkCurrency(problems: ValidationErrors, value: string): string {
  const code = value.toUpperCase();
  if (!isKnownCurrency(code)) problems.add("Currency is not a valid ISO 4217 code");
  return code;
}
