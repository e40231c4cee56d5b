import { GraphQLJSONObject } from "graphql-scalars";
import { Field, ID, ObjectType } from "type-graphql";
import { RemovedRowsType } from "./identity.type";

@ObjectType("FamilyResetStatus")
export class FamilyResetStatusType {
  @Field({ description: "complete when no financial data is left, else data_remaining." }) status!: string;
  @Field(() => ID) familyId!: string;
  @Field() resetComplete!: boolean;
  @Field(() => GraphQLJSONObject, {
    description: "Rows left under upstream's count keys (zero for kinds of data this service does not keep).",
  })
  counts!: Record<string, number>;
  @Field(() => [RemovedRowsType], { description: "Rows left per table of this service." }) tables!: RemovedRowsType[];
}

@ObjectType("FamilyReset")
export class FamilyResetType {
  @Field() message!: string;
  @Field({ description: "complete: the reset ran in the request (upstream queues a job and answers queued)." }) status!: string;
  @Field(() => String, { nullable: true, description: "Always null: no job is queued. Kept because upstream's clients read the key." })
  jobId!: string | null;
  @Field(() => ID) familyId!: string;
  @Field({ description: "Where to read the family's reset status." }) statusUrl!: string;
  @Field(() => [RemovedRowsType], { description: "Rows removed per table." }) removed!: RemovedRowsType[];
}
