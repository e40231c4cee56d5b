import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";
import type { UserRole } from "../../platform/security/actor";

/** Which ID token claims hold the e-mail, display name and groups (IdPs name them differently). */
export type ClaimMapping = { email: string; name: string; groups: string };

/** An IdP group that grants a role; the highest role any of the user's groups grants wins. */
export type RoleMapping = { group: string; role: UserRole };

/** An OpenID Connect identity provider an administrator configured. */
export class SsoProviderModel extends Model<InferAttributes<SsoProviderModel>, InferCreationAttributes<SsoProviderModel>> {
  declare id: string;
  declare slug: string;
  declare name: string;
  declare issuer: string;
  declare clientId: string;
  /** SecretBox ciphertext; the plaintext never leaves the OIDC client. */
  declare clientSecretEncrypted: string;
  declare scopes: string[];
  declare claimMapping: ClaimMapping;
  declare roleMappings: RoleMapping[];
  declare defaultRole: UserRole;
  declare jitProvisioning: boolean;
  declare allowedDomains: string[];
  /** The family just-in-time users join; null gives each of them a family of their own. */
  declare provisioningFamilyId: string | null;
  declare enabled: boolean;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    SsoProviderModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        slug: { type: DataTypes.TEXT, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        issuer: { type: DataTypes.TEXT, allowNull: false },
        clientId: { type: DataTypes.TEXT, allowNull: false },
        clientSecretEncrypted: { type: DataTypes.TEXT, allowNull: false },
        scopes: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
        claimMapping: { type: DataTypes.JSONB, allowNull: false },
        roleMappings: { type: DataTypes.JSONB, allowNull: false },
        defaultRole: { type: DataTypes.TEXT, allowNull: false },
        jitProvisioning: { type: DataTypes.BOOLEAN, allowNull: false },
        allowedDomains: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
        provisioningFamilyId: DataTypes.UUID,
        enabled: { type: DataTypes.BOOLEAN, allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "sso_providers" },
    );
  }
}

/** A connected account: the provider's subject identifier, tied to one of our users. */
export class SsoIdentityModel extends Model<InferAttributes<SsoIdentityModel>, InferCreationAttributes<SsoIdentityModel>> {
  declare id: string;
  declare userId: string;
  declare providerId: string;
  declare subject: string;
  declare email: string | null;
  declare createdAt: CreationOptional<Date>;
  declare lastLoginAt: CreationOptional<Date | null>;

  static initialize(sequelize: Sequelize): void {
    SsoIdentityModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        providerId: { type: DataTypes.UUID, allowNull: false },
        subject: { type: DataTypes.TEXT, allowNull: false },
        email: DataTypes.TEXT,
        createdAt: DataTypes.DATE,
        lastLoginAt: DataTypes.DATE,
      },
      { sequelize, tableName: "sso_identities", updatedAt: false },
    );
  }
}
