import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { Access } from "../graphql/auth-checker";
import type { RequestContext } from "../graphql/context";
import { AccountInput, AccountType } from "./account.type";

@Resolver(() => AccountType)
export class AccountResolver {
  @Authorized(Access.Read)
  @Query(() => [AccountType], { description: "The family's accounts ordered by name." })
  accounts(@Ctx() { services, actor }: RequestContext) {
    return services.accounts.list(actor!);
  }

  @Authorized(Access.Read)
  @Query(() => AccountType)
  account(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.accounts.get(actor!, id);
  }

  @Authorized(Access.Write)
  @Mutation(() => AccountType)
  createAccount(@Ctx() { services, actor }: RequestContext, @Arg("input", () => AccountInput) input: AccountInput) {
    return services.accounts.create(actor!, input);
  }

  @Authorized(Access.Write)
  @Mutation(() => AccountType)
  updateAccount(
    @Ctx() { services, actor }: RequestContext,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => AccountInput) input: AccountInput,
  ) {
    return services.accounts.update(actor!, id, input);
  }

  @Authorized(Access.Write)
  @Mutation(() => AccountType, { description: "Deletes the account and its transactions." })
  deleteAccount(@Ctx() { services, actor }: RequestContext, @Arg("id", () => ID) id: string) {
    return services.accounts.delete(actor!, id);
  }
}
