import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

export const ASSET_TYPES = ["depository", "investment", "crypto", "property", "vehicle", "other_asset"] as const;
export const LIABILITY_TYPES = ["credit_card", "loan", "other_liability"] as const;
export const ACCOUNT_TYPES = [...ASSET_TYPES, ...LIABILITY_TYPES] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export type AccountClassification = "asset" | "liability";

export function classificationOf(type: AccountType): AccountClassification {
  return (LIABILITY_TYPES as readonly string[]).includes(type) ? "liability" : "asset";
}

export class AccountModel extends Model<InferAttributes<AccountModel>, InferCreationAttributes<AccountModel>> {
  declare id: string;
  declare familyId: string;
  declare name: string;
  declare accountType: AccountType;
  declare classification: AccountClassification;
  declare currency: string;
  declare balance: string;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    AccountModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        accountType: { type: DataTypes.TEXT, allowNull: false },
        classification: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.CHAR(3), allowNull: false },
        balance: { type: DataTypes.DECIMAL(19, 4), allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "accounts" },
    );
  }
}
