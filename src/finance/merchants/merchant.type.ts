import { Field, ID, InputType, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";

@ObjectType("Merchant", { simpleResolvers: true })
export class MerchantType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) color!: string | null;
  @Field(() => String, { nullable: true }) logoUrl!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("MerchantPage")
export class MerchantPageType {
  @Field(() => [MerchantType]) items!: MerchantType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@InputType("MerchantInput", { description: "Fields left out are unchanged on update; null clears color and logo." })
export class MerchantInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: "#RRGGBB" }) color?: string | null;
  @Field(() => String, { nullable: true }) logoUrl?: string | null;
}
