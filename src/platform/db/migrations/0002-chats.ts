import type { MigrationContext } from "./context";

/**
 * Chats belong to a user. A user message carries the state of its reply (pending → complete | failed)
 * and the attempt number that names its job; an assistant message points at the user message it
 * answers, and the unique index on that pointer is what makes "exactly one reply" hold even when two
 * workers race. Tool calls hang off the reply that made them and are written in the same transaction.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE chats (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      title text NOT NULL,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX chats_user_recent_idx ON chats (user_id, created_at DESC, id DESC);

    CREATE TABLE chat_messages (
      id uuid PRIMARY KEY,
      chat_id uuid NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('user', 'assistant')),
      content text NOT NULL,
      model text,
      ai_response_status text CHECK (ai_response_status IN ('pending', 'complete', 'failed')),
      ai_response_message text,
      reply_attempt integer NOT NULL DEFAULT 1,
      reply_requested_at timestamptz,
      reply_to_message_id uuid REFERENCES chat_messages (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CHECK ((role = 'user') = (ai_response_status IS NOT NULL)),
      CHECK ((role = 'assistant') = (reply_to_message_id IS NOT NULL))
    );
    CREATE INDEX chat_messages_chat_order_idx ON chat_messages (chat_id, created_at, id);
    CREATE UNIQUE INDEX chat_messages_one_reply_key ON chat_messages (reply_to_message_id);
    CREATE INDEX chat_messages_pending_idx ON chat_messages (reply_requested_at) WHERE ai_response_status = 'pending';

    CREATE TABLE chat_tool_calls (
      id uuid PRIMARY KEY,
      message_id uuid NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
      position integer NOT NULL,
      function_name text NOT NULL,
      function_arguments jsonb NOT NULL CHECK (jsonb_typeof(function_arguments) = 'object'),
      function_result jsonb NOT NULL CHECK (jsonb_typeof(function_result) = 'object'),
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (message_id, position)
    );
  `);
}
