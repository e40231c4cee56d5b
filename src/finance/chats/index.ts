/** What other features use of chats: the one entry into it (docs/architecture.md, feature entry files). */
export type { ChatRepository, ReplyTarget } from "./chat.repository";
export { COMPLETE_MESSAGE } from "./chat.service";
