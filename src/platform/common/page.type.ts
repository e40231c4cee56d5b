import { Field, Int, ObjectType } from "type-graphql";

@ObjectType("Pagination", { description: "Page-number paging: page starts at 1, perPage is at most 100.", simpleResolvers: true })
export class PaginationType {
  @Field(() => Int) page!: number;
  @Field(() => Int) perPage!: number;
  @Field(() => Int) totalCount!: number;
  @Field(() => Int) totalPages!: number;
}
