import type { Sequelize, Transaction } from "sequelize";
import { recordWrite, type AuditEventName, type AuditService } from "../../audit/log";
import { NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { checkColor, requiredText, saveUnique } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import { CATEGORY_CLASSIFICATIONS, type CategoryClassification } from "./category.model";
import type { CategoryFields, CategoryListFilter, CategoryRepository, CategoryRow } from "./category.repository";

export type CategoryInput = {
  name?: string | null;
  classification?: string | null;
  color?: string | null;
  icon?: string | null;
  parentId?: string | null;
};

const NAME_TAKEN = "Name has already been taken";
const ICON_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** The family's categories; every write records an audit event naming the actor, in the write's transaction. */
export class CategoryService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly categories: CategoryRepository,
    private readonly audit: AuditService,
  ) {}

  list(actor: Actor): Promise<CategoryRow[]> {
    return this.categories.list(actor.familyId);
  }

  /** A page by name; `rootsOnly` keeps top-level categories, `parentId` the subcategories of one (another family's: none). */
  async page(
    actor: Actor,
    filter: CategoryListFilter,
    page?: number | null,
    perPage?: number | null,
  ): Promise<{ items: CategoryRow[]; pagination: PageInfo }> {
    if (filter.parentId && !isUuid(filter.parentId)) throw new ValidationError(["parent_id is not a valid id"]);
    const request = clampPage(page, perPage, 25);
    const { rows, total } = await this.categories.page(actor.familyId, filter, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  async get(actor: Actor, id: string): Promise<CategoryRow> {
    const [row] = isUuid(id) ? await this.categories.byIds(actor.familyId, [id]) : [null];
    if (!row) throw new NotFoundError("Category");
    return row;
  }

  async create(actor: Actor, input: CategoryInput): Promise<CategoryRow> {
    const problems = new ValidationErrors();
    const fields = await this.check(
      actor,
      problems,
      { name: null, classification: "expense", color: "#737373", icon: "shapes", ...stripUndefined(input) },
      null,
    );
    problems.throwIfAny();
    const id = newId();
    await saveUnique(NAME_TAKEN, () =>
      this.sequelize.transaction(async (transaction) => {
        await this.categories.create(actor.familyId, id, fields as Required<CategoryFields>, transaction);
        await this.record(actor, "category.created", id, null, fields, transaction);
      }),
    );
    return this.get(actor, id);
  }

  async update(actor: Actor, id: string, input: CategoryInput): Promise<CategoryRow> {
    const before = await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes = await this.check(actor, problems, stripUndefined(input), id);
    problems.throwIfAny();
    await saveUnique(NAME_TAKEN, () =>
      this.sequelize.transaction(async (transaction) => {
        await this.categories.update(actor.familyId, id, changes, transaction);
        await this.record(actor, "category.updated", id, before, { ...before, ...changes }, transaction);
      }),
    );
    return this.get(actor, id);
  }

  /** Deletes the category; its transactions become uncategorised and its subcategories top-level. */
  async delete(actor: Actor, id: string): Promise<CategoryRow> {
    const category = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
      if (!(await this.categories.delete(actor.familyId, id, transaction))) throw new NotFoundError("Category");
      await this.record(actor, "category.deleted", id, category, null, transaction);
    });
    return category;
  }

  private record(
    actor: Actor,
    type: AuditEventName & `category.${string}`,
    id: string,
    before: Partial<CategoryFields> | null,
    after: Partial<CategoryFields> | null,
    transaction: Transaction,
  ): Promise<void> {
    return recordWrite(this.audit, transaction, {
      type,
      actor,
      resource: { type: "category", id, label: (after ?? before)!.name ?? id },
      before,
      after,
      fields: ["name", "classification", "color", "icon", "parentId"],
    });
  }

  /** Walks up from `categoryId`; true when `ancestorId` is on the way (a parent link would make a cycle). */
  private async isDescendantOrSelf(actor: Actor, categoryId: string, ancestorId: string): Promise<boolean> {
    const seen = new Set<string>();
    let current: string | null = categoryId;
    while (current && !seen.has(current)) {
      if (current === ancestorId) return true;
      seen.add(current);
      const [row] = await this.categories.byIds(actor.familyId, [current]);
      current = row?.parentId ?? null;
    }
    return false;
  }

  private async check(
    actor: Actor,
    problems: ValidationErrors,
    input: CategoryInput,
    selfId: string | null,
  ): Promise<Partial<CategoryFields>> {
    const fields: Partial<CategoryFields> = {};
    if ("name" in input) fields.name = requiredText(problems, "Name", input.name, 120);
    if ("classification" in input) {
      if (!(CATEGORY_CLASSIFICATIONS as readonly (string | null | undefined)[]).includes(input.classification)) {
        problems.add("Classification must be income or expense");
      } else fields.classification = input.classification as CategoryClassification;
    }
    if ("color" in input) {
      if (!input.color) problems.add("Color can't be blank");
      checkColor(problems, "Color", input.color);
      fields.color = input.color ?? undefined;
    }
    if ("icon" in input) {
      if (!input.icon || !ICON_PATTERN.test(input.icon)) problems.add("Icon must be a Lucide icon name like shopping-cart");
      fields.icon = input.icon ?? undefined;
    }
    if ("parentId" in input) {
      if (input.parentId) {
        const [parent] = isUuid(input.parentId) ? await this.categories.byIds(actor.familyId, [input.parentId]) : [null];
        if (!parent) problems.add("Parent category not found");
        else if (selfId && (await this.isDescendantOrSelf(actor, parent.id, selfId)))
          problems.add("A category cannot be placed under itself");
      }
      fields.parentId = input.parentId ?? null;
    }
    return fields;
  }
}

function stripUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}
