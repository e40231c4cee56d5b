import type { ToolRunner } from "./tools";
import type { FamilyVocabulary } from "./vocabulary";

/** What a provider knows about the family besides the conversation: names to match and the money's currency. */
export type FamilyContext = {
  currency: string;
  /** YYYY-MM-DD in UTC: "last month" and friends are computed from it. */
  today: string;
  vocabulary: FamilyVocabulary;
};

export type AssistantRequest = {
  model: string;
  /** The conversation, oldest first; the last entry is the question to answer. */
  history: Array<{ role: "user" | "assistant"; content: string }>;
  context: FamilyContext;
  tools: ToolRunner;
  /** Receives the answer's text as it is produced, when the provider streams. */
  onDelta(text: string): void;
};

export interface AssistantProvider {
  respond(request: AssistantRequest): Promise<{ content: string }>;
}

export type FailureCause = "rate_limited" | "unavailable" | "misconfigured" | "other";

/** Why a reply could not be produced. Transient causes are retried with backoff; the others are final. */
export class AssistantFailure extends Error {
  constructor(
    readonly cause: FailureCause,
    detail: string,
  ) {
    super(detail);
    this.name = "AssistantFailure";
  }

  get transient(): boolean {
    return this.cause === "rate_limited" || this.cause === "unavailable";
  }
}

/** The sentence users see on the chat and the message when a reply failed, by cause. */
export const FAILURE_SENTENCES: Record<FailureCause, string> = {
  rate_limited: "The AI service is receiving too many requests right now. Please try again in a moment.",
  unavailable: "The AI service is temporarily unavailable. Please try again later.",
  misconfigured: "The AI service is not configured correctly. Please ask your administrator to check the assistant settings.",
  other: "Something went wrong while generating a response. Please try again.",
};

export const STALE_SENTENCE = "The AI response took too long and was abandoned. Please try again.";
