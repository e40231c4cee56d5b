import { eventually } from "./eventually";
import type { HttpResponse } from "./http";

type Api = { get(path: string): Promise<HttpResponse> };

/** Polls a chat until the reply to `messageId` is no longer pending; returns the chat detail. */
export async function waitForReply(api: Api, chatId: string, messageId: string, timeoutMs = 15_000): Promise<any> {
  return eventually(
    async () => {
      const chat = await api.get(`/chats/${chatId}?per_page=100`);
      const message = chat.body.messages?.find((m: { id: string }) => m.id === messageId);
      return message !== undefined && message.ai_response_status !== "pending" && chat.body;
    },
    { what: `the reply to ${messageId}`, timeout: timeoutMs },
  );
}

/** The assistant message that answers the user message `messageId` (the one right after it). */
export function replyTo(chat: any, messageId: string): any {
  const index = chat.messages.findIndex((m: { id: string }) => m.id === messageId);
  return chat.messages.slice(index + 1).find((m: { role: string }) => m.role === "assistant");
}
