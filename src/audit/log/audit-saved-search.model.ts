import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

/** A named audit filter of one administrator or auditor, reopened from the dashboard. */
export class AuditSavedSearchModel extends Model<InferAttributes<AuditSavedSearchModel>, InferCreationAttributes<AuditSavedSearchModel>> {
  declare id: string;
  declare ownerUserId: string;
  declare name: string;
  declare filter: Record<string, unknown>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    AuditSavedSearchModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        ownerUserId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        filter: { type: DataTypes.JSONB, allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "audit_saved_searches" },
    );
  }
}
