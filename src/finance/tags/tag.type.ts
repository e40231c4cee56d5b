import { Field, ID, InputType, ObjectType } from "type-graphql";

@ObjectType("Tag", { simpleResolvers: true })
export class TagType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field({ description: "#RRGGBB" }) color!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@InputType("TagInput", { description: "On update, fields left out are unchanged." })
export class TagInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: "#RRGGBB; defaults to #e99537." }) color?: string | null;
}
