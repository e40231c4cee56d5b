import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { Topic, type ChatEventPayload } from "../../platform/events/catalogue";
import type { ChatDetail } from "./chat.service";
import {
  ChatEventKind,
  ChatEventType,
  ChatInput,
  ChatMessageInput,
  ChatMessageType,
  ChatPageType,
  ChatRetryType,
  ChatSummaryType,
  ChatType,
  ChatUpdateInput,
} from "./chat.type";
import { CurrentActor } from "../../transports/graphql/current-actor";
import { listen } from "../../transports/graphql/subscription";
import type { Actor } from "../../platform/security/actor";

function detail(chat: ChatDetail) {
  return { ...chat, messages: chat.messages.map((message) => new ChatMessageType(message)) };
}

@Resolver()
export class ChatResolver {
  @Authorized()
  @Query(() => ChatPageType, { description: "Your chats, newest first." })
  chats(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 20, at most 100." }) perPage?: number,
  ) {
    return services.chats.list(actor, page, perPage);
  }

  @Authorized()
  @Query(() => ChatType)
  async chat(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Messages per page; default 50, at most 100." }) perPage?: number,
  ) {
    return detail(await services.chats.get(actor, id, page, perPage));
  }

  @Authorized()
  @Mutation(() => ChatType)
  async createChat(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("input", () => ChatInput) input: ChatInput) {
    return detail(await services.chats.create(actor, input));
  }

  @Authorized()
  @Mutation(() => ChatType)
  async updateChat(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("id", () => ID) id: string,
    @Arg("input", () => ChatUpdateInput) input: ChatUpdateInput,
  ) {
    return detail(await services.chats.rename(actor, id, input));
  }

  @Authorized()
  @Mutation(() => ChatSummaryType, { description: "Deletes the chat with its messages." })
  deleteChat(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("id", () => ID) id: string) {
    return services.chats.delete(actor, id);
  }

  @Authorized()
  @Mutation(() => ChatMessageType, { description: "Posts a message; the reply is written by a worker (watch chatEvents)." })
  async createChatMessage(
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("chatId", () => ID) chatId: string,
    @Arg("input", () => ChatMessageInput) input: ChatMessageInput,
  ) {
    return new ChatMessageType(await services.chats.postMessage(actor, chatId, input));
  }

  @Authorized()
  @Mutation(() => ChatRetryType, {
    description: "Generates the reply to the chat's last message again: after a failure, or replacing a complete reply.",
  })
  retryChatReply(@Ctx() { services }: RequestContext, @CurrentActor() actor: Actor, @Arg("chatId", () => ID) chatId: string) {
    return services.chats.retry(actor, chatId);
  }

  @Authorized()
  @Subscription(() => ChatEventType, {
    description: "Messages stored in the chat, reply status changes and streamed reply text, from any process.",
    // The chat must be the subscriber's own before anything is listened to.
    subscribe: listen<{ chatId: string }>(async ({ context, actor, args }) => {
      await context.services.chats.own(actor, args.chatId);
      return context.services.events.subscribe(Topic.ChatEvent, args.chatId);
    }),
  })
  async chatEvents(
    @Root() event: ChatEventPayload,
    @Ctx() { services }: RequestContext,
    @CurrentActor() actor: Actor,
    @Arg("chatId", () => ID) _chatId: string,
  ): Promise<ChatEventType> {
    const base = { kind: event.kind as ChatEventKind, chatId: event.chatId, messageId: event.messageId };
    if (event.kind === "message") return { ...base, message: new ChatMessageType(await services.chats.message(actor, event.messageId)) };
    if (event.kind === "status")
      return { ...base, aiResponseStatus: event.status, aiResponseMessage: event.statusMessage, chatError: event.chatError };
    return { ...base, delta: event.delta };
  }
}
