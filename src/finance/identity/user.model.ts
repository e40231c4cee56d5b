import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

import type { UserRole, UserStatus } from "../../platform/security/actor";

export type { UserStatus };

export class UserModel extends Model<InferAttributes<UserModel>, InferCreationAttributes<UserModel>> {
  declare id: string;
  declare familyId: string;
  declare email: string;
  declare name: CreationOptional<string | null>;
  declare role: UserRole;
  declare status: CreationOptional<UserStatus>;
  declare aiEnabled: CreationOptional<boolean>;
  /** scrypt hash for local sign-in; null for users who sign in by SSO or only use API keys. */
  declare passwordHash: CreationOptional<string | null>;
  declare failedLoginCount: CreationOptional<number>;
  declare lockedUntil: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    UserModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        email: { type: DataTypes.TEXT, allowNull: false },
        name: DataTypes.TEXT,
        role: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: "active" },
        aiEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        passwordHash: DataTypes.TEXT,
        failedLoginCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        lockedUntil: DataTypes.DATE,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "users" },
    );
  }
}
