import type { z } from "zod";
import type { AccountRepository } from "../accounts";
import type { FinanceRepository } from "./finance.repository";
import type { FamilyVocabulary } from "./vocabulary";

/** Whose data a tool reads: the chat owner's family, never the model's arguments. */
export type ToolScope = { familyId: string; currency: string; today: string; vocabulary: FamilyVocabulary };

export type ToolData = { finance: FinanceRepository; accounts: AccountRepository };

/** One function a model may call: its zod parameters are both the validator and the JSON schema it is shown. */
export type ToolDefinition<Schema extends z.ZodType> = {
  description: string;
  parameters: Schema;
  run(args: z.infer<Schema>, scope: ToolScope, data: ToolData): Promise<Record<string, unknown>>;
};
