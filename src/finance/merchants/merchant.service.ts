import type { Sequelize, Transaction } from "sequelize";
import { recordWrite, type AuditEventName, type AuditService } from "../../audit/log";
import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { checkColor, checkHttpUrl, requiredText, saveUnique } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { MerchantFields, MerchantRepository, MerchantRow } from "./merchant.repository";

export type MerchantInput = { name?: string | null; color?: string | null; logoUrl?: string | null };

/** A merchant's name at most (an import's merchant column is held to it too). */
export const MERCHANT_NAME_MAX = 120;
const NAME_TAKEN = "Name has already been taken";

/** The family's merchants; every write records an audit event naming the actor, in the write's transaction. */
export class MerchantService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly merchants: MerchantRepository,
    private readonly audit: AuditService,
  ) {}

  async list(actor: Actor, page?: number | null, perPage?: number | null): Promise<{ items: MerchantRow[]; pagination: PageInfo }> {
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.merchants.page(actor.familyId, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async get(actor: Actor, id: string): Promise<MerchantRow> {
    const [row] = isUuid(id) ? await this.merchants.byIds(actor.familyId, [id]) : [null];
    if (!row) throw new NotFoundError("Merchant");
    return row;
  }

  async create(actor: Actor, input: MerchantInput): Promise<MerchantRow> {
    const problems = new ValidationErrors();
    const name = requiredText(problems, "Name", input.name, MERCHANT_NAME_MAX);
    checkColor(problems, "Color", input.color);
    checkHttpUrl(problems, "Logo url", input.logoUrl);
    if (name && (await this.merchants.nameTaken(actor.familyId, name))) problems.add(NAME_TAKEN);
    problems.throwIfAny();
    const id = newId();
    const fields: MerchantFields = { name, color: input.color ?? null, logoUrl: input.logoUrl ?? null };
    await saveUnique(NAME_TAKEN, () =>
      this.sequelize.transaction(async (transaction) => {
        await this.merchants.create(actor.familyId, id, fields, transaction);
        await this.record(actor, "merchant.created", id, null, fields, transaction);
      }),
    );
    return this.get(actor, id);
  }

  async update(actor: Actor, id: string, input: MerchantInput): Promise<MerchantRow> {
    const before = await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes: Partial<MerchantFields> = {};
    if (input.name !== undefined) {
      changes.name = requiredText(problems, "Name", input.name, MERCHANT_NAME_MAX);
      if (changes.name && (await this.merchants.nameTaken(actor.familyId, changes.name, id))) problems.add(NAME_TAKEN);
    }
    if (input.color !== undefined) {
      checkColor(problems, "Color", input.color);
      changes.color = input.color;
    }
    if (input.logoUrl !== undefined) {
      checkHttpUrl(problems, "Logo url", input.logoUrl);
      changes.logoUrl = input.logoUrl;
    }
    problems.throwIfAny();
    await saveUnique(NAME_TAKEN, () =>
      this.sequelize.transaction(async (transaction) => {
        await this.merchants.update(actor.familyId, id, changes, transaction);
        await this.record(actor, "merchant.updated", id, before, { ...before, ...changes }, transaction);
      }),
    );
    return this.get(actor, id);
  }

  async delete(actor: Actor, id: string): Promise<MerchantRow> {
    const merchant = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
      if (!(await this.merchants.delete(actor.familyId, id, transaction))) throw new NotFoundError("Merchant");
      await this.record(actor, "merchant.deleted", id, merchant, null, transaction);
    });
    return merchant;
  }

  private record(
    actor: Actor,
    type: AuditEventName & `merchant.${string}`,
    id: string,
    before: MerchantFields | null,
    after: MerchantFields | null,
    transaction: Transaction,
  ): Promise<void> {
    return recordWrite(this.audit, transaction, {
      type,
      actor,
      resource: { type: "merchant", id, label: (after ?? before)!.name },
      before,
      after,
      fields: ["name", "color", "logoUrl"],
    });
  }
}
