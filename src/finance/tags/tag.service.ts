import type { Sequelize, Transaction } from "sequelize";
import { recordWrite, type AuditEventName, type AuditService } from "../../audit/log";
import { NotFoundError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { checkColor, requiredText, saveUnique } from "../../platform/common/validation";
import type { Actor } from "../../platform/security/actor";
import type { TagFields, TagRepository, TagRow } from "./tag.repository";

export type TagInput = { name?: string | null; color?: string | null };

const NAME_TAKEN = "Name has already been taken";

/** The family's tags; every write records an audit event naming the actor, in the write's transaction. */
export class TagService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly tags: TagRepository,
    private readonly audit: AuditService,
  ) {}

  list(actor: Actor): Promise<TagRow[]> {
    return this.tags.list(actor.familyId);
  }

  async get(actor: Actor, id: string): Promise<TagRow> {
    const [row] = isUuid(id) ? await this.tags.byIds(actor.familyId, [id]) : [null];
    if (!row) throw new NotFoundError("Tag");
    return row;
  }

  async create(actor: Actor, input: TagInput): Promise<TagRow> {
    const problems = new ValidationErrors();
    const name = requiredText(problems, "Name", input.name, 60);
    const color = input.color ?? "#e99537";
    checkColor(problems, "Color", color);
    problems.throwIfAny();
    const id = newId();
    await saveUnique(NAME_TAKEN, () =>
      this.sequelize.transaction(async (transaction) => {
        await this.tags.create(actor.familyId, id, { name, color }, transaction);
        await this.record(actor, "tag.created", id, null, { name, color }, transaction);
      }),
    );
    return this.get(actor, id);
  }

  async update(actor: Actor, id: string, input: TagInput): Promise<TagRow> {
    const before = await this.get(actor, id);
    const problems = new ValidationErrors();
    const changes: Partial<TagFields> = {};
    if (input.name !== undefined) changes.name = requiredText(problems, "Name", input.name, 60);
    if (input.color !== undefined) {
      if (!input.color) problems.add("Color can't be blank");
      checkColor(problems, "Color", input.color);
      changes.color = input.color ?? undefined;
    }
    problems.throwIfAny();
    await saveUnique(NAME_TAKEN, () =>
      this.sequelize.transaction(async (transaction) => {
        await this.tags.update(actor.familyId, id, changes, transaction);
        await this.record(actor, "tag.updated", id, before, { ...before, ...changes }, transaction);
      }),
    );
    return this.get(actor, id);
  }

  async delete(actor: Actor, id: string): Promise<TagRow> {
    const tag = await this.get(actor, id);
    await this.sequelize.transaction(async (transaction) => {
      // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
      if (!(await this.tags.delete(actor.familyId, id, transaction))) throw new NotFoundError("Tag");
      await this.record(actor, "tag.deleted", id, tag, null, transaction);
    });
    return tag;
  }

  private record(
    actor: Actor,
    type: AuditEventName & `tag.${string}`,
    id: string,
    before: TagFields | null,
    after: TagFields | null,
    transaction: Transaction,
  ): Promise<void> {
    return recordWrite(this.audit, transaction, {
      type,
      actor,
      resource: { type: "tag", id, label: (after ?? before)!.name },
      before,
      after,
      fields: ["name", "color"],
    });
  }
}
