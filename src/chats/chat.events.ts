import type { ReplyStatus } from "./chat.model";

/** Topic of chat events; the chat id is the topic id, so a subscriber hears one chat only. */
export const CHAT_EVENTS = "CHAT_EVENTS";

/**
 * What crosses processes for a chat: small facts and ids (the event bus caps payloads). A subscriber
 * reads the message itself, as stored, from the database.
 */
export type ChatEventPayload =
  | { kind: "message"; chatId: string; messageId: string }
  | { kind: "status"; chatId: string; messageId: string; status: ReplyStatus; statusMessage: string | null; chatError: string | null }
  | { kind: "partial"; chatId: string; messageId: string; delta: string };
