import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import type { AssistantConfig } from "../../platform/config/config";
import { AssistantFailure, type AssistantProvider, type AssistantRequest, type FamilyContext } from "./provider";
import { toolDefinitions } from "./tools";

type ToolCallDraft = { id: string; name: string; arguments: string };

/**
 * Any OpenAI-compatible chat-completions server (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio) through
 * the official SDK. The SDK's own retries are off: the job queue retries transient failures with backoff,
 * so a reply is retried as a whole, never half a tool round.
 */
export class OpenAIProvider implements AssistantProvider {
  private readonly client: OpenAI;
  private readonly tools: ChatCompletionTool[];

  constructor(private readonly config: AssistantConfig) {
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      // Local servers (Ollama, LM Studio) take any key; the SDK insists on one.
      apiKey: config.apiKey ?? "not-needed",
      timeout: config.timeoutMs,
      maxRetries: 0,
    });
    this.tools = toolDefinitions().map((tool) => ({ type: "function", function: tool }));
  }

  async respond(request: AssistantRequest): Promise<{ content: string }> {
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: systemPrompt(request.context) },
      ...request.history.map((message) => ({ role: message.role, content: message.content })),
    ];
    try {
      for (let round = 1; ; round++) {
        // The last round offers no tools, so the model has to answer with what it has.
        const offerTools = round < this.config.maxToolRounds;
        const { content, toolCalls } = await this.complete(request, messages, offerTools);
        if (toolCalls.length === 0) return { content };
        messages.push({
          role: "assistant",
          content: content || null,
          tool_calls: toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.arguments },
          })),
        });
        for (const call of toolCalls) {
          const result = await request.tools.call(call.name, call.arguments);
          messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
        }
      }
    } catch (error) {
      // Only the model server's errors are classified; anything else (our database) is retried as it is.
      throw error instanceof OpenAI.OpenAIError ? classify(error) : error;
    }
  }

  private async complete(
    request: AssistantRequest,
    messages: ChatCompletionMessageParam[],
    offerTools: boolean,
  ): Promise<{ content: string; toolCalls: ToolCallDraft[] }> {
    const body = { model: request.model, messages, ...(offerTools ? { tools: this.tools } : {}) };
    if (!this.config.stream) {
      const completion = await this.client.chat.completions.create({ ...body, stream: false });
      const message = completion.choices[0]?.message;
      if (!message) throw new AssistantFailure("other", "the model server returned no choices");
      const toolCalls = (message.tool_calls ?? [])
        .filter((call) => call.type === "function")
        .map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      return { content: message.content ?? "", toolCalls };
    }
    const stream = await this.client.chat.completions.create({ ...body, stream: true });
    let content = "";
    const drafts: ToolCallDraft[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        request.onDelta(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        const draft = (drafts[part.index] ??= { id: "", name: "", arguments: "" });
        if (part.id) draft.id = part.id;
        if (part.function?.name) draft.name += part.function.name;
        if (part.function?.arguments) draft.arguments += part.function.arguments;
      }
    }
    return { content, toolCalls: drafts.filter(Boolean).map((draft, index) => ({ ...draft, id: draft.id || `call_${index}` })) };
  }
}

const PROMPT_NAMES_MAX = 200;

/** The model's standing instructions: today's date, the family's currency and names, the money rules and the honesty rule. */
export function systemPrompt(context: FamilyContext): string {
  // A family with thousands of merchants would fill the model's context: the tools match names anyway.
  const list = (items: string[]) =>
    items.length === 0
      ? "none"
      : items.length > PROMPT_NAMES_MAX
        ? `${items.slice(0, PROMPT_NAMES_MAX).join(", ")} and ${items.length - PROMPT_NAMES_MAX} more`
        : items.join(", ");
  const { vocabulary } = context;
  return [
    "You are a personal-finance assistant. Answer questions about the user's own money using the functions provided;",
    "never guess figures. Be brief, use markdown, and give amounts in the family currency with two decimals.",
    `Today is ${context.today}. The family currency is ${context.currency}.`,
    "Stored amounts are money out when positive and money in (income) when negative; the functions report both as positive numbers with a type.",
    "Transfers between the family's own accounts are neither income nor expense; the functions leave them out of both.",
    "Honesty rule: answer only what the function results support. If part of the question names something that is not among",
    "the names below (or a function answers that a name is unknown), say plainly what you could not find and offer the closest",
    "names; never answer a broader or different question with figures. State the dates of the period you used.",
    "For top-N questions, averages per month or week and trends use summarize_transactions; for subscriptions and other",
    "repeating bills use get_recurring_payments; for net worth and its history get_balance_sheet; for income vs expenses and",
    "the savings rate get_income_statement.",
    `Accounts: ${list(vocabulary.names("account"))}.`,
    `Categories: ${list(vocabulary.names("category"))}.`,
    `Merchants: ${list(vocabulary.names("merchant"))}.`,
    `Tags: ${list(vocabulary.names("tag"))}.`,
  ].join("\n");
}

/** Maps what the SDK throws onto a cause: 429 and 5xx and timeouts are transient, auth and bad requests are not. */
function classify(error: InstanceType<typeof OpenAI.OpenAIError>): AssistantFailure {
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new AssistantFailure("unavailable", "the model server timed out");
  if (error instanceof OpenAI.APIConnectionError)
    return new AssistantFailure("unavailable", `cannot reach the model server: ${error.message}`);
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? 0;
    if (status === 429) return new AssistantFailure("rate_limited", "the model server is rate limiting");
    if (status >= 500 || status === 408) return new AssistantFailure("unavailable", `the model server answered ${status}`);
    if (status === 401 || status === 403 || status === 404)
      return new AssistantFailure("misconfigured", `the model server answered ${status}`);
    return new AssistantFailure("other", `the model server answered ${status}: ${error.message}`);
  }
  return new AssistantFailure("other", error.message);
}
