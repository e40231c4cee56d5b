import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import type { CategoryRow } from "./category.repository";
import { CategoryInput, CategoryPageType, CategoryParentType, CategoryType } from "./category.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";

@Resolver(() => CategoryType)
export class CategoryResolver {
  @Authorized()
  @Query(() => [CategoryType], { description: "The family's categories ordered by name." })
  categories(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor) {
    return services.categories.list(actor);
  }

  @Authorized()
  @Query(() => CategoryPageType, { description: "The family's categories ordered by name, a page at a time." })
  categoryPage(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
    @Arg("rootsOnly", () => Boolean, { nullable: true, description: "Only top-level categories." }) rootsOnly?: boolean,
    @Arg("parentId", () => ID, { nullable: true, description: "Only the subcategories of this category." }) parentId?: string,
  ) {
    return services.categories.page(actor, { rootsOnly: rootsOnly ?? false, parentId }, page, perPage);
  }

  @Authorized()
  @Query(() => CategoryType)
  category(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.categories.get(actor, id);
  }

  @FieldResolver(() => CategoryParentType, { nullable: true, description: "The parent of a subcategory." })
  async parent(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Root() row: CategoryRow,
  ): Promise<CategoryParentType | null> {
    if (!row.parentId) return null;
    // Categories read by the category queries carry their parent's name; others (a transaction's) look it up.
    const name = row.parentName ?? (await services.categories.get(actor, row.parentId)).name;
    return { id: row.parentId, name };
  }

  @FieldResolver(() => Int, { description: "How many subcategories it has." })
  async subcategoriesCount(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Root() row: CategoryRow): Promise<number> {
    return row.subcategoriesCount ?? (await services.categories.get(actor, row.id)).subcategoriesCount!;
  }

  @Authorized()
  @Mutation(() => CategoryType)
  createCategory(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("input", () => CategoryInput) input: CategoryInput,
  ) {
    return services.categories.create(actor, input);
  }

  @Authorized()
  @Mutation(() => CategoryType)
  updateCategory(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => CategoryInput) input: CategoryInput,
  ) {
    return services.categories.update(actor, id, input);
  }

  @Authorized()
  @Mutation(() => CategoryType, { description: "Transactions in it become uncategorised." })
  deleteCategory(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.categories.delete(actor, id);
  }
}
