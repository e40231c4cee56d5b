import type { Sequelize } from "sequelize";
import { ForbiddenError, NotFoundError, ValidationError, ValidationErrors } from "../../platform/common/errors";
import { isUuid, newId } from "../../platform/common/ids";
import { clampPage, offsetOf, pageInfo, type PageInfo } from "../../platform/common/pagination";
import { optionalText, requiredText } from "../../platform/common/validation";
import type { AssistantConfig } from "../../platform/config/config";
import type { EventBus } from "../../platform/events/event-bus";
import type { Actor } from "../../platform/security/actor";
import { Topic, type ChatEventPayload } from "../../platform/events/catalogue";
import type { ChatRepository, ChatRow, MessageRow, ToolCallRow } from "./chat.repository";

export type ChatInput = { title?: string | null; message?: string | null; model?: string | null };
export type MessageInput = { content?: string | null; model?: string | null };
export type MessageView = MessageRow & { toolCalls: ToolCallRow[] };
export type ChatDetail = ChatRow & { messages: MessageView[]; pagination: PageInfo };

/** Hands a reply to the workers; enqueueing the same message and attempt twice must be harmless. */
export type ReplyQueue = { enqueue(messageId: string, attempt: number): Promise<void> };

export const PENDING_MESSAGE = "AI response is being generated";
export const COMPLETE_MESSAGE = "AI response completed";
const UNQUEUED_MESSAGE = "The AI service is temporarily unavailable. Please try again later.";
const NOTHING_TO_RETRY = "The last message has no reply to retry yet";
const TITLE_MAX = 255;
const CONTENT_MAX = 10_000;
const TITLE_FROM_MESSAGE_MAX = 60;

