// lint-as: src/finance/tags/planted-model.service.ts
// expect: no-restricted-syntax
// A service touching a Sequelize model instead of its repository.
import { TagModel } from "./tag.model";

export const count = () => TagModel.count();
