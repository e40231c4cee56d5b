import type { Sequelize } from "sequelize";
import { BankAccountRepository } from "./bank-account.repository";
import { BankConnectionRepository } from "./bank-connection.repository";
import { BankImportRepository } from "./bank-import.repository";

/** The banking feature's repositories, one per kind of thing they hold. */
export type BankingRepositories = {
  connections: BankConnectionRepository;
  accounts: BankAccountRepository;
  imports: BankImportRepository;
};

export function createBankingRepositories(sequelize: Sequelize): BankingRepositories {
  return {
    connections: new BankConnectionRepository(sequelize),
    accounts: new BankAccountRepository(sequelize),
    imports: new BankImportRepository(sequelize),
  };
}