export class ChatService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly chats: ChatRepository,
    private readonly events: EventBus,
    private readonly replies: ReplyQueue,
    private readonly assistant: AssistantConfig,
  ) {}

  async list(actor: Actor, page?: number | null, perPage?: number | null): Promise<{ items: ChatRow[]; pagination: PageInfo }> {
    requireAi(actor);
    const request = clampPage(page, perPage, 20);
    const { rows, total } = await this.chats.page(actor.userId, request.perPage, offsetOf(request));
    return { items: rows, pagination: pageInfo(request, total) };
  }

  /** A chat with one page of its messages, oldest first, each with its tool calls. */
  async get(actor: Actor, id: string, page?: number | null, perPage?: number | null): Promise<ChatDetail> {
    requireAi(actor);
    if (!isUuid(id)) throw new NotFoundError("Chat");
    const request = clampPage(page, perPage, 50);
    // Messages first, then the chat: a reply's status and the chat's error change in one transaction, so
    // a chat read after its messages never shows an older error than the statuses it comes with.
    const messages = await this.chats.messages(actor.userId, id, request.perPage, offsetOf(request));
    const chat = await this.own(actor, id);
    const toolCalls = await this.chats.toolCallsOf(messages.map((message) => message.id));
    return {
      ...chat,
      messages: messages.map((message, index) => ({ ...message, toolCalls: toolCalls[index] })),
      pagination: pageInfo(request, chat.messageCount),
    };
  }

  async create(actor: Actor, input: ChatInput): Promise<ChatDetail> {
    requireAi(actor);
    const problems = new ValidationErrors();
    const content = input.message === undefined || input.message === null ? null : this.checkContent(problems, input.message);
    const model = this.checkModel(problems, input.model);
    let title: string;
    if (input.title === undefined || input.title === null) {
      title = content ? titleFrom(content) : "";
      if (!title) problems.add("Title can't be blank");
    } else title = requiredText(problems, "Title", input.title, TITLE_MAX);
    problems.throwIfAny();
    const chatId = newId();
    await this.chats.createChat(actor.userId, chatId, title);
    if (content) await this.addUserMessage(chatId, content, model);
    return this.get(actor, chatId);
  }

  async rename(actor: Actor, id: string, input: ChatInput): Promise<ChatDetail> {
    const chat = await this.own(actor, id);
    const problems = new ValidationErrors();
    const title = requiredText(problems, "Title", input.title, TITLE_MAX);
    problems.throwIfAny();
    await this.chats.renameChat(actor.userId, chat.id, title);
    return this.get(actor, chat.id);
  }

  async delete(actor: Actor, id: string): Promise<ChatRow> {
    const chat = await this.own(actor, id);
    // Of concurrent deletes only one removes the row; the others answer as if it had never existed.
    if (!(await this.chats.deleteChat(actor.userId, chat.id))) throw new NotFoundError("Chat");
    return chat;
  }

  /** Stores the user's message as pending and hands the reply to a worker. */
  async postMessage(actor: Actor, chatId: string, input: MessageInput): Promise<MessageView> {
    const chat = await this.own(actor, chatId);
    const problems = new ValidationErrors();
    const content = this.checkContent(problems, input.content);
    const model = this.checkModel(problems, input.model);
    problems.throwIfAny();
    const messageId = await this.addUserMessage(chat.id, content, model);
    return this.message(actor, messageId);
  }

  /**
   * Asks again for the reply to the chat's last message: after a failure, or (as upstream) to
   * regenerate a complete reply, which is then replaced. A reply still being written cannot be retried.
   */
  async retry(actor: Actor, chatId: string): Promise<{ message: string; messageId: string }> {
    const chat = await this.own(actor, chatId);
    const last = await this.chats.lastUserMessage(chat.id);
    const status = last?.aiResponseStatus;
    if (!last || (status !== "failed" && status !== "complete")) throw new ValidationError([NOTHING_TO_RETRY]);
    const attempt = await this.sequelize.transaction(async (transaction) => {
      const next = await this.chats.requeueFinishedReply(last.id, { status, attempt: last.replyAttempt }, PENDING_MESSAGE, transaction);
      if (next === null) return null;
      // The old answer goes in the transaction that reopens the question: one reply per message, always.
      if (status === "complete") await this.chats.deleteReplyTo(last.id, transaction);
      await this.chats.setChatError(chat.id, null, transaction);
      return next;
    });
    // A concurrent retry of the same message got there first: it is pending again either way.
    if (attempt === null) throw new ValidationError([NOTHING_TO_RETRY]);
    this.publishStatus(chat.id, last.id, "pending", PENDING_MESSAGE, null);
    await this.enqueue(chat.id, last.id, attempt);
    return { message: "Retry initiated", messageId: last.id };
  }

  async message(actor: Actor, messageId: string): Promise<MessageView> {
    requireAi(actor);
    const message = isUuid(messageId) ? await this.chats.messageOf(actor.userId, messageId) : null;
    if (!message) throw new NotFoundError("Message");
    const [toolCalls] = await this.chats.toolCallsOf([message.id]);
    return { ...message, toolCalls };
  }

  /** The chat, if it is the actor's; another user's chat reads as unknown. */
  async own(actor: Actor, id: string): Promise<ChatRow> {
    requireAi(actor);
    const chat = isUuid(id) ? await this.chats.byId(actor.userId, id) : null;
    if (!chat) throw new NotFoundError("Chat");
    return chat;
  }

  private async addUserMessage(chatId: string, content: string, model: string): Promise<string> {
    const id = newId();
    await this.sequelize.transaction(async (transaction) => {
      await this.chats.insertMessage(
        {
          id,
          chatId,
          role: "user",
          content,
          model,
          aiResponseStatus: "pending",
          aiResponseMessage: PENDING_MESSAGE,
          replyAttempt: 1,
          replyRequestedAt: new Date(),
        },
        transaction,
      );
      // A new message starts over: the previous failure no longer describes the chat.
      await this.chats.setChatError(chatId, null, transaction, true);
    });
    this.publish({ kind: "message", chatId, messageId: id });
    this.publishStatus(chatId, id, "pending", PENDING_MESSAGE, null);
    await this.enqueue(chatId, id, 1);
    return id;
  }

  /** With the queue unreachable nobody would ever answer: say so now rather than leave the reply pending. */
  private async enqueue(chatId: string, messageId: string, attempt: number): Promise<void> {
    try {
      await this.replies.enqueue(messageId, attempt);
    } catch {
      await this.sequelize.transaction(async (transaction) => {
        await this.chats.failPendingReply(messageId, attempt, UNQUEUED_MESSAGE, transaction);
        await this.chats.setChatError(chatId, UNQUEUED_MESSAGE, transaction);
      });
      this.publishStatus(chatId, messageId, "failed", UNQUEUED_MESSAGE, UNQUEUED_MESSAGE);
    }
  }

  private publishStatus(
    chatId: string,
    messageId: string,
    status: "pending" | "failed",
    statusMessage: string | null,
    chatError: string | null,
  ): void {
    this.publish({ kind: "status", chatId, messageId, status, statusMessage, chatError });
  }

  private publish(payload: ChatEventPayload): void {
    this.events.publish(Topic.ChatEvent, payload.chatId, payload);
  }

  private checkContent(problems: ValidationErrors, content: string | null | undefined): string {
    return requiredText(problems, "Content", content, CONTENT_MAX);
  }

  private checkModel(problems: ValidationErrors, model: string | null | undefined): string {
    const requested = optionalText(problems, "Model", model, 200)?.trim();
    if (!requested) return this.assistant.defaultModel;
    if (!this.assistant.allowedModels.includes(requested))
      problems.add(`Model ${requested} is not available; choose one of ${this.assistant.allowedModels.join(", ")}`);
    return requested;
  }
}

export function requireAi(actor: Actor): void {
  if (!actor.aiEnabled) throw new ForbiddenError("AI features are not enabled for this user", "feature_disabled");
}

/** The first line of the first message, cut at a word boundary. */
function titleFrom(content: string): string {
  const line = content.trim().split("\n")[0].trim();
  if (line.length <= TITLE_FROM_MESSAGE_MAX) return line;
  const cut = line.slice(0, TITLE_FROM_MESSAGE_MAX);
  const space = cut.lastIndexOf(" ");
  return `${(space > 20 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
