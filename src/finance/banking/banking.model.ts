import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";
import type { ConnectionStatus } from "../../platform/events/catalogue";
import type { SyncState } from "./provider";

export type BankProvider = "lunchflow" | "simplefin";
export type { ConnectionStatus };
export type SyncRunStatus = "pending" | "syncing" | "completed" | "failed";

export class BankConnectionModel extends Model<InferAttributes<BankConnectionModel>, InferCreationAttributes<BankConnectionModel>> {
  declare id: string;
  declare familyId: string;
  declare provider: BankProvider;
  declare name: string;
  /** Sealed by SecretBox: the Lunch Flow API key or the SimpleFIN access URL. */
  declare credentials: string;
  declare baseUrl: CreationOptional<string | null>;
  declare status: CreationOptional<ConnectionStatus>;
  declare includePending: boolean;
  declare debugLogging: CreationOptional<boolean>;
  /** false: provider accounts seen for the first time wait, unlinked, for linkBankAccount. */
  declare autoCreateAccounts: CreationOptional<boolean>;
  declare lastError: CreationOptional<string | null>;
  declare lastSyncAt: CreationOptional<Date | null>;
  declare syncState: CreationOptional<SyncState>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    BankConnectionModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        provider: { type: DataTypes.TEXT, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        credentials: { type: DataTypes.TEXT, allowNull: false },
        baseUrl: DataTypes.TEXT,
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: "good" },
        includePending: { type: DataTypes.BOOLEAN, allowNull: false },
        debugLogging: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        autoCreateAccounts: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        lastError: DataTypes.TEXT,
        lastSyncAt: DataTypes.DATE,
        syncState: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "bank_connections" },
    );
  }
}

export class BankSyncRunModel extends Model<InferAttributes<BankSyncRunModel>, InferCreationAttributes<BankSyncRunModel>> {
  declare id: string;
  declare familyId: string;
  declare connectionId: string;
  declare status: SyncRunStatus;
  declare trigger: "manual" | "scheduled";
  declare createdCount: CreationOptional<number>;
  declare updatedCount: CreationOptional<number>;
  declare skippedCount: CreationOptional<number>;
  declare requestCount: CreationOptional<number>;
  declare errors: CreationOptional<string[]>;
  declare startedAt: CreationOptional<Date | null>;
  declare heartbeatAt: CreationOptional<Date | null>;
  declare finishedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    BankSyncRunModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        connectionId: { type: DataTypes.UUID, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false },
        trigger: { type: DataTypes.TEXT, allowNull: false },
        createdCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        updatedCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        skippedCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        requestCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        errors: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
        startedAt: DataTypes.DATE,
        heartbeatAt: DataTypes.DATE,
        finishedAt: DataTypes.DATE,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "bank_sync_runs" },
    );
  }
}
