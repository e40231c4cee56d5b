import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

/** A signed-in user's session: what a login opens and a logout, expiry or revocation ends. */
export class AuthSessionModel extends Model<InferAttributes<AuthSessionModel>, InferCreationAttributes<AuthSessionModel>> {
  declare id: string;
  declare userId: string;
  /** "password" for local sign-in; SSO adds its own. */
  declare method: string;
  declare provider: CreationOptional<string | null>;
  /** SHA-256 of the session cookie's value. */
  declare secretHash: Buffer;
  declare ipAddress: CreationOptional<string | null>;
  declare userAgent: CreationOptional<string | null>;
  /** The mobile or CLI client's `device` object, when it sent one. */
  declare device: CreationOptional<Record<string, unknown> | null>;
  declare expiresAt: Date;
  declare endedAt: CreationOptional<Date | null>;
  declare endReason: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    AuthSessionModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        method: { type: DataTypes.TEXT, allowNull: false },
        provider: DataTypes.TEXT,
        secretHash: { type: DataTypes.BLOB, allowNull: false },
        ipAddress: DataTypes.INET,
        userAgent: DataTypes.TEXT,
        device: DataTypes.JSONB,
        expiresAt: { type: DataTypes.DATE, allowNull: false },
        endedAt: DataTypes.DATE,
        endReason: DataTypes.TEXT,
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: "auth_sessions", updatedAt: false },
    );
  }
}

/** An access or refresh token of a session; only its hash is kept. */
export class AuthTokenModel extends Model<InferAttributes<AuthTokenModel>, InferCreationAttributes<AuthTokenModel>> {
  declare id: string;
  declare sessionId: string;
  declare kind: "access" | "refresh";
  declare tokenHash: Buffer;
  declare expiresAt: Date;
  /** When a refresh token was exchanged; presenting it again after that is reuse. */
  declare rotatedAt: CreationOptional<Date | null>;
  declare revokedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    AuthTokenModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        sessionId: { type: DataTypes.UUID, allowNull: false },
        kind: { type: DataTypes.TEXT, allowNull: false },
        tokenHash: { type: DataTypes.BLOB, allowNull: false },
        expiresAt: { type: DataTypes.DATE, allowNull: false },
        rotatedAt: DataTypes.DATE,
        revokedAt: DataTypes.DATE,
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: "auth_tokens", updatedAt: false },
    );
  }
}
