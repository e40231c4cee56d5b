import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { requiredText } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import Decimal from "decimal.js";
import { isKnownCurrency, toAmountString } from "../money";
import { ACCOUNT_TYPES, classificationOf, type AccountType } from "./account.model";
import type { AccountFields, AccountRepository, AccountRow } from "./account.repository";

export type BalanceSheet = { currency: string; assets: string; liabilities: string; netWorth: string };

export type AccountInput = { name?: string | null; accountType?: string | null; currency?: string | null; balance?: string | null };

export class AccountService {
  constructor(private readonly accounts: AccountRepository) {}

  list(actor: Actor): Promise<AccountRow[]> {
    return this.accounts.list(actor.familyId);
  }

  async page(actor: Actor, page?: number | null, perPage?: number | null): Promise<{ items: AccountRow[]; pagination: PageInfo }> {
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.accounts.page(actor.familyId, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /**
   * Net worth, assets and liabilities per currency, the family's currency first. Balances are never
   * converted: there are no exchange rates here, so each currency gets its own totals.
   */
  async balanceSheet(actor: Actor): Promise<BalanceSheet[]> {
    return (await this.accounts.totalsByCurrency(actor.familyId)).map(({ currency, assets, liabilities }) => ({
      currency,
      assets: toAmountString(assets),
      liabilities: toAmountString(liabilities),
      netWorth: toAmountString(new Decimal(assets).minus(liabilities)),
    }));
  }

  async get(actor: Actor, id: string): Promise<AccountRow> {
    const row = isUuid(id) ? await this.accounts.detail(actor.familyId, id) : null;
    if (!row) throw new NotFoundError("Account");
    return row;
  }

  async create(actor: Actor, input: AccountInput): Promise<AccountRow> {
    const problems = new ValidationErrors();
    const name = requiredText(problems, "Name", input.name, 120);
    const accountType = checkAccountType(problems, input.accountType ?? null);
    const currency = input.currency ? checkCurrency(problems, input.currency) : await this.accounts.familyCurrency(actor.familyId);
    problems.throwIfAny();
    const id = newId();
    await this.accounts.create(actor.familyId, id, {
      name,
      accountType: accountType!,
      classification: classificationOf(accountType!),
      currency,
      balance: input.balance ?? "0",
    });
    return this.get(actor, id);
  }

  async update(actor: Actor, id: string, input: AccountInput): Promise<AccountRow> {
    await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes: Partial<AccountFields> = {};
    if (input.name !== undefined) changes.name = requiredText(problems, "Name", input.name, 120);
    if (input.accountType !== undefined) {
      const accountType = checkAccountType(problems, input.accountType);
      if (accountType) Object.assign(changes, { accountType, classification: classificationOf(accountType) });
    }
    if (input.currency !== undefined) changes.currency = checkCurrency(problems, input.currency ?? "");
    if (input.balance !== undefined) {
      if (input.balance === null) problems.add("Balance can't be blank");
      else changes.balance = input.balance;
    }
    problems.throwIfAny();
    await this.accounts.update(actor.familyId, id, changes);
    return this.get(actor, id);
  }

  /** Deletes the account and, with it, its transactions. */
  async delete(actor: Actor, id: string): Promise<AccountRow> {
    const account = await this.get(actor, id);
    // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
    if (!(await this.accounts.delete(actor.familyId, id))) throw new NotFoundError("Account");
    return account;
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
