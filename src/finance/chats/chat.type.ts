import { JSONObjectResolver } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { PaginationType } from "../../platform/common/page.type";
import type { ToolCallRow } from "./chat.repository";
import type { MessageView } from "./chat.service";

@ObjectType("ToolCall", { description: "A function the assistant called while writing a reply, with what it returned." })
export class ToolCallType {
  @Field(() => ID) id!: string;
  @Field() functionName!: string;
  @Field(() => JSONObjectResolver) functionArguments!: Record<string, unknown>;
  @Field(() => JSONObjectResolver) functionResult!: Record<string, unknown>;
  @Field() createdAt!: Date;
}

@ObjectType("ChatMessage")
export class ChatMessageType {
  @Field(() => ID) id: string;
  @Field(() => ID) chatId: string;
  @Field({ description: "user or assistant." }) role: string;
  @Field() content: string;
  @Field(() => String, { nullable: true }) model: string | null;
  @Field(() => String, { nullable: true, description: "On user messages: pending, complete or failed." })
  aiResponseStatus: string | null;
  @Field(() => String, { nullable: true }) aiResponseMessage: string | null;
  @Field(() => [ToolCallType]) toolCalls: ToolCallRow[];
  @Field() createdAt: Date;
  @Field() updatedAt: Date;

  /** Event payloads arrive through JSON, so dates may come as strings. */
  constructor(message: MessageView) {
    this.id = message.id;
    this.chatId = message.chatId;
    this.role = message.role;
    this.content = message.content;
    this.model = message.model;
    this.aiResponseStatus = message.aiResponseStatus;
    this.aiResponseMessage = message.aiResponseMessage;
    this.toolCalls = message.toolCalls;
    this.createdAt = new Date(message.createdAt);
    this.updatedAt = new Date(message.updatedAt);
  }

  @Field({ description: "user_message or assistant_message." })
  get type(): string {
    return `${this.role}_message`;
  }
}

@ObjectType("ChatSummary")
export class ChatSummaryType {
  @Field(() => ID) id!: string;
  @Field() title!: string;
  @Field(() => String, { nullable: true, description: "Why the last reply failed, in a sentence for people; null when it did not." })
  error!: string | null;
  @Field(() => Int) messageCount!: number;
  @Field(() => Date, { nullable: true, description: "When the newest message was written." }) lastMessageAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType("Chat", { description: "A chat with one page of its messages, oldest first." })
export class ChatType extends ChatSummaryType {
  @Field(() => [ChatMessageType]) messages!: ChatMessageType[];
  @Field(() => PaginationType, { description: "Paging of messages." }) pagination!: PaginationType;
}

@ObjectType("ChatPage")
export class ChatPageType {
  @Field(() => [ChatSummaryType]) items!: ChatSummaryType[];
  @Field(() => PaginationType) pagination!: PaginationType;
}

@ObjectType("ChatRetry")
export class ChatRetryType {
  @Field() message!: string;
  @Field(() => ID, { description: "The user message whose reply is being generated again." }) messageId!: string;
}

@InputType("ChatInput")
export class ChatInput {
  @Field(() => String, { nullable: true, description: "Defaults to the start of the first message." }) title?: string | null;
  @Field(() => String, { nullable: true, description: "A first message; its reply is generated at once." }) message?: string | null;
  @Field(() => String, { nullable: true, description: "Model for the first message's reply." }) model?: string | null;
}

@InputType("ChatUpdateInput")
export class ChatUpdateInput {
  @Field(() => String, { nullable: true }) title?: string | null;
}

@InputType("ChatMessageInput")
export class ChatMessageInput {
  @Field(() => String, { nullable: true }) content?: string | null;
  @Field(() => String, { nullable: true, description: "One of the models the server allows; default its default model." })
  model?: string | null;
}

export enum ChatEventKind {
  MESSAGE = "message",
  STATUS = "status",
  PARTIAL = "partial",
}
registerEnumType(ChatEventKind, {
  name: "ChatEventKind",
  description: "MESSAGE: a message was stored. STATUS: a reply's status changed. PARTIAL: more text of a reply being written.",
});

@ObjectType("ChatEvent")
export class ChatEventType {
  @Field(() => ChatEventKind) kind!: ChatEventKind;
  @Field(() => ID) chatId!: string;
  @Field(() => ID, { description: "The stored message (MESSAGE), or the user message whose reply this is about (STATUS, PARTIAL)." })
  messageId!: string;
  @Field(() => ChatMessageType, { nullable: true, description: "MESSAGE: the message as stored." }) message?: ChatMessageType | null;
  @Field(() => String, { nullable: true, description: "STATUS: pending, complete or failed." }) aiResponseStatus?: string | null;
  @Field(() => String, { nullable: true }) aiResponseMessage?: string | null;
  @Field(() => String, { nullable: true, description: "STATUS: the chat's error after the change." }) chatError?: string | null;
  @Field(() => String, { nullable: true, description: "PARTIAL: text to append to the reply so far." }) delta?: string | null;
}
