import { UniqueConstraintError, type Sequelize } from "sequelize";
import type { AccountRepository } from "../accounts";
import { Topic, type ChatEventPayload } from "../../platform/events/catalogue";
import type { ChatRepository, ReplyTarget } from "../chats";
import { COMPLETE_MESSAGE } from "../chats";
import { newId } from "../../platform/common/ids";
import type { AssistantConfig } from "../../platform/config/config";
import type { EventBus } from "../../platform/events/event-bus";
import type { FinanceRepository } from "./finance.repository";
import { AssistantFailure, FAILURE_SENTENCES, STALE_SENTENCE, type AssistantProvider } from "./provider";
import { ToolRunner } from "./tools";
import { FamilyVocabulary } from "./vocabulary";

export type ReplyOutcome = "replied" | "failed" | "skipped";

/** Streamed text is sent to subscribers in batches at most this often. */
const PARTIAL_INTERVAL_MS = 100;
const PARTIAL_MAX_CHARS = 1000;

/**
 * Produces assistant replies (in workers). A reply is written in one transaction together with its
 * tool calls and the user message's `complete`, and only while that message is still pending under the
 * job's attempt: a duplicate job, a job retried after a crash, or a reply that lost to the watchdog
 * writes nothing. The unique index on reply_to_message_id backs this up in the database.
 */
export class AssistantService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly chats: ChatRepository,
    private readonly finance: FinanceRepository,
    private readonly accounts: AccountRepository,
    private readonly events: EventBus,
    private readonly config: AssistantConfig,
    private readonly provider: AssistantProvider,
  ) {}

  /**
   * Answers one user message. Transient model failures are thrown so the queue retries them, unless
   * this is the last attempt; then, like every other failure, they mark the message failed.
   */
  async reply(messageId: string, attempt: number, lastAttempt: boolean): Promise<ReplyOutcome> {
    const target = await this.chats.replyTarget(messageId);
    if (!target || target.aiResponseStatus !== "pending" || target.replyAttempt !== attempt) return "skipped";
    if (!target.aiEnabled) return this.fail(target, FAILURE_SENTENCES.misconfigured);

    const [names, history] = await Promise.all([this.finance.vocabulary(target.familyId), this.chats.history(target.chatId, target.id)]);
    const vocabulary = new FamilyVocabulary(names);
    const scope = { familyId: target.familyId, currency: target.currency.trim(), today: new Date().toISOString().slice(0, 10), vocabulary };
    const tools = new ToolRunner(scope, { finance: this.finance, accounts: this.accounts });
    const partial = this.partialPublisher(target);
    let content: string;
    try {
      ({ content } = await this.provider.respond({
        model: target.model ?? this.config.defaultModel,
        history,
        context: { currency: scope.currency, today: scope.today, vocabulary },
        tools,
        onDelta: partial.add,
      }));
      if (content.trim() === "") throw new AssistantFailure("other", "the model returned an empty answer");
    } catch (error) {
      const failure = error instanceof AssistantFailure ? error : null;
      // Our own faults (a dropped database connection) are retried like a model server's hiccup.
      if (!lastAttempt && (failure ? failure.transient : true)) throw error;
      return this.fail(target, FAILURE_SENTENCES[failure?.cause ?? "other"]);
    } finally {
      partial.flush();
    }
    return this.commit(target, content, tools);
  }

  /** The watchdog: replies pending for longer than the configured time are given up as failed. */
  async expireStale(): Promise<number> {
    let expired = 0;
    for (const stale of await this.chats.stalePending(this.config.replyTimeoutSeconds)) {
      const target = await this.chats.replyTarget(stale.id);
      if (target && (await this.fail(target, STALE_SENTENCE)) === "failed") expired += 1;
    }
    return expired;
  }

  private async commit(target: ReplyTarget, content: string, tools: ToolRunner): Promise<ReplyOutcome> {
    const replyId = newId();
    try {
      const written = await this.sequelize.transaction(async (transaction) => {
        if (!(await this.chats.lockPending(target.id, target.replyAttempt, transaction))) return false;
        await this.chats.insertMessage(
          { id: replyId, chatId: target.chatId, role: "assistant", content, model: target.model, replyToMessageId: target.id },
          transaction,
        );
        if (tools.calls.length)
          await this.chats.insertToolCalls(
            tools.calls.map((call, position) => ({
              id: newId(),
              messageId: replyId,
              position,
              functionName: call.name,
              functionArguments: call.arguments,
              functionResult: call.result,
            })),
            transaction,
          );
        await this.chats.completeReply(target.id, COMPLETE_MESSAGE, transaction);
        await this.chats.setChatError(target.chatId, null, transaction, true);
        return true;
      });
      if (!written) return "skipped";
    } catch (error) {
      if (error instanceof UniqueConstraintError) return "skipped";
      throw error;
    }
    this.publish({ kind: "message", chatId: target.chatId, messageId: replyId });
    this.publish({
      kind: "status",
      chatId: target.chatId,
      messageId: target.id,
      status: "complete",
      statusMessage: COMPLETE_MESSAGE,
      chatError: null,
    });
    return "replied";
  }

  private async fail(target: ReplyTarget, sentence: string): Promise<ReplyOutcome> {
    const failed = await this.sequelize.transaction(async (transaction) => {
      const stillPending = await this.chats.failPendingReply(target.id, target.replyAttempt, sentence, transaction);
      if (stillPending) await this.chats.setChatError(target.chatId, sentence, transaction);
      return stillPending;
    });
    if (!failed) return "skipped";
    this.publish({
      kind: "status",
      chatId: target.chatId,
      messageId: target.id,
      status: "failed",
      statusMessage: sentence,
      chatError: sentence,
    });
    return "failed";
  }

  /** Batches streamed text so a fast model does not turn every token into an event. */
  private partialPublisher(target: ReplyTarget) {
    let buffered = "";
    let timer: NodeJS.Timeout | null = null;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = null;
      // Slices stay far below the PostgreSQL event bus's payload limit.
      for (let start = 0; start < buffered.length; start += PARTIAL_MAX_CHARS)
        this.publish({
          kind: "partial",
          chatId: target.chatId,
          messageId: target.id,
          delta: buffered.slice(start, start + PARTIAL_MAX_CHARS),
        });
      buffered = "";
    };
    return {
      add: (text: string) => {
        buffered += text;
        timer ??= setTimeout(flush, PARTIAL_INTERVAL_MS);
      },
      flush,
    };
  }

  private publish(payload: ChatEventPayload): void {
    this.events.publish(Topic.ChatEvent, payload.chatId, payload);
  }
}
