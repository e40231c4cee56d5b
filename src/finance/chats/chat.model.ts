import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";
import type { ReplyStatus } from "../../platform/events/catalogue";

export type { ReplyStatus };
export const REPLY_STATUSES = ["pending", "complete", "failed"] as const satisfies readonly ReplyStatus[];
export type MessageRole = "user" | "assistant";

export class ChatModel extends Model<InferAttributes<ChatModel>, InferCreationAttributes<ChatModel>> {
  declare id: string;
  declare userId: string;
  declare title: string;
  declare error: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    ChatModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        title: { type: DataTypes.TEXT, allowNull: false },
        error: DataTypes.TEXT,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "chats" },
    );
  }
}

export class ChatMessageModel extends Model<InferAttributes<ChatMessageModel>, InferCreationAttributes<ChatMessageModel>> {
  declare id: string;
  declare chatId: string;
  declare role: MessageRole;
  declare content: string;
  declare model: CreationOptional<string | null>;
  declare aiResponseStatus: CreationOptional<ReplyStatus | null>;
  declare aiResponseMessage: CreationOptional<string | null>;
  declare replyAttempt: CreationOptional<number>;
  declare replyRequestedAt: CreationOptional<Date | null>;
  declare replyToMessageId: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    ChatMessageModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        chatId: { type: DataTypes.UUID, allowNull: false },
        role: { type: DataTypes.TEXT, allowNull: false },
        content: { type: DataTypes.TEXT, allowNull: false },
        model: DataTypes.TEXT,
        aiResponseStatus: DataTypes.TEXT,
        aiResponseMessage: DataTypes.TEXT,
        replyAttempt: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
        replyRequestedAt: DataTypes.DATE,
        replyToMessageId: DataTypes.UUID,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "chat_messages" },
    );
  }
}

export class ToolCallModel extends Model<InferAttributes<ToolCallModel>, InferCreationAttributes<ToolCallModel>> {
  declare id: string;
  declare messageId: string;
  declare position: number;
  declare functionName: string;
  declare functionArguments: Record<string, unknown>;
  declare functionResult: Record<string, unknown>;
  declare createdAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    ToolCallModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        messageId: { type: DataTypes.UUID, allowNull: false },
        position: { type: DataTypes.INTEGER, allowNull: false },
        functionName: { type: DataTypes.TEXT, allowNull: false },
        functionArguments: { type: DataTypes.JSONB, allowNull: false },
        functionResult: { type: DataTypes.JSONB, allowNull: false },
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: "chat_tool_calls", updatedAt: false },
    );
  }
}
