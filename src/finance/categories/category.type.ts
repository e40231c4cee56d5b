import { Field, ID, InputType, ObjectType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";

@ObjectType("Category", { simpleResolvers: true })
export class CategoryType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) parentId!: string | null;
  @Field() name!: string;
  @Field({ description: "income or expense." }) classification!: string;
  @Field({ description: "#RRGGBB" }) color!: string;
  @Field({ description: "A Lucide icon name, e.g. utensils." }) icon!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@InputType("CategoryInput", { description: "On update, fields left out are unchanged." })
export class CategoryInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: "income or expense; defaults to expense." }) classification?: string | null;
  @Field(() => String, { nullable: true, description: "#RRGGBB" }) color?: string | null;
  @Field(() => String, { nullable: true, description: "A Lucide icon name; defaults to shapes." }) icon?: string | null;
  @Field(() => ID, { nullable: true }) parentId?: string | null;
}

@ObjectType("CategoryParent", { simpleResolvers: true })
export class CategoryParentType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
}

@ObjectType("CategoryPage")
export class CategoryPageType {
  @Field(() => [CategoryType]) items!: CategoryType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}
