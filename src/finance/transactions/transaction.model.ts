import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from "sequelize";

export class TransactionModel extends Model<InferAttributes<TransactionModel>, InferCreationAttributes<TransactionModel>> {
  declare id: string;
  declare familyId: string;
  declare accountId: string;
  declare date: string;
  /** Signed: positive is money out (expense), negative is money in (income), as upstream stores it. */
  declare amount: string;
  declare currency: string;
  declare name: string;
  declare notes: CreationOptional<string | null>;
  declare categoryId: CreationOptional<string | null>;
  declare merchantId: CreationOptional<string | null>;
  declare pending: CreationOptional<boolean>;
  declare externalId: CreationOptional<string | null>;
  declare source: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    TransactionModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        accountId: { type: DataTypes.UUID, allowNull: false },
        date: { type: DataTypes.DATEONLY, allowNull: false },
        amount: { type: DataTypes.DECIMAL(19, 4), allowNull: false },
        currency: { type: DataTypes.CHAR(3), allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        notes: DataTypes.TEXT,
        categoryId: DataTypes.UUID,
        merchantId: DataTypes.UUID,
        pending: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        externalId: DataTypes.TEXT,
        source: DataTypes.TEXT,
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: "transactions" },
    );
  }
}

export class TransactionTagModel extends Model<InferAttributes<TransactionTagModel>, InferCreationAttributes<TransactionTagModel>> {
  declare transactionId: string;
  declare tagId: string;

  static initialize(sequelize: Sequelize): void {
    TransactionTagModel.init(
      {
        transactionId: { type: DataTypes.UUID, primaryKey: true },
        tagId: { type: DataTypes.UUID, primaryKey: true },
      },
      { sequelize, tableName: "transaction_tags", timestamps: false },
    );
  }
}

export class TransferModel extends Model<InferAttributes<TransferModel>, InferCreationAttributes<TransferModel>> {
  declare id: string;
  declare familyId: string;
  declare outflowTransactionId: string;
  declare inflowTransactionId: string;
  declare createdAt: CreationOptional<Date>;

  static initialize(sequelize: Sequelize): void {
    TransferModel.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        familyId: { type: DataTypes.UUID, allowNull: false },
        outflowTransactionId: { type: DataTypes.UUID, allowNull: false },
        inflowTransactionId: { type: DataTypes.UUID, allowNull: false },
        createdAt: DataTypes.DATE,
      },
      { sequelize, tableName: "transfers", updatedAt: false },
    );
  }
}
