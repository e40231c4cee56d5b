import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { Access } from "../graphql/auth-checker";
import type { RequestContext } from "../graphql/context";
import { CategoryInput, CategoryType } from "./category.type";

@Resolver(() => CategoryType)
export class CategoryResolver {
  @Authorized(Access.Read)
  @Query(() => [CategoryType], { description: "The family's categories ordered by name." })
  categories(@Ctx() { services, actor }: RequestContext) {
    return services.categories.list(actor!);
  }

  @Authorized(Access.Write)
  @Mutation(() => CategoryType)
  createCategory(@Ctx() { services, actor }: RequestContext, @Arg("input", () => CategoryInput) input: CategoryInput) {
    return services.categories.create(actor!, input);
  }

  @Authorized(Access.Write)
  @Mutation(() => CategoryType)
  updateCategory(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => CategoryInput) input: CategoryInput,
  ) {
    return services.categories.update(actor!, id, input);
  }

  @Authorized(Access.Write)
  @Mutation(() => CategoryType, { description: "Transactions in it become uncategorised." })
  deleteCategory(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.categories.delete(actor!, id);
  }
}
