import type { AssistantConfig } from "../../platform/config/config";
import { BuiltinProvider } from "./builtin.provider";
import { OpenAIProvider } from "./openai.provider";
import type { AssistantProvider } from "./provider";

export function createProvider(config: AssistantConfig): AssistantProvider {
  return config.provider === "openai" ? new OpenAIProvider(config) : new BuiltinProvider();
}
