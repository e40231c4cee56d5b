import { SafeIntResolver } from "graphql-scalars";
import { Extensions, Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { PRELOADED_LIST } from "../../transports/graphql/cost-hints";
import { CalendarDateScalar } from "../money";
import { FlagScalar } from "./planning.scalars";

@ObjectType("PageMeta", { description: "Upstream's paging block of the rules and rule-runs lists.", simpleResolvers: true })
export class PageMetaType {
  @Field(() => Int) page!: number;
  @Field(() => Int, { nullable: true }) nextPage!: number | null;
  @Field(() => Int, { nullable: true }) prevPage!: number | null;
  @Field(() => Int) totalPages!: number;
  @Field(() => Int) totalCount!: number;
  @Field(() => Int) perPage!: number;
}

@ObjectType("RuleCondition", { simpleResolvers: true })
export class RuleConditionType {
  @Field(() => ID) id!: string;
  @Field({
    description:
      "transaction_name, transaction_notes, transaction_amount, transaction_merchant, transaction_category, transaction_account, transaction_type or compound.",
  })
  conditionType!: string;
  @Field({ description: "like, =, is_null (text); >, >=, <, <=, =, != (amount); =, is_null (ids); and, or (compound)." }) operator!: string;
  @Field(() => String, { nullable: true }) value!: string | null;
  @Extensions(PRELOADED_LIST)
  @Field(() => [RuleConditionType])
  subConditions!: RuleConditionType[];
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("RuleAction", { simpleResolvers: true })
export class RuleActionType {
  @Field(() => ID) id!: string;
  @Field({
    description: "set_transaction_category, set_transaction_merchant, set_transaction_tags (adds the tag) or set_transaction_name.",
  })
  actionType!: string;
  @Field(() => String, { nullable: true }) value!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("Rule", { simpleResolvers: true })
export class RuleType {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field() resourceType!: string;
  @Field() active!: boolean;
  @Field(() => CalendarDateScalar, { nullable: true, description: "Only transactions on or after this day are touched." }) effectiveDate!:
    string | null;
  @Extensions(PRELOADED_LIST)
  @Field(() => [RuleConditionType], { description: "Top-level conditions; all must hold." })
  conditions!: RuleConditionType[];
  @Extensions(PRELOADED_LIST)
  @Field(() => [RuleActionType])
  actions!: RuleActionType[];
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("RulePage")
export class RulePageType {
  @Field(() => [RuleType]) items!: RuleType[];
  @Field(() => PageMetaType) meta!: PageMetaType;
}

@ObjectType("RuleRunRule", { simpleResolvers: true })
export class RuleRunRuleType {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field() resourceType!: string;
  @Field() active!: boolean;
}

@ObjectType("RuleRun", {
  description: "One application of a rule: on demand (manual) or to new transactions (scheduled).",
  simpleResolvers: true,
})
export class RuleRunType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true }) ruleId!: string | null;
  @Field(() => String, { nullable: true }) ruleName!: string | null;
  @Field() executionType!: string;
  @Field() status!: string;
  @Field(() => SafeIntResolver) transactionsQueued!: number;
  @Field(() => SafeIntResolver) transactionsProcessed!: number;
  @Field(() => SafeIntResolver) transactionsModified!: number;
  @Field(() => SafeIntResolver) pendingJobsCount!: number;
  @Field() executedAt!: Date;
  @Field(() => String, { nullable: true }) errorMessage!: string | null;
  @Field(() => RuleRunRuleType, { nullable: true }) rule!: RuleRunRuleType | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("RuleRunPage")
export class RuleRunPageType {
  @Field(() => [RuleRunType]) items!: RuleRunType[];
  @Field(() => PageMetaType) meta!: PageMetaType;
}

@InputType("RuleFilter")
export class RuleFilterInput {
  @Field(() => String, { nullable: true }) resourceType?: string | null;
  @Field(() => FlagScalar, { nullable: true }) active?: boolean | null;
}

@InputType("RuleRunFilter")
export class RuleRunFilterInput {
  @Field(() => ID, { nullable: true }) ruleId?: string | null;
  @Field(() => String, { nullable: true, description: "pending, success or failed." }) status?: string | null;
  @Field(() => String, { nullable: true, description: "manual or scheduled." }) executionType?: string | null;
  @Field(() => String, { nullable: true, description: "ISO 8601 timestamp." }) startExecutedAt?: string | null;
  @Field(() => String, { nullable: true, description: "ISO 8601 timestamp." }) endExecutedAt?: string | null;
}

@InputType("RuleConditionInput")
export class RuleConditionInput {
  @Field() conditionType!: string;
  @Field() operator!: string;
  @Field(() => String, { nullable: true }) value?: string | null;
  @Field(() => [RuleConditionInput], { nullable: true, description: "For a compound condition: its conditions (one level)." })
  subConditions?: RuleConditionInput[] | null;
}

@InputType("RuleActionInput")
export class RuleActionInput {
  @Field() actionType!: string;
  @Field(() => String, { nullable: true }) value?: string | null;
}

@InputType("RuleInput", { description: "Fields left out are unchanged on update; conditions and actions, when given, replace the rule's." })
export class RuleInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) resourceType?: string | null;
  @Field(() => Boolean, { nullable: true }) active?: boolean | null;
  @Field(() => CalendarDateScalar, { nullable: true }) effectiveDate?: string | null;
  @Field(() => [RuleConditionInput], { nullable: true }) conditions?: RuleConditionInput[] | null;
  @Field(() => [RuleActionInput], { nullable: true }) actions?: RuleActionInput[] | null;
}
