/** What other features use of categories: the one entry into it (docs/architecture.md, feature entry files). */
export type { CategoryRepository, CategoryRow } from "./category.repository";
export { CategoryType } from "./category.type";
