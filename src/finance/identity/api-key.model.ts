import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

import type { ApiKeyScope } from "../../platform/security/actor";

export class ApiKeyModel extends Model<InferAttributes<ApiKeyModel>, InferCreationAttributes<ApiKeyModel>> {
  declare id: string;
  declare userId: string;
  declare name: string;
  /** SHA-256 of the key; the plaintext is shown once and never stored. */
  declare keyHash: Buffer;
  /** First characters of the key, so a user can tell keys apart in a list. */
  declare displayPrefix: string;
  declare scope: ApiKeyScope;
  declare lastUsedAt: CreationOptional<Date | null>;
  declare expiresAt: CreationOptional<Date | null>;
  declare revokedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    ApiKeyModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        keyHash: { type: DataTypes.BLOB, allowNull: false },
        displayPrefix: { type: DataTypes.TEXT, allowNull: false },
        scope: { type: DataTypes.TEXT, allowNull: false },
        lastUsedAt: DataTypes.DATE,
        expiresAt: DataTypes.DATE,
        revokedAt: DataTypes.DATE,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "api_keys" },
    );
  }
}
