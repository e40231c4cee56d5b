import type { CreationAttributes, Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import { ChatMessageModel, ChatModel, ToolCallModel, type MessageRole, type ReplyStatus } from "./chat.model";

export type ChatRow = {
  id: string;
  title: string;
  error: string | null;
  messageCount: number;
  lastMessageAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

export type MessageRow = {
  id: string;
  chatId: string;
  role: MessageRole;
  content: string;
  model: string | null;
  aiResponseStatus: ReplyStatus | null;
  aiResponseMessage: string | null;
  replyAttempt: number;
  createdAt: Date;
  updatedAt: Date;
};

export type ToolCallRow = {
  id: string;
  messageId: string;
  functionName: string;
  functionArguments: Record<string, unknown>;
  functionResult: Record<string, unknown>;
  createdAt: Date;
};

/** What a reply job needs to know about the message it answers and whose money it may read. */
export type ReplyTarget = MessageRow & { userId: string; familyId: string; currency: string; aiEnabled: boolean };

const CHAT_COLUMNS = `c.id, c.title, c.error, c.created_at AS "createdAt", c.updated_at AS "updatedAt",
  (SELECT count(*)::int FROM chat_messages m WHERE m.chat_id = c.id) AS "messageCount",
  (SELECT max(m.created_at) FROM chat_messages m WHERE m.chat_id = c.id) AS "lastMessageAt"`;

const MESSAGE_COLUMNS = `m.id, m.chat_id AS "chatId", m.role, m.content, m.model, m.ai_response_status AS "aiResponseStatus",
  m.ai_response_message AS "aiResponseMessage", m.reply_attempt AS "replyAttempt", m.created_at AS "createdAt", m.updated_at AS "updatedAt"`;

export class ChatRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async createChat(userId: string, id: string, title: string): Promise<void> {
    await ChatModel.create({ id, userId, title });
  }

  async renameChat(userId: string, id: string, title: string): Promise<void> {
    await ChatModel.update({ title }, { where: { id, userId } });
  }

  /** Whether this call removed the row (of concurrent deletes, only one does). */
  async deleteChat(userId: string, id: string): Promise<boolean> {
    return (await ChatModel.destroy({ where: { id, userId } })) > 0;
  }

  /** Sets (or clears) the chat's error; `touch` also marks the chat as active now. */
  async setChatError(chatId: string, error: string | null, transaction: Transaction, touch = false): Promise<void> {
    await ChatModel.update(touch ? { error, updatedAt: new Date() } : { error }, { where: { id: chatId }, transaction });
  }

  async insertMessage(message: CreationAttributes<ChatMessageModel>, transaction: Transaction): Promise<void> {
    await ChatMessageModel.create(message, { transaction });
  }

  async insertToolCalls(calls: CreationAttributes<ToolCallModel>[], transaction: Transaction): Promise<void> {
    await ToolCallModel.bulkCreate(calls, { transaction });
  }

  /**
   * Puts a finished (failed or complete) reply back to pending as its next attempt, if it is still as
   * the caller read it (`status` under `attempt`); null when another retry or outcome got there first.
   */
  async requeueFinishedReply(
    messageId: string,
    seen: { status: "failed" | "complete"; attempt: number },
    statusMessage: string,
    transaction: Transaction,
  ): Promise<number | null> {
    const [count, rows] = await ChatMessageModel.update(
      {
        aiResponseStatus: "pending",
        aiResponseMessage: statusMessage,
        replyAttempt: this.sequelize.literal("reply_attempt + 1") as unknown as number,
        replyRequestedAt: new Date(),
      },
      { where: { id: messageId, aiResponseStatus: seen.status, replyAttempt: seen.attempt }, returning: true, transaction },
    );
    return count === 0 ? null : rows[0].replyAttempt;
  }

  async completeReply(messageId: string, statusMessage: string, transaction: Transaction): Promise<void> {
    await ChatMessageModel.update(
      { aiResponseStatus: "complete", aiResponseMessage: statusMessage },
      { where: { id: messageId }, transaction },
    );
  }

  /** Fails the reply if it is still pending as `attempt`; false when another attempt or outcome got there first. */
  async failPendingReply(messageId: string, attempt: number, statusMessage: string, transaction: Transaction): Promise<boolean> {
    const [count] = await ChatMessageModel.update(
      { aiResponseStatus: "failed", aiResponseMessage: statusMessage },
      { where: { id: messageId, aiResponseStatus: "pending", replyAttempt: attempt }, transaction },
    );
    return count > 0;
  }

  /** The user's chats, newest first, with the total in the same statement. */
  async page(userId: string, limit: number, offset: number): Promise<{ rows: ChatRow[]; total: number }> {
    const rows = await selectRows<ChatRow & { total: string }>(
      this.sequelize,
      `SELECT ${CHAT_COLUMNS}, count(*) OVER () AS total FROM chats c WHERE c.user_id = $1
        ORDER BY c.created_at DESC, c.id DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await selectRows<{ total: string }>(this.sequelize, "SELECT count(*) AS total FROM chats WHERE user_id = $1", [userId]);
    return { rows, total: Number(count.total) };
  }

  async byId(userId: string, id: string): Promise<ChatRow | null> {
    const [row] = await selectRows<ChatRow>(this.sequelize, `SELECT ${CHAT_COLUMNS} FROM chats c WHERE c.user_id = $1 AND c.id = $2`, [
      userId,
      id,
    ]);
    return row ?? null;
  }

  /** A page of a chat's messages, oldest first; none when the chat is not the user's. */
  messages(userId: string, chatId: string, limit: number, offset: number): Promise<MessageRow[]> {
    return selectRows<MessageRow>(
      this.sequelize,
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m JOIN chats c ON c.id = m.chat_id
        WHERE c.user_id = $1 AND m.chat_id = $2 ORDER BY m.created_at, m.id LIMIT $3 OFFSET $4`,
      [userId, chatId, limit, offset],
    );
  }

  /** One message, only if it is in one of the user's chats. */
  async messageOf(userId: string, messageId: string): Promise<MessageRow | null> {
    const [row] = await selectRows<MessageRow>(
      this.sequelize,
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m JOIN chats c ON c.id = m.chat_id WHERE c.user_id = $1 AND m.id = $2`,
      [userId, messageId],
    );
    return row ?? null;
  }

  async lastUserMessage(chatId: string): Promise<MessageRow | null> {
    const [row] = await selectRows<MessageRow>(
      this.sequelize,
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m WHERE m.chat_id = $1 AND m.role = 'user' ORDER BY m.created_at DESC, m.id DESC LIMIT 1`,
      [chatId],
    );
    return row ?? null;
  }

  /** Tool calls of many messages in one statement, grouped per message id in key order. */
  async toolCallsOf(messageIds: readonly string[]): Promise<ToolCallRow[][]> {
    const rows = messageIds.length
      ? await selectRows<ToolCallRow>(
          this.sequelize,
          `SELECT id, message_id AS "messageId", function_name AS "functionName", function_arguments AS "functionArguments",
                  function_result AS "functionResult", created_at AS "createdAt"
             FROM chat_tool_calls WHERE message_id = ANY($1::uuid[]) ORDER BY message_id, position`,
          [messageIds],
        )
      : [];
    const grouped = new Map<string, ToolCallRow[]>(messageIds.map((id) => [id, []]));
    for (const row of rows) grouped.get(row.messageId)?.push(row);
    return messageIds.map((id) => grouped.get(id)!);
  }

  async replyTarget(messageId: string): Promise<ReplyTarget | null> {
    const [row] = await selectRows<ReplyTarget>(
      this.sequelize,
      `SELECT ${MESSAGE_COLUMNS}, c.user_id AS "userId", u.family_id AS "familyId", f.currency, u.ai_enabled AS "aiEnabled"
         FROM chat_messages m JOIN chats c ON c.id = m.chat_id JOIN users u ON u.id = c.user_id JOIN families f ON f.id = u.family_id
        WHERE m.id = $1 AND m.role = 'user'`,
      [messageId],
    );
    return row ?? null;
  }

  /** The conversation up to and including one message, oldest first: what the model is shown. */
  history(chatId: string, upToMessageId: string): Promise<Array<{ role: MessageRole; content: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT m.role, m.content FROM chat_messages m
        WHERE m.chat_id = $1 AND (m.created_at, m.id) <= (SELECT created_at, id FROM chat_messages WHERE id = $2)
        ORDER BY m.created_at, m.id`,
      [chatId, upToMessageId],
    );
  }

  /** User messages whose reply has been pending for longer than `seconds`. */
  stalePending(seconds: number): Promise<Array<{ id: string; chatId: string; replyAttempt: number }>> {
    return selectRows(
      this.sequelize,
      `SELECT id, chat_id AS "chatId", reply_attempt AS "replyAttempt" FROM chat_messages
        WHERE ai_response_status = 'pending' AND reply_requested_at < now() - make_interval(secs => $1)
        ORDER BY reply_requested_at LIMIT 500`,
      [seconds],
    );
  }

  /** Deletes the assistant's reply to a user message (its tool calls go with it), before the reply is generated again. */
  async deleteReplyTo(messageId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`DELETE FROM chat_messages WHERE reply_to_message_id = $1`, { bind: [messageId], transaction });
  }

  /** Locks a user message whose reply is still pending under `attempt`; false when it is not. */
  async lockPending(messageId: string, attempt: number, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `SELECT id FROM chat_messages WHERE id = $1 AND ai_response_status = 'pending' AND reply_attempt = $2 FOR UPDATE`,
      [messageId, attempt],
      transaction,
    );
    return rows.length > 0;
  }
}
