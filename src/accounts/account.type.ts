import { Field, ID, InputType, ObjectType } from "type-graphql";
import { PaginationType } from "../common/page.type";
import { DecimalScalar } from "../graphql/scalars";

@ObjectType("Account", { simpleResolvers: true })
export class AccountType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field({ description: "depository, investment, crypto, property, vehicle, other_asset, credit_card, loan or other_liability." })
  accountType!: string;
  @Field({ description: "asset or liability, from the account type." }) classification!: string;
  @Field({ description: "ISO 4217 code." }) currency!: string;
  @Field(() => DecimalScalar) balance!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("AccountPage")
export class AccountPageType {
  @Field(() => [AccountType]) items!: AccountType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("AccountInput", { description: "On update, fields left out are unchanged." })
export class AccountInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) accountType?: string | null;
  @Field(() => String, { nullable: true, description: "Defaults to the family's currency." }) currency?: string | null;
  @Field(() => DecimalScalar, { nullable: true }) balance?: string | null;
}
