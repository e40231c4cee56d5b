import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

export class MerchantModel extends Model<InferAttributes<MerchantModel>, InferCreationAttributes<MerchantModel>> {
  declare id: string;
  declare familyId: string;
  declare name: string;
  declare color: CreationOptional<string | null>;
  declare logoUrl: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    MerchantModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        color: DataTypes.TEXT,
        logoUrl: DataTypes.TEXT,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "merchants" },
    );
  }
}
