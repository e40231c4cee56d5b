import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

export const CATEGORY_CLASSIFICATIONS = ["income", "expense"] as const;
export type CategoryClassification = (typeof CATEGORY_CLASSIFICATIONS)[number];

export class CategoryModel extends Model<InferAttributes<CategoryModel>, InferCreationAttributes<CategoryModel>> {
  declare id: string;
  declare familyId: string;
  declare parentId: CreationOptional<string | null>;
  declare name: string;
  declare classification: CategoryClassification;
  declare color: string;
  declare icon: string;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    CategoryModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        parentId: DataTypes.UUID,
        name: { type: DataTypes.TEXT, allowNull: false },
        classification: { type: DataTypes.TEXT, allowNull: false },
        color: { type: DataTypes.TEXT, allowNull: false },
        icon: { type: DataTypes.TEXT, allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "categories" },
    );
  }
}
